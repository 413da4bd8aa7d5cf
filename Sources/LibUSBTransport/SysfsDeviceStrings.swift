import Foundation

/// The manufacturer, product and serial strings Linux keeps in sysfs for every USB device
/// (`/sys/bus/usb/devices/<bus>-<port.port...>/{manufacturer,product,serial}`). Reading them
/// needs no access to the device node and sends nothing to the device.
struct SysfsDeviceStrings: Sendable, Equatable {
    var manufacturer: String?
    var product: String?
    var serialNumber: String?

    /// The sysfs name of a device: `usb<bus>` for a root hub, else `<bus>-<port>[.<port>...]`.
    static func deviceName(bus: UInt8, portNumbers: [UInt8]) -> String {
        if portNumbers.isEmpty { return "usb\(bus)" }
        return "\(bus)-" + portNumbers.map(String.init).joined(separator: ".")
    }

    /// The strings of the device, or nil when sysfs has no directory for it (not Linux, sysfs not
    /// mounted, the device already gone).
    static func read(bus: UInt8, portNumbers: [UInt8], root: String = "/sys/bus/usb/devices") -> SysfsDeviceStrings? {
        let directory = root + "/" + deviceName(bus: bus, portNumbers: portNumbers)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return nil
        }
        func attribute(_ name: String) -> String? {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { return nil }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        }
        return SysfsDeviceStrings(manufacturer: attribute("manufacturer"), product: attribute("product"),
                                  serialNumber: attribute("serial"))
    }
}
