import AdapterKit
import BuiltinAdapters
import ExternalAdapters
import Foundation
import Logging

/// The adapters ingestd uses, built-in and external, in the order a router tries them: the
/// usable external ones first (a plugin the user installed for a device is what they want used
/// for it, even where a built-in adapter would also match), then the built-in ones.
public enum AdapterCatalogue {
    /// The built-in adapters' descriptors, Bluetooth then USB.
    public static var builtInDescriptors: [AdapterDescriptor] {
        BuiltinAdapters.bluetooth.map(\.descriptor) + BuiltinAdapters.usb.map(\.descriptor)
    }

    /// Ids an external adapter may not take (they would write under a built-in adapter's grants).
    public static var builtInIDs: Set<String> { Set(builtInDescriptors.map(\.id)) }

    /// The process environment with `environment` on top, and plugin logs going to `logger`.
    public static func configuration(environment: [String: String], logger: Logger) -> ExternalAdapterConfiguration {
        var configuration = ExternalAdapterConfiguration()
        configuration.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        configuration.log = { entry in
            logger.log(level: entry.level, "\(entry.description)")
        }
        return configuration
    }

    /// Finds and describes the plugins of `directories` (or the default directories of `environment`).
    public static func loadExternal(directories: [String], environment: [String: String],
                                    configuration: ExternalAdapterConfiguration) -> ExternalAdapterCatalogue {
        ExternalAdapterCatalogue.load(directories: ExternalAdapterDirectories.resolve(directories, environment: environment),
                                      reservedIDs: builtInIDs, configuration: configuration)
    }

    /// The Bluetooth adapters for a router: the usable external ones, then the built-in ones.
    public static func bluetoothAdapters(_ catalogue: ExternalAdapterCatalogue) -> [any BLEAdapter] {
        catalogue.adapters.map { $0 as any BLEAdapter } + BuiltinAdapters.bluetooth
    }

    /// The USB adapters: the usable external ones, then the built-in ones.
    public static func usbAdapters(_ catalogue: ExternalAdapterCatalogue) -> [any USBAdapter] {
        catalogue.adapters.map { $0 as any USBAdapter } + BuiltinAdapters.usb
    }
}
