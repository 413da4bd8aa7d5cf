/// Heart Rate Measurement (0x2A37, Heart Rate service 0x180D).
///
/// Layout: flags uint8 (bit 0 heart rate is uint16, bits 1–2 sensor contact, bit 3 energy
/// expended, bit 4 RR intervals, bits 5–7 reserved) · heart rate uint8 or uint16 (bpm) ·
/// [energy expended uint16 kJ] · [RR interval uint16 (1/1024 s)]… to the end of the value.
public struct HeartRateMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xE0

    /// What the sensor says about skin contact (flags bits 1–2).
    public enum SensorContact: Hashable, Sendable {
        /// The sensor cannot tell (values 0 and 1).
        case notSupported
        /// The sensor can tell and has no contact (2): the reading is not a heart rate.
        case notDetected
        /// The sensor can tell and has contact (3).
        case detected
    }

    public var flags: UInt8
    /// Beats per minute.
    public var heartRate: Int
    public var sensorContact: SensorContact
    /// Kilojoules since the last reset (saturates at 65535).
    public var energyExpended: Int?
    /// RR intervals in 1/1024 s units, oldest first.
    public var rrIntervalTicks: [UInt16]

    /// RR intervals in seconds, oldest first.
    public var rrIntervals: [Double] { rrIntervalTicks.map { Double($0) / 1024 } }

    /// Decodes a characteristic value.
    /// - Throws: `.reservedFlags`, `.tooShort` (also for no RR interval though the flag is set, or
    ///   an odd byte left after them).
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        heartRate = flags & 0x01 == 0 ? Int(try reader.uint8("heart-rate")) : Int(try reader.uint16("heart-rate"))
        switch flags >> 1 & 0x03 {
        case 2: sensorContact = .notDetected
        case 3: sensorContact = .detected
        default: sensorContact = .notSupported
        }
        energyExpended = flags & 0x08 != 0 ? Int(try reader.uint16("energy-expended")) : nil
        var intervals: [UInt16] = []
        if flags & 0x10 != 0 {
            // The flag promises at least one interval.
            repeat { intervals.append(try reader.uint16("rr-interval")) } while reader.remaining > 0
        }
        rrIntervalTicks = intervals
    }
}
