import Foundation

/// A device's battery charge as the device last said it (a thermometer's advertisement, a
/// strap's battery level): not a health sample, kept per source and device so a person can see
/// which device needs a new cell.
public struct DeviceBattery: Sendable, Equatable, Hashable {
    /// The source whose samples the device writes (`ble:…` for a Bluetooth device).
    public var source: String
    public var device: Device
    /// The charge in percent, 0–100.
    public var percent: Int
    /// When the device said it.
    public var at: Date

    public init(source: String, device: Device, percent: Int, at: Date) {
        self.source = source
        self.device = device
        self.percent = percent
        self.at = at
    }

    /// What names the device among a source's devices: its local identifier (a Bluetooth
    /// address), else its name, else "".
    public var deviceKey: String { device.localIdentifier ?? device.name ?? "" }

    /// Whether `percent` is a charge (0–100); devices use other bytes for "unknown".
    public static func isCharge(_ percent: Int) -> Bool { (0...100).contains(percent) }
}
