/// Temperature Measurement (0x2A1C, Health Thermometer service 0x1809); Intermediate
/// Temperature (0x2A1E) has the same layout.
///
/// Layout: flags uint8 (bit 0 Fahrenheit, bit 1 time stamp, bit 2 temperature type,
/// bits 3–7 reserved) · temperature FLOAT · [time stamp, 7] · [temperature type uint8].
public struct TemperatureMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xF8

    /// The scale of ``temperature``.
    public enum Scale: String, Hashable, Sendable {
        case celsius, fahrenheit
    }

    public var flags: UInt8
    public var scale: Scale
    /// In degrees of ``scale``.
    public var temperature: Double
    public var timestamp: GATTDateTime?
    /// Where it was measured: 1 armpit, 2 body, 3 ear (lobe), 4 finger, 5 gastro-intestinal
    /// tract, 6 mouth, 7 rectum, 8 toe, 9 ear drum; other values are reserved.
    public var temperatureType: UInt8?

    /// Decodes a characteristic value.
    /// - Throws: `.specialValue` when the temperature is NaN, NRes, ±INF or reserved;
    ///   `.reservedFlags`, `.tooShort`, `.invalidDateTime`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        scale = flags & 0x01 == 0 ? .celsius : .fahrenheit
        let temperatureOffset = reader.offset
        let raw = try reader.float("temperature")
        guard let value = raw.value else {
            // `special` is non-nil exactly when `value` is nil.
            throw .specialValue(field: "temperature", offset: temperatureOffset, value: raw.special ?? .reserved)
        }
        temperature = value
        timestamp = flags & 0x02 != 0 ? try reader.dateTime("time-stamp") : nil
        temperatureType = flags & 0x04 != 0 ? try reader.uint8("temperature-type") : nil
    }
}
