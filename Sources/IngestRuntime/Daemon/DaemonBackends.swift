import AdapterKit
import Foundation

/// The daemon's device backends over the real transports.
public enum DaemonBackends {
    public static func usb(adapters: [any USBAdapter], options: [String: String], timeZone: TimeZone,
                           onceListen: Duration, pins: AdapterPins = AdapterPins()) -> [any DeviceBackend] {
        var backend = USBBackend(adapters: adapters, options: options, timeZone: timeZone, onceListen: onceListen)
        backend.pins = pins
        return [backend]
    }

    public static func bluetooth(adapters: [any BLEAdapter], controller: UInt16, timeZone: TimeZone,
                                 onceListen: Duration, pins: AdapterPins = AdapterPins(),
                                 options: [String: String] = [:], keys: AdvertisementKeys = AdvertisementKeys()) -> [any DeviceBackend] {
        var backend = BluetoothBackend(adapters: adapters, link: .controller(controller),
                                       controllerName: "hci\(controller)", timeZone: timeZone, onceListen: onceListen)
        backend.pins = pins.bluetooth
        backend.options = options
        backend.keys = keys
        return [backend]
    }
}
