import AdapterKit
import BuiltinAdapters
import Foundation
import BlueZTransport

/// The daemon's device backends, built from the registry.
enum DaemonBackends {
    static func usb(options: [String: String], timeZone: TimeZone) -> [any DeviceBackend] {
        [USBBackend(adapters: BuiltinAdapters.usb, options: options, timeZone: timeZone)]
    }

    static func bluetooth(controller: UInt16, timeZone: TimeZone, onceListen: Duration) -> [any DeviceBackend] {
        [BluetoothBackend(adapters: BuiltinAdapters.bluetooth, link: .controller(controller),
                          controllerName: "hci\(controller)", timeZone: timeZone, onceListen: onceListen)]
    }
}
