/// Glucose Measurement (0x2A18, Glucose service 0x1808).
///
/// Layout: flags uint8 (bit 0 time offset, bit 1 concentration with type and sample location,
/// bit 2 concentration in mol/L (else kg/L), bit 3 sensor status annunciation, bit 4 a Glucose
/// Measurement Context follows, bits 5–7 reserved) · sequence number uint16 · base time (7) ·
/// [time offset sint16 minutes] · [concentration SFLOAT, type (low nibble) and sample location
/// (high nibble) uint8] · [sensor status annunciation uint16].
public struct GlucoseMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xE0

    /// How the concentration is expressed on the wire.
    public enum ConcentrationUnit: String, Hashable, Sendable {
        case kilogramsPerLiter = "kg/L"
        case molesPerLiter = "mol/L"
    }

    public var flags: UInt8
    /// The record's number in the meter's memory; the meter's identity for the reading.
    public var sequenceNumber: UInt16
    /// The meter's wall clock when the record was made (before the time offset); nil when unknown.
    public var baseTime: GATTDateTime?
    /// Minutes to add to ``baseTime`` (the meter's clock corrections since).
    public var timeOffsetMinutes: Int?
    public var concentrationUnit: ConcentrationUnit
    /// The concentration in ``concentrationUnit``; nil when the record carries none (flag bit 1 clear).
    public var concentration: Double?
    /// The concentration in mg/dL (kg/L × 100 000); nil unless measured in kg/L.
    public var milligramsPerDeciliter: Double?
    /// The concentration in mmol/L (mol/L × 1 000); nil unless measured in mol/L.
    public var millimolesPerLiter: Double?
    /// 1 capillary whole blood, 2 capillary plasma, 3 venous whole blood, 4 venous plasma, 5 arterial
    /// whole blood, 6 arterial plasma, 7 undetermined whole blood, 8 undetermined plasma, 9 interstitial
    /// fluid, 10 control solution.
    public var type: UInt8?
    /// 1 finger, 2 alternate site test, 3 earlobe, 4 control solution, 15 not available.
    public var sampleLocation: UInt8?
    public var sensorStatusAnnunciation: UInt16?
    /// A Glucose Measurement Context (0x2A34) with the same sequence number follows.
    public var contextFollows: Bool

    /// The wall-clock time of the reading: base time plus time offset.
    public var measurementTime: GATTDateTime? {
        guard let baseTime else { return nil }
        return baseTime.adding(minutes: timeOffsetMinutes ?? 0)
    }

    /// Decodes a characteristic value.
    /// - Throws: `.specialValue` when a present concentration is not a number; `.reservedFlags`,
    ///   `.tooShort`, `.invalidDateTime`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        sequenceNumber = try reader.uint16("sequence-number")
        baseTime = try reader.dateTime("base-time")
        timeOffsetMinutes = flags & 0x01 != 0 ? Int(try reader.sint16("time-offset")) : nil
        concentrationUnit = flags & 0x04 == 0 ? .kilogramsPerLiter : .molesPerLiter
        if flags & 0x02 != 0 {
            let start = reader.offset
            let raw = try reader.sfloat("glucose-concentration")
            guard let value = raw.value else {
                throw .specialValue(field: "glucose-concentration", offset: start, value: raw.special ?? .reserved)
            }
            concentration = value
            switch concentrationUnit {
            case .kilogramsPerLiter:
                milligramsPerDeciliter = raw.scaled(byPowerOfTen: 5)
                millimolesPerLiter = nil
            case .molesPerLiter:
                milligramsPerDeciliter = nil
                millimolesPerLiter = raw.scaled(byPowerOfTen: 3)
            }
            let typeAndLocation = try reader.uint8("type-sample-location")
            type = typeAndLocation & 0x0F
            sampleLocation = typeAndLocation >> 4
        } else {
            concentration = nil
            milligramsPerDeciliter = nil
            millimolesPerLiter = nil
            type = nil
            sampleLocation = nil
        }
        sensorStatusAnnunciation = flags & 0x08 != 0 ? try reader.uint16("sensor-status-annunciation") : nil
        contextFollows = flags & 0x10 != 0
    }
}
