import TestSupport
import Testing
@testable import GATTHealthProfiles

/// Vectors built from the PLX Spot-check Measurement layout (GATT Specification Supplement,
/// research/ble-protocols.md §2); the only public suite found uses a biased SFLOAT and was not used.
struct PLXSpotCheckMeasurementTests {
    @Test func decodesMandatoryFields() throws {
        // SpO2 0x0061 = 97 %, pulse 0x0048 = 72 bpm
        let measurement = try PLXSpotCheckMeasurement(decoding: hex("00 61 00 48 00"))
        #expect(measurement.oxygenSaturation == 0.97)
        #expect(measurement.pulseRate == 72)
        #expect(measurement.timestamp == nil)
    }

    /// Flags 0x0F: time stamp, measurement status, device and sensor status, PAI (0xF01E = 3.0 %).
    @Test func decodesEveryField() throws {
        let measurement = try PLXSpotCheckMeasurement(decoding: hex(
            "0F 61 00 48 00 E8 07 06 0F 07 1E 00 20 00 01 00 00 1E F0"))
        #expect(measurement.timestamp?.description == "2024-06-15T07:30:00")
        #expect(measurement.measurementStatus == 0x0020)
        #expect(measurement.deviceAndSensorStatus == 0x000001)
        #expect(measurement.pulseAmplitudeIndex == 3)
        #expect(!measurement.isDeviceClockNotSet)
    }

    @Test func clockNotSetDropsTimeStamp() throws {
        let measurement = try PLXSpotCheckMeasurement(decoding: hex("11 61 00 48 00 D0 07 01 01 00 00 05"))
        #expect(measurement.isDeviceClockNotSet)
        #expect(measurement.timestamp == nil)
    }

    @Test func specialPulseRateIsNoValue() throws {
        let measurement = try PLXSpotCheckMeasurement(decoding: hex("00 61 00 FF 07"))
        #expect(measurement.pulseRate == nil)
        #expect(measurement.oxygenSaturation == 0.97)
    }

    @Test func specialSpO2Throws() {
        #expect(throws: GATTDecodeError.specialValue(field: "spo2", offset: 1, value: .notAtThisResolution)) {
            try PLXSpotCheckMeasurement(decoding: hex("00 00 08 48 00"))
        }
    }

    @Test func reservedFlagsThrow() {
        #expect(throws: GATTDecodeError.reservedFlags(0x40, reservedBits: 0xE0)) {
            try PLXSpotCheckMeasurement(decoding: hex("40 61 00 48 00"))
        }
    }

    @Test func shortDeviceStatusThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "device-and-sensor-status", offset: 5, needed: 3, have: 2)) {
            try PLXSpotCheckMeasurement(decoding: hex("04 61 00 48 00 01 00"))
        }
    }
}
