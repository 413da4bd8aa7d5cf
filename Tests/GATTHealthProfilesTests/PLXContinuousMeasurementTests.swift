import TestSupport
import Testing
@testable import GATTHealthProfiles

/// Vectors built from the PLX Continuous Measurement layout (GATT Specification Supplement,
/// research/ble-protocols.md §2).
struct PLXContinuousMeasurementTests {
    @Test func decodesNormalValues() throws {
        // SpO2 0x0062 = 98 %, pulse 0x003C = 60 bpm
        let measurement = try PLXContinuousMeasurement(decoding: hex("00 62 00 3C 00"))
        #expect(measurement.oxygenSaturation == 0.98)
        #expect(measurement.pulseRate == 60)
        #expect(measurement.fastOxygenSaturation == nil)
    }

    /// Flags 0x1F: fast (97 %, 61), slow (0xF3D1 = 977 × 10^-1 = 97.7 %, 0x07FF NaN), status
    /// 0x0000, device status 0x000000, PAI 0xF014 = 2.0 %.
    @Test func decodesEveryField() throws {
        let measurement = try PLXContinuousMeasurement(decoding: hex(
            "1F 62 00 3C 00 61 00 3D 00 D1 F3 FF 07 00 00 00 00 00 14 F0"))
        #expect(measurement.fastOxygenSaturation == 0.97)
        #expect(measurement.fastPulseRate == 61)
        #expect(measurement.slowOxygenSaturation == 0.977)
        #expect(measurement.slowPulseRate == nil)
        #expect(measurement.measurementStatus == 0)
        #expect(measurement.deviceAndSensorStatus == 0)
        #expect(measurement.pulseAmplitudeIndex == 2)
    }

    @Test func slowWithoutFastFollowsNormal() throws {
        let measurement = try PLXContinuousMeasurement(decoding: hex("02 62 00 3C 00 60 00 3B 00"))
        #expect(measurement.fastOxygenSaturation == nil)
        #expect(measurement.slowOxygenSaturation == 0.96)
        #expect(measurement.slowPulseRate == 59)
    }

    @Test func specialSpO2Throws() {
        #expect(throws: GATTDecodeError.specialValue(field: "spo2", offset: 1, value: .notANumber)) {
            try PLXContinuousMeasurement(decoding: hex("00 FF 07 3C 00"))
        }
    }

    @Test func reservedFlagsThrow() {
        #expect(throws: GATTDecodeError.reservedFlags(0x20, reservedBits: 0xE0)) {
            try PLXContinuousMeasurement(decoding: hex("20 62 00 3C 00"))
        }
    }

    @Test func shortFastFieldsThrow() {
        #expect(throws: GATTDecodeError.tooShort(field: "pulse-rate-fast", offset: 7, needed: 2, have: 0)) {
            try PLXContinuousMeasurement(decoding: hex("01 62 00 3C 00 61 00"))
        }
    }
}
