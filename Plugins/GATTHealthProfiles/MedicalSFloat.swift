/// An IEEE 11073-20601 special value: a field that carries no number.
public enum MedicalFloatSpecial: String, Hashable, Sendable, CustomStringConvertible {
    /// Not a number: the device has no valid value.
    case notANumber = "NaN"
    /// Not at this resolution: the value cannot be represented in the field.
    case notAtThisResolution = "NRes"
    /// Positive infinity (over range).
    case positiveInfinity = "+INF"
    /// Negative infinity (under range).
    case negativeInfinity = "-INF"
    /// Reserved for future use by the standard.
    case reserved = "reserved"

    public var description: String { rawValue }
}

/// The 16-bit IEEE 11073-20601 SFLOAT used by blood pressure, glucose and pulse oximetry:
/// a signed 4-bit decimal exponent (bits 15–12) over a signed 12-bit mantissa (bits 11–0),
/// value = mantissa × 10^exponent. Both parts are two's complement, with no bias.
///
/// Five mantissas with exponent 0 are special values; for them ``value`` is nil ("no value",
/// never a number).
public struct MedicalSFloat: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bits as read little-endian from the wire.
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The decimal exponent, −8…7.
    public var exponent: Int { Int(Int16(bitPattern: rawValue) >> 12) }

    /// The mantissa, −2048…2047.
    public var mantissa: Int { Int(Int16(bitPattern: rawValue << 4) >> 4) }

    /// The special value this encodes, if any: 0x07FF NaN, 0x0800 NRes, 0x07FE +INF,
    /// 0x0802 −INF, 0x0801 reserved.
    public var special: MedicalFloatSpecial? {
        switch rawValue {
        case 0x07FF: .notANumber
        case 0x0800: .notAtThisResolution
        case 0x07FE: .positiveInfinity
        case 0x0802: .negativeInfinity
        case 0x0801: .reserved
        default: nil
        }
    }

    /// The number, or nil for a special value.
    public var value: Double? { scaled(byPowerOfTen: 0) }

    /// The number × 10^`power`, or nil for a special value. Computed from the decimal parts in
    /// one rounding step, so `98 %` scaled by −2 is exactly the double nearest 0.98.
    public func scaled(byPowerOfTen power: Int) -> Double? {
        guard special == nil else { return nil }
        return decimalValue(mantissa: mantissa, exponent: exponent + power)
    }

    public var description: String {
        if let special { return special.rawValue }
        return "\(mantissa)e\(exponent)"
    }
}

/// mantissa × 10^exponent with a single rounding where the power of ten is exact.
func decimalValue(mantissa: Int, exponent: Int) -> Double {
    if exponent >= 0 { return Double(mantissa) * powerOfTen(exponent) }
    return Double(mantissa) / powerOfTen(-exponent)
}

/// 10^n for n ≥ 0; exact up to 10^22, the largest power of ten a double holds exactly.
private func powerOfTen(_ n: Int) -> Double {
    var result = 1.0
    for _ in 0..<n { result *= 10 }
    return result
}
