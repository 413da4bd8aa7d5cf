import AdapterKit
import Foundation
import BlueZTransport

/// The daemon's device backends over the real transports.
public enum DaemonBackends {
    public static func usb(adapters: [any USBAdapter], options: [String: String], timeZone: TimeZone,
                           onceListen: Duration) -> [any DeviceBackend] {
        [USBBackend(adapters: adapters, options: options, timeZone: timeZone, onceListen: onceListen)]
    }

    public static func bluetooth(adapters: [any Adapter], controller: UInt16, timeZone: TimeZone,
                          onceListen: Duration) -> [any DeviceBackend] {
        [BluetoothBackend(adapters: adapters, link: .controller(controller),
                          controllerName: "hci\(controller)", timeZone: timeZone, onceListen: onceListen)]
    }
}
