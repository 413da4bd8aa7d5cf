/// Which way a packet travelled, seen from the host.
public enum CaptureDirection: Hashable, Sendable {
    /// Host to controller (HCI commands, outgoing ACL data).
    case sent
    /// Controller to host (HCI events, incoming ACL data).
    case received
}

/// The HCI packet indicator (the H4 / UART type byte, Core spec Vol 4 Part A 2).
public struct HCIPacketType: Hashable, Sendable, CustomStringConvertible {
    /// The indicator byte.
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// HCI Command packet (0x01).
    public static let command = HCIPacketType(rawValue: 0x01)
    /// HCI ACL Data packet (0x02).
    public static let acl = HCIPacketType(rawValue: 0x02)
    /// HCI Synchronous (SCO) Data packet (0x03).
    public static let sco = HCIPacketType(rawValue: 0x03)
    /// HCI Event packet (0x04).
    public static let event = HCIPacketType(rawValue: 0x04)
    /// HCI ISO Data packet (0x05).
    public static let iso = HCIPacketType(rawValue: 0x05)

    public var description: String {
        switch rawValue {
        case 0x01: "command"
        case 0x02: "acl"
        case 0x03: "sco"
        case 0x04: "event"
        case 0x05: "iso"
        default: "unknown(0x\(String(rawValue, radix: 16)))"
        }
    }
}
