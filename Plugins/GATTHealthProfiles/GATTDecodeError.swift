/// Why a GATT health characteristic value could not be decoded. Every case names the field
/// (as the specification calls it, in kebab case) and its byte offset inside the value.
public enum GATTDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The value ended inside `field`: it starts at `offset`, needs `needed` bytes, `have` were left.
    case tooShort(field: String, offset: Int, needed: Int, have: Int)
    /// The flags field (at offset 0) has bits set that the specification reserves; `reservedBits`
    /// is the characteristic's reserved mask. Such bits could announce fields of unknown size, so
    /// nothing after them can be trusted.
    case reservedFlags(UInt16, reservedBits: UInt16)
    /// The device marked `field` as "measurement unsuccessful" (0xFFFF).
    case unsuccessfulMeasurement(field: String, offset: Int)
    /// `field` holds an IEEE 11073 special value (NaN, NRes, ±INF, reserved) where a number is needed.
    case specialValue(field: String, offset: Int, value: MedicalFloatSpecial)
    /// A Date Time field with a component out of range (month 13, day 32, hour 24, …).
    case invalidDateTime(field: String, offset: Int, bytes: [UInt8])

    /// The stable reason key used for adapter rejections.
    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .reservedFlags: "reserved-flags"
        case .unsuccessfulMeasurement: "unsuccessful-measurement"
        case .specialValue: "special-value"
        case .invalidDateTime: "invalid-timestamp"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let field, let offset, let needed, let have):
            "\(field) at offset \(offset) needs \(needed) byte\(needed == 1 ? "" : "s"), \(have) left"
        case .reservedFlags(let flags, let reservedBits):
            "flags 0x\(hex(flags)) set reserved bits 0x\(hex(flags & reservedBits))"
        case .unsuccessfulMeasurement(let field, let offset):
            "\(field) at offset \(offset) is 0xFFFF (measurement unsuccessful)"
        case .specialValue(let field, let offset, let value):
            "\(field) at offset \(offset) is \(value), not a number"
        case .invalidDateTime(let field, let offset, let bytes):
            "\(field) at offset \(offset) is not a valid date and time: "
                + bytes.map { byte in hex(byte) }.joined(separator: " ")
        }
    }
}

/// Lower-case hex, two digits per byte.
private func hex(_ value: some FixedWidthInteger) -> String {
    let text = String(value, radix: 16)
    let width = value.bitWidth / 4
    return String(repeating: "0", count: max(0, width - text.count)) + text
}
