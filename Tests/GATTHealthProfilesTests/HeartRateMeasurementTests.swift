import TestSupport
import Testing
@testable import GATTHealthProfiles

/// Vectors from Nordic Android-BLE-Common-Library HeartRateMeasurementDataCallbackTest.
struct HeartRateMeasurementTests {
    @Test func decodesSimpleUInt8() throws {
        let measurement = try HeartRateMeasurement(decoding: [0x00, 85])
        #expect(measurement.heartRate == 85)
        #expect(measurement.sensorContact == .notSupported)
        #expect(measurement.energyExpended == nil)
        #expect(measurement.rrIntervalTicks.isEmpty)
    }

    @Test func decodesNoContact() throws {
        let measurement = try HeartRateMeasurement(decoding: hex("04 FF"))
        #expect(measurement.heartRate == 255)
        #expect(measurement.sensorContact == .notDetected)
    }

    @Test func decodesUInt8WithEnergyAndRRInterval() throws {
        let measurement = try HeartRateMeasurement(decoding: hex("1E 55 32 00 21 00"))
        #expect(measurement.heartRate == 85)
        #expect(measurement.sensorContact == .detected)
        #expect(measurement.energyExpended == 50)
        #expect(measurement.rrIntervalTicks == [33])
        #expect(measurement.rrIntervals == [33.0 / 1024])
    }

    @Test func decodesUInt16WithSeveralRRIntervals() throws {
        let measurement = try HeartRateMeasurement(decoding: hex("1F 01 01 32 01 01 00 02 01 FF FF"))
        #expect(measurement.heartRate == 257)
        #expect(measurement.sensorContact == .detected)
        #expect(measurement.energyExpended == 306)
        #expect(measurement.rrIntervalTicks == [1, 258, 65535])
    }

    /// Nordic's invalid value: the RR flag is set, but no interval follows the heart rate.
    @Test func rrFlagWithoutIntervalThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "rr-interval", offset: 3, needed: 2, have: 0)) {
            try HeartRateMeasurement(decoding: hex("17 01 01"))
        }
    }

    @Test func oddByteAfterRRIntervalsThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "rr-interval", offset: 4, needed: 2, have: 1)) {
            try HeartRateMeasurement(decoding: hex("10 48 00 03 01"))
        }
    }

    @Test(arguments: [UInt8(0x20), 0x40, 0x80])
    func reservedFlagsThrow(flags: UInt8) {
        #expect(throws: GATTDecodeError.reservedFlags(UInt16(flags), reservedBits: 0xE0)) {
            try HeartRateMeasurement(decoding: [flags, 0x48])
        }
    }

    @Test func shortHeartRateThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "heart-rate", offset: 1, needed: 2, have: 1)) {
            try HeartRateMeasurement(decoding: hex("01 48"))
        }
    }
}
