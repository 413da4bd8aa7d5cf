/// A USB device coming or going, as the host's hotplug mechanism reports it.
public enum USBHotplugEvent: Hashable, Sendable, CustomStringConvertible {
    /// A device appeared; its description comes from its descriptors (strings when readable).
    case arrived(USBDeviceDescription)
    /// The device at this bus number and address went away. Addresses are reused after a while,
    /// so this refers to the device that arrived last at that place.
    case left(bus: UInt8, address: UInt8)

    public var description: String {
        switch self {
        case .arrived(let device): "arrived \(device)"
        case .left(let bus, let address): "left bus \(Self.threeDigits(bus)) address \(Self.threeDigits(address))"
        }
    }

    private static func threeDigits(_ value: UInt8) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text
    }
}
