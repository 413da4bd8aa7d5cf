/// A cursor over a characteristic value: reads little-endian fields in order and reports a
/// short value with the field name and offset.
struct GATTByteReader {
    let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Bytes not yet read.
    var remaining: Int { bytes.count - offset }

    /// Takes `count` bytes for `field`, or throws `.tooShort` naming it.
    mutating func take(_ count: Int, field: String) throws(GATTDecodeError) -> ArraySlice<UInt8> {
        guard remaining >= count else {
            throw .tooShort(field: field, offset: offset, needed: count, have: remaining)
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func uint8(_ field: String) throws(GATTDecodeError) -> UInt8 {
        try littleEndian(1, field: field)
    }

    mutating func uint16(_ field: String) throws(GATTDecodeError) -> UInt16 {
        try littleEndian(2, field: field)
    }

    mutating func sint16(_ field: String) throws(GATTDecodeError) -> Int16 {
        Int16(bitPattern: try littleEndian(2, field: field))
    }

    mutating func uint24(_ field: String) throws(GATTDecodeError) -> UInt32 {
        try littleEndian(3, field: field)
    }

    mutating func uint32(_ field: String) throws(GATTDecodeError) -> UInt32 {
        try littleEndian(4, field: field)
    }

    /// A 16-bit IEEE 11073 SFLOAT.
    mutating func sfloat(_ field: String) throws(GATTDecodeError) -> MedicalSFloat {
        MedicalSFloat(rawValue: try uint16(field))
    }

    /// A 32-bit IEEE 11073 FLOAT.
    mutating func float(_ field: String) throws(GATTDecodeError) -> MedicalFloat {
        MedicalFloat(rawValue: try uint32(field))
    }

    /// A 7-byte Date Time; nil when the device marks it unknown (year, month or day 0).
    mutating func dateTime(_ field: String) throws(GATTDecodeError) -> GATTDateTime? {
        let start = offset
        let slice = try take(GATTDateTime.byteCount, field: field)
        return try GATTDateTime.decode(Array(slice), field: field, offset: start)
    }

    /// Throws `.reservedFlags` when `flags` has any bit of `reservedBits` set.
    static func checkReserved(_ flags: UInt16, reservedBits: UInt16) throws(GATTDecodeError) {
        if flags & reservedBits != 0 { throw .reservedFlags(flags, reservedBits: reservedBits) }
    }

    private mutating func littleEndian<T: FixedWidthInteger & UnsignedInteger>(
        _ count: Int, field: String
    ) throws(GATTDecodeError) -> T {
        var value: T = 0
        var shift = 0
        for byte in try take(count, field: field) {
            value |= T(byte) << shift
            shift += 8
        }
        return value
    }
}
