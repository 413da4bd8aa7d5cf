/// Which units a scale's mass and height fields are in (flags bit 0).
public enum GATTUnitSystem: String, Hashable, Sendable {
    /// Mass in kilograms (0.005 kg steps), height in metres (0.001 m steps).
    case metric
    /// Mass in pounds (0.01 lb steps), height in inches (0.1 in steps).
    case imperial

    /// A raw mass field in kilograms or pounds.
    func mass(_ raw: UInt16) -> Double {
        switch self {
        case .metric: Double(raw) / 200
        case .imperial: Double(raw) / 100
        }
    }

    /// A raw height field in metres or inches.
    func height(_ raw: UInt16) -> Double {
        switch self {
        case .metric: Double(raw) / 1000
        case .imperial: Double(raw) / 10
        }
    }
}

/// Weight Measurement (0x2A9D, Weight Scale service 0x181D).
///
/// Layout: flags uint8 (bit 0 imperial, bit 1 time stamp, bit 2 user id, bit 3 BMI and height,
/// bits 4–7 reserved) · weight uint16 · [time stamp, 7] · [user id uint8] · [BMI uint16 0.1 kg/m²,
/// height uint16].
public struct WeightMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xF0

    public var flags: UInt8
    public var unitSystem: GATTUnitSystem
    /// In kilograms (metric) or pounds (imperial).
    public var weight: Double
    /// The scale's wall clock; nil when absent or marked unknown.
    public var timestamp: GATTDateTime?
    /// The user index on a multi-user scale; 255 means "unknown user".
    public var userID: UInt8?
    /// Body mass index in kg/m².
    public var bodyMassIndex: Double?
    /// In metres (metric) or inches (imperial).
    public var height: Double?

    /// Decodes a characteristic value.
    /// - Throws: `.unsuccessfulMeasurement` for weight 0xFFFF, `.reservedFlags`, `.tooShort`,
    ///   `.invalidDateTime`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        unitSystem = flags & 0x01 == 0 ? .metric : .imperial
        let weightOffset = reader.offset
        let rawWeight = try reader.uint16("weight")
        if rawWeight == 0xFFFF { throw .unsuccessfulMeasurement(field: "weight", offset: weightOffset) }
        weight = unitSystem.mass(rawWeight)
        timestamp = flags & 0x02 != 0 ? try reader.dateTime("time-stamp") : nil
        userID = flags & 0x04 != 0 ? try reader.uint8("user-id") : nil
        if flags & 0x08 != 0 {
            bodyMassIndex = Double(try reader.uint16("bmi")) / 10
            height = unitSystem.height(try reader.uint16("height"))
        } else {
            bodyMassIndex = nil
            height = nil
        }
    }
}
