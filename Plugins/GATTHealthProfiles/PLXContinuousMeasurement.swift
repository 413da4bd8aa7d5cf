/// PLX Continuous Measurement (0x2A5F, Pulse Oximeter service 0x1822).
///
/// Layout: flags uint8 (bit 0 SpO2PR-Fast, bit 1 SpO2PR-Slow, bit 2 measurement status, bit 3
/// device and sensor status, bit 4 pulse amplitude index, bits 5–7 reserved) · SpO2 SFLOAT (%) ·
/// pulse rate SFLOAT (bpm) · [fast SpO2, fast PR] · [slow SpO2, slow PR] · [measurement status
/// uint16] · [device and sensor status uint24] · [pulse amplitude index SFLOAT %].
public struct PLXContinuousMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xE0

    public var flags: UInt8
    /// Oxygen saturation (normal averaging) as a fraction (0.97 for 97 %).
    public var oxygenSaturation: Double
    /// Beats per minute (normal averaging); nil when the device sent a special value.
    public var pulseRate: Double?
    /// Fast-responding SpO2 (fraction) and pulse rate, when sent and numbers.
    public var fastOxygenSaturation: Double?
    public var fastPulseRate: Double?
    /// Slow-responding SpO2 (fraction) and pulse rate, when sent and numbers.
    public var slowOxygenSaturation: Double?
    public var slowPulseRate: Double?
    public var measurementStatus: UInt16?
    public var deviceAndSensorStatus: UInt32?
    /// Pulse amplitude index in percent.
    public var pulseAmplitudeIndex: Double?

    /// Decodes a characteristic value.
    /// - Throws: `.specialValue` when the normal SpO2 is not a number; `.reservedFlags`, `.tooShort`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        oxygenSaturation = try reader.requiredNumber("spo2", scaledByPowerOfTen: -2)
        pulseRate = try reader.sfloat("pulse-rate").value
        if flags & 0x01 != 0 {
            fastOxygenSaturation = try reader.sfloat("spo2-fast").scaled(byPowerOfTen: -2)
            fastPulseRate = try reader.sfloat("pulse-rate-fast").value
        } else {
            fastOxygenSaturation = nil
            fastPulseRate = nil
        }
        if flags & 0x02 != 0 {
            slowOxygenSaturation = try reader.sfloat("spo2-slow").scaled(byPowerOfTen: -2)
            slowPulseRate = try reader.sfloat("pulse-rate-slow").value
        } else {
            slowOxygenSaturation = nil
            slowPulseRate = nil
        }
        measurementStatus = flags & 0x04 != 0 ? try reader.uint16("measurement-status") : nil
        deviceAndSensorStatus = flags & 0x08 != 0 ? try reader.uint24("device-and-sensor-status") : nil
        pulseAmplitudeIndex = flags & 0x10 != 0 ? try reader.sfloat("pulse-amplitude-index").value : nil
    }
}
