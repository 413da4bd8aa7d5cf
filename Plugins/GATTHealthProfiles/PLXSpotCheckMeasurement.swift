/// PLX Spot-check Measurement (0x2A5E, Pulse Oximeter service 0x1822).
///
/// Layout: flags uint8 (bit 0 time stamp, bit 1 measurement status, bit 2 device and sensor
/// status, bit 3 pulse amplitude index, bit 4 device clock not set, bits 5–7 reserved) ·
/// SpO2 SFLOAT (%) · pulse rate SFLOAT (bpm) · [time stamp, 7] · [measurement status uint16] ·
/// [device and sensor status uint24] · [pulse amplitude index SFLOAT %].
public struct PLXSpotCheckMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xE0

    public var flags: UInt8
    /// Oxygen saturation as a fraction (0.97 for 97 %).
    public var oxygenSaturation: Double
    /// Beats per minute; nil when the device sent a special value.
    public var pulseRate: Double?
    /// The device's wall clock; nil when absent, unknown, or the device says its clock is not set.
    public var timestamp: GATTDateTime?
    /// Flags bit 4: the device's clock has not been set, so a time stamp means nothing.
    public var isDeviceClockNotSet: Bool
    public var measurementStatus: UInt16?
    public var deviceAndSensorStatus: UInt32?
    /// Pulse amplitude index in percent; nil when absent or a special value.
    public var pulseAmplitudeIndex: Double?

    /// Decodes a characteristic value.
    /// - Throws: `.specialValue` when SpO2 is not a number; `.reservedFlags`, `.tooShort`,
    ///   `.invalidDateTime`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        oxygenSaturation = try reader.requiredNumber("spo2", scaledByPowerOfTen: -2)
        pulseRate = try reader.sfloat("pulse-rate").value
        isDeviceClockNotSet = flags & 0x10 != 0
        let stamp = flags & 0x01 != 0 ? try reader.dateTime("time-stamp") : nil
        timestamp = isDeviceClockNotSet ? nil : stamp
        measurementStatus = flags & 0x02 != 0 ? try reader.uint16("measurement-status") : nil
        deviceAndSensorStatus = flags & 0x04 != 0 ? try reader.uint24("device-and-sensor-status") : nil
        pulseAmplitudeIndex = flags & 0x08 != 0 ? try reader.sfloat("pulse-amplitude-index").value : nil
    }
}
