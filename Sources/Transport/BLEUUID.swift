/// A Bluetooth UUID. 16- and 32-bit UUIDs are aliases inside the Bluetooth base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`, so every value is kept as its 128-bit form and
/// `BLEUUID(0x2A9D) == BLEUUID("00002A9D-0000-1000-8000-00805F9B34FB")`.
///
/// Printed as four hex digits (`2A9D`) when it is a 16-bit alias and in the full
/// 128-bit form (`8-4-4-4-12`, upper case) otherwise.
public struct BLEUUID: Hashable, Comparable, Sendable, CustomStringConvertible, LosslessStringConvertible {
    /// The first 64 bits of the 128-bit form (as printed, left to right).
    public let high: UInt64
    /// The last 64 bits of the 128-bit form.
    public let low: UInt64

    /// The low half of the Bluetooth base UUID (`8000-00805F9B34FB`).
    public static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The high half of the Bluetooth base UUID without an alias (`00000000-0000-1000`).
    public static let baseHigh: UInt64 = 0x0000_0000_0000_1000

    /// Creates a UUID from its 128-bit value split in two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a 16-bit alias inside the base UUID.
    public init(_ shortValue: UInt16) {
        self.init(high: UInt64(shortValue) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// Creates a 32-bit alias inside the base UUID.
    public init(uint32 value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// Creates a UUID from its wire form (least significant byte first), 2, 4 or 16 bytes long;
    /// nil for any other length.
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 2, 4:
            var value: UInt32 = 0
            var shift: UInt32 = 0
            for byte in bytes {
                value |= UInt32(byte) << shift
                shift += 8
            }
            self.init(uint32: value)
        case 16:
            var high: UInt64 = 0
            var low: UInt64 = 0
            for (index, byte) in bytes.enumerated() {
                if index < 8 {
                    low |= UInt64(byte) << UInt64(8 * index)
                } else {
                    high |= UInt64(byte) << UInt64(8 * (index - 8))
                }
            }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// Parses `2A9D` (16-bit), `0000FE95` (32-bit) or the full `8-4-4-4-12` form, any case.
    public init?(_ description: String) {
        let hex = description.filter { $0 != "-" }
        switch hex.count {
        case 4:
            guard let value = UInt16(hex, radix: 16) else { return nil }
            self.init(value)
        case 8:
            guard description.count == 8, let value = UInt32(hex, radix: 16) else { return nil }
            self.init(uint32: value)
        case 32:
            let dashes = description.enumerated().filter { $0.element == "-" }.map(\.offset)
            guard description.count == 36, dashes == [8, 13, 18, 23] else { return nil }
            guard let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16)
            else { return nil }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// True when the UUID lies inside the Bluetooth base UUID (a 16- or 32-bit alias).
    public var isBaseUUIDAlias: Bool { low == Self.baseLow && high & 0xFFFF_FFFF == Self.baseHigh }

    /// The 16-bit alias, if this UUID is one.
    public var shortValue: UInt16? {
        guard isBaseUUIDAlias, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit alias, if this UUID lies inside the base UUID (16-bit aliases included).
    public var uint32Value: UInt32? {
        guard isBaseUUIDAlias else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The 16 bytes of the 128-bit form in wire order (least significant first).
    public var littleEndianBytes: [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        for shift in stride(from: UInt64(0), to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: low >> shift)) }
        for shift in stride(from: UInt64(0), to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: high >> shift)) }
        return bytes
    }

    /// The shortest wire form: 2 bytes for a 16-bit alias, 4 for a 32-bit alias, else 16.
    public var shortestLittleEndianBytes: [UInt8] {
        if let short = shortValue { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        if let value = uint32Value { return (0..<4).map { UInt8(truncatingIfNeeded: value >> UInt32(8 * $0)) } }
        return littleEndianBytes
    }

    /// The full `8-4-4-4-12` upper-case form, whatever the alias size.
    public var uuidString: String {
        let hex = Self.hex(high, digits: 16) + Self.hex(low, digits: 16)
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    public var description: String {
        if let short = shortValue { return Self.hex(UInt64(short), digits: 4) }
        return uuidString
    }

    public static func < (lhs: BLEUUID, rhs: BLEUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension BLEUUID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = BLEUUID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a Bluetooth UUID: \(text)")
        }
        self = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension BLEUUID {
    /// GATT Primary Service declaration (0x2800).
    public static let primaryService = BLEUUID(0x2800)
    /// GATT Secondary Service declaration (0x2801).
    public static let secondaryService = BLEUUID(0x2801)
    /// GATT Include declaration (0x2802).
    public static let include = BLEUUID(0x2802)
    /// GATT Characteristic declaration (0x2803).
    public static let characteristic = BLEUUID(0x2803)
    /// Client Characteristic Configuration descriptor (0x2902).
    public static let clientCharacteristicConfiguration = BLEUUID(0x2902)
}
