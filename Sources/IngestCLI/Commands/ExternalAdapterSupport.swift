import AdapterKit
import ArgumentParsing
import BuiltinAdapters
import ExternalAdapters
import Foundation
import HealthModel
import Logging

/// External adapters for the commands that use adapters (`run`, `decode`, `replay`, `adapters`):
/// loading the plugin directories with logging into the command's
/// logger, and the adapter list for the router (external first: a plugin the user installed for a
/// device is what they want used for it, even where a built-in adapter would also match).
enum ExternalAdapterSupport {
    /// The built-in adapters' descriptors, Bluetooth then USB.
    static var builtInDescriptors: [AdapterDescriptor] {
        BuiltinAdapters.bluetooth.map(\.descriptor) + BuiltinAdapters.usb.map(\.descriptor)
    }

    /// Ids an external adapter may not take (they would write under a built-in adapter's grants).
    static var builtInIDs: Set<String> { Set(builtInDescriptors.map(\.id)) }

    /// The process environment with the command's on top, and plugin logs going to the logger.
    static func configuration(context: CommandContext) -> ExternalAdapterConfiguration {
        let logger = context.logger
        var configuration = ExternalAdapterConfiguration()
        configuration.environment = ProcessInfo.processInfo.environment.merging(context.environment) { $1 }
        configuration.log = { entry in
            logger.log(level: entry.level, "\(entry.description)")
        }
        return configuration
    }

    /// Finds and describes the plugins of `directories` (or the default directories).
    static func loadCatalogue(directories: [String], context: CommandContext,
                              configuration: ExternalAdapterConfiguration? = nil) -> ExternalAdapterCatalogue {
        ExternalAdapterCatalogue.load(directories: ExternalAdapterDirectories.resolve(directories, environment: context.environment),
                                      reservedIDs: builtInIDs,
                                      configuration: configuration ?? self.configuration(context: context))
    }

    /// The Bluetooth adapters for a router: the usable external ones, then the built-in ones.
    static func bluetoothAdapters(_ catalogue: ExternalAdapterCatalogue) -> [any Adapter] {
        catalogue.adapters.map { $0 as any Adapter } + BuiltinAdapters.bluetooth
    }

    /// The USB adapters: the usable external ones, then the built-in ones.
    static func usbAdapters(_ catalogue: ExternalAdapterCatalogue) -> [any USBAdapter] {
        catalogue.adapters.map { $0 as any USBAdapter } + BuiltinAdapters.usb
    }
}
