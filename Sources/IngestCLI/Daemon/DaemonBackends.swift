import AdapterKit
import Foundation
import BlueZTransport

/// The daemon's device backends over the real transports.
enum DaemonBackends {
    static func usb(adapters: [any USBAdapter], options: [String: String], timeZone: TimeZone,
                    pins: AdapterPins = AdapterPins()) -> [any DeviceBackend] {
        [USBBackend(adapters: adapters, options: options, timeZone: timeZone, pins: pins)]
    }

    static func bluetooth(adapters: [any Adapter], controller: UInt16, timeZone: TimeZone,
                          onceListen: Duration, pins: AdapterPins = AdapterPins(),
                          options: [String: String] = [:]) -> [any DeviceBackend] {
        var backend = BluetoothBackend(adapters: adapters, link: .controller(controller),
                                       controllerName: "hci\(controller)", timeZone: timeZone, onceListen: onceListen)
        backend.pins = pins.bluetooth
        backend.options = options
        return [backend]
    }
}
