/// Blood Pressure Measurement (0x2A35, Blood Pressure service 0x1810); Intermediate Cuff
/// Pressure (0x2A36) has the same layout.
///
/// Layout: flags uint8 (bit 0 kPa (else mmHg), bit 1 time stamp, bit 2 pulse rate, bit 3 user
/// id, bit 4 measurement status, bits 5–7 reserved) · systolic SFLOAT · diastolic SFLOAT ·
/// mean arterial pressure SFLOAT · [time stamp, 7] · [pulse rate SFLOAT bpm] · [user id uint8] ·
/// [measurement status uint16].
public struct BloodPressureMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xE0

    /// The unit of the three pressures.
    public enum PressureUnit: String, Hashable, Sendable {
        case millimetersOfMercury = "mmHg"
        case kilopascals = "kPa"
    }

    public var flags: UInt8
    public var unit: PressureUnit
    public var systolic: Double
    public var diastolic: Double
    /// Nil when the device sent a special value.
    public var meanArterialPressure: Double?
    public var timestamp: GATTDateTime?
    /// Beats per minute; nil when absent or a special value.
    public var pulseRate: Double?
    /// The user index; 255 means "unknown user".
    public var userID: UInt8?
    /// Bit 0 body movement, bit 1 cuff too loose, bit 2 irregular pulse, bits 3–4 pulse rate
    /// range (0 in range, 1 above, 2 below), bit 5 improper measurement position.
    public var measurementStatus: UInt16?

    /// Decodes a characteristic value.
    /// - Throws: `.specialValue` when systolic or diastolic is not a number; `.reservedFlags`,
    ///   `.tooShort`, `.invalidDateTime`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        unit = flags & 0x01 == 0 ? .millimetersOfMercury : .kilopascals
        systolic = try reader.requiredNumber("systolic")
        diastolic = try reader.requiredNumber("diastolic")
        meanArterialPressure = try reader.sfloat("mean-arterial-pressure").value
        timestamp = flags & 0x02 != 0 ? try reader.dateTime("time-stamp") : nil
        pulseRate = flags & 0x04 != 0 ? try reader.sfloat("pulse-rate").value : nil
        userID = flags & 0x08 != 0 ? try reader.uint8("user-id") : nil
        measurementStatus = flags & 0x10 != 0 ? try reader.uint16("measurement-status") : nil
    }
}

extension GATTByteReader {
    /// An SFLOAT that must be a number, scaled by 10^`power`; throws `.specialValue` otherwise.
    mutating func requiredNumber(_ field: String, scaledByPowerOfTen power: Int = 0) throws(GATTDecodeError) -> Double {
        let start = offset
        let raw = try sfloat(field)
        guard let value = raw.scaled(byPowerOfTen: power) else {
            throw .specialValue(field: field, offset: start, value: raw.special ?? .reserved)
        }
        return value
    }
}
