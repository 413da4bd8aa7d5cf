/// The 32-bit IEEE 11073-20601 FLOAT used by the Health Thermometer: a signed 8-bit decimal
/// exponent (bits 31–24) over a signed 24-bit mantissa (bits 23–0), value = mantissa × 10^exponent,
/// both two's complement without bias.
///
/// Five mantissas with exponent 0 are special values; for them ``value`` is nil.
public struct MedicalFloat: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bits as read little-endian from the wire.
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The decimal exponent, −128…127.
    public var exponent: Int { Int(Int32(bitPattern: rawValue) >> 24) }

    /// The mantissa, −8388608…8388607.
    public var mantissa: Int { Int(Int32(bitPattern: rawValue << 8) >> 8) }

    /// The special value this encodes, if any: 0x007FFFFF NaN, 0x00800000 NRes,
    /// 0x007FFFFE +INF, 0x00800002 −INF, 0x00800001 reserved.
    public var special: MedicalFloatSpecial? {
        switch rawValue {
        case 0x007F_FFFF: .notANumber
        case 0x0080_0000: .notAtThisResolution
        case 0x007F_FFFE: .positiveInfinity
        case 0x0080_0002: .negativeInfinity
        case 0x0080_0001: .reserved
        default: nil
        }
    }

    /// The number, or nil for a special value.
    public var value: Double? {
        guard special == nil else { return nil }
        return decimalValue(mantissa: mantissa, exponent: exponent)
    }

    public var description: String {
        if let special { return special.rawValue }
        return "\(mantissa)e\(exponent)"
    }
}
