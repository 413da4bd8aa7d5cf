/// A 48-bit Bluetooth device address, printed and parsed as `AA:BB:CC:DD:EE:FF`
/// (most significant byte first, the order people read on labels and in `bluetoothctl`).
///
/// On the air and in HCI packets the six bytes travel least significant first; use
/// ``init(littleEndianBytes:)`` for bytes taken from a packet.
public struct BLEAddress: Hashable, Comparable, Sendable, CustomStringConvertible, LosslessStringConvertible {
    /// The address as a 48-bit number; the first printed byte is bits 47...40.
    public let rawValue: UInt64

    /// Creates an address from a 48-bit number; returns nil if bits above 47 are set.
    public init?(rawValue: UInt64) {
        guard rawValue >> 48 == 0 else { return nil }
        self.rawValue = rawValue
    }

    /// Creates an address from the low 48 bits of a number (higher bits are dropped).
    public init(truncatingIfNeeded rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Creates an address from six bytes in display order (`AA` first); nil unless exactly six.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        self.rawValue = value
    }

    /// Creates an address from six bytes in HCI wire order (least significant first); nil unless exactly six.
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes {
            value |= UInt64(byte) << shift
            shift += 8
        }
        self.rawValue = value
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (hex digits in either case; `-` is accepted as separator too).
    public init?(_ description: String) {
        let parts = description.split(separator: ":", omittingEmptySubsequences: false)
        let groups = parts.count == 6 ? parts : description.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.count == 6 else { return nil }
        var value: UInt64 = 0
        for group in groups {
            guard group.count == 2, let byte = UInt8(group, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.rawValue = value
    }

    /// The six bytes in display order.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> UInt64(40 - 8 * $0)) }
    }

    /// The six bytes in HCI wire order (least significant first).
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> UInt64(8 * $0)) }
    }

    public var description: String {
        let digits: StaticString = "0123456789ABCDEF"
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 17) { text in
            for index in 0..<6 {
                let byte = Int(truncatingIfNeeded: rawValue >> UInt64(40 - 8 * index)) & 0xFF
                if index > 0 { text[3 * index - 1] = UInt8(ascii: ":") }
                text[3 * index] = digits.utf8Start[byte >> 4]
                text[3 * index + 1] = digits.utf8Start[byte & 0x0F]
            }
            return String(decoding: UnsafeBufferPointer(text), as: UTF8.self)
        }
    }

    public static func < (lhs: BLEAddress, rhs: BLEAddress) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension BLEAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = BLEAddress(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a Bluetooth address (AA:BB:CC:DD:EE:FF): \(text)")
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The kind of a Bluetooth LE address as HCI reports it (Core spec, Vol 4 Part E, 7.7.65.2).
public struct BLEAddressType: Hashable, Sendable, CustomStringConvertible {
    /// The HCI code: 0 public, 1 random, 2 public identity, 3 random (static) identity, 0xFF anonymous.
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Public device address (IEEE-assigned).
    public static let `public` = BLEAddressType(rawValue: 0)
    /// Random device address (static or private).
    public static let random = BLEAddressType(rawValue: 1)
    /// Public identity address (resolved from a resolvable private address by the controller).
    public static let publicIdentity = BLEAddressType(rawValue: 2)
    /// Random static identity address (resolved by the controller).
    public static let randomIdentity = BLEAddressType(rawValue: 3)
    /// No address provided (anonymous extended advertisement).
    public static let anonymous = BLEAddressType(rawValue: 0xFF)

    /// True for random and random-identity addresses.
    public var isRandom: Bool { rawValue == 1 || rawValue == 3 }

    public var description: String {
        switch rawValue {
        case 0: "public"
        case 1: "random"
        case 2: "public-identity"
        case 3: "random-identity"
        case 0xFF: "anonymous"
        default: "unknown(\(rawValue))"
        }
    }
}
