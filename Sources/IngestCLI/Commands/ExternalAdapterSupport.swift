import AdapterKit
import ArgumentParsing
import ExternalAdapters
import IngestRuntime

/// External adapters for the commands that use adapters (`run`, `decode`, `replay`, `adapters`):
/// the command's environment and logger handed to the runtime's ``AdapterCatalogue``, which
/// composes the adapter lists (external first).
enum ExternalAdapterSupport {
    /// The built-in adapters' descriptors, Bluetooth then USB.
    static var builtInDescriptors: [AdapterDescriptor] { AdapterCatalogue.builtInDescriptors }

    /// The process environment with the command's on top, and plugin logs going to the logger.
    static func configuration(context: CommandContext) -> ExternalAdapterConfiguration {
        AdapterCatalogue.configuration(environment: context.environment, logger: context.logger)
    }

    /// Finds and describes the plugins of `directories` (or the default directories).
    static func loadCatalogue(directories: [String], context: CommandContext,
                              configuration: ExternalAdapterConfiguration? = nil) -> ExternalAdapterCatalogue {
        AdapterCatalogue.loadExternal(directories: directories, environment: context.environment,
                                      configuration: configuration ?? self.configuration(context: context))
    }

    /// The Bluetooth adapters for a router: the usable external ones, then the built-in ones.
    static func bluetoothAdapters(_ catalogue: ExternalAdapterCatalogue) -> [any BLEAdapter] {
        AdapterCatalogue.bluetoothAdapters(catalogue)
    }

    /// The USB adapters: the usable external ones, then the built-in ones.
    static func usbAdapters(_ catalogue: ExternalAdapterCatalogue) -> [any USBAdapter] {
        AdapterCatalogue.usbAdapters(catalogue)
    }
}
