import TestSupport
import Testing
@testable import GATTHealthProfiles

struct GlucoseMeasurementTests {
    /// Nordic Android-BLE-Common-Library GlucoseMeasurementDataCallbackTest: sequence 1, base time
    /// 2019-02-27 11:10:30, offset -5 min, 30 kg/L (the test's placeholder value), type 2
    /// (capillary plasma), location 1 (finger), status 0x0105, context follows.
    @Test func decodesNordicExample() throws {
        let measurement = try GlucoseMeasurement(decoding: hex("1B 01 00 E3 07 02 1B 0B 0A 1E FB FF 1E 00 12 05 01"))
        #expect(measurement.sequenceNumber == 1)
        #expect(measurement.baseTime?.description == "2019-02-27T11:10:30")
        #expect(measurement.timeOffsetMinutes == -5)
        #expect(measurement.measurementTime?.description == "2019-02-27T11:05:30")
        #expect(measurement.concentrationUnit == .kilogramsPerLiter)
        #expect(measurement.concentration == 30)
        #expect(measurement.milligramsPerDeciliter == 3_000_000)
        #expect(measurement.millimolesPerLiter == nil)
        #expect(measurement.type == 2)
        #expect(measurement.sampleLocation == 1)
        #expect(measurement.sensorStatusAnnunciation == 0x0105)
        #expect(measurement.contextFollows)
    }

    /// The same suite's invalid value (time offset missing, so the status is cut off).
    @Test func nordicShortExampleThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "sensor-status-annunciation", offset: 15, needed: 2, have: 0)) {
            try GlucoseMeasurement(decoding: hex("1B 00 00 E2 07 04 1A 0B 09 1E 1E 00 12 05 01"))
        }
    }

    @Test func decodesKilogramsPerLiterToMilligramsPerDeciliter() throws {
        // 0xB05F = 95 × 10^-5 kg/L = 95 mg/dL; type 1 capillary whole blood, location 1 finger
        let measurement = try GlucoseMeasurement(decoding: hex("02 03 00 E3 07 02 1B 0B 0A 1E 5F B0 11"))
        #expect(measurement.sequenceNumber == 3)
        #expect(measurement.timeOffsetMinutes == nil)
        #expect(measurement.measurementTime?.description == "2019-02-27T11:10:30")
        #expect(measurement.concentration == 0.00095)
        #expect(measurement.milligramsPerDeciliter == 95)
        #expect(!measurement.contextFollows)
    }

    @Test func decodesMolesPerLiterToMillimolesPerLiter() throws {
        // flags 0x06: concentration in mol/L; 0xC038 = 56 × 10^-4 mol/L = 5.6 mmol/L
        let measurement = try GlucoseMeasurement(decoding: hex("06 02 00 E3 07 02 1B 0B 0A 1E 38 C0 11"))
        #expect(measurement.concentrationUnit == .molesPerLiter)
        #expect(measurement.millimolesPerLiter == 5.6)
        #expect(measurement.milligramsPerDeciliter == nil)
    }

    @Test func recordWithoutConcentration() throws {
        let measurement = try GlucoseMeasurement(decoding: hex("00 04 00 E3 07 02 1B 0B 0A 1E"))
        #expect(measurement.concentration == nil)
        #expect(measurement.type == nil)
    }

    @Test func unknownBaseTime() throws {
        let measurement = try GlucoseMeasurement(decoding: hex("03 05 00 00 00 00 00 00 00 00 0A 00 5F B0 11"))
        #expect(measurement.baseTime == nil)
        #expect(measurement.measurementTime == nil)
        #expect(measurement.timeOffsetMinutes == 10)
    }

    @Test func specialConcentrationThrows() {
        #expect(throws: GATTDecodeError.specialValue(field: "glucose-concentration", offset: 10, value: .notANumber)) {
            try GlucoseMeasurement(decoding: hex("02 03 00 E3 07 02 1B 0B 0A 1E FF 07 11"))
        }
    }

    @Test func reservedFlagsThrow() {
        #expect(throws: GATTDecodeError.reservedFlags(0x80, reservedBits: 0xE0)) {
            try GlucoseMeasurement(decoding: hex("80 03 00 E3 07 02 1B 0B 0A 1E"))
        }
    }

    @Test func shortBaseTimeThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "base-time", offset: 3, needed: 7, have: 4)) {
            try GlucoseMeasurement(decoding: hex("00 01 00 E3 07 02 1B"))
        }
    }
}
