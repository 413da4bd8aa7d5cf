import TestSupport
import Testing
@testable import GATTHealthProfiles

/// The first five vectors are Nordic Android-BLE-Common-Library BloodPressureMeasurementDataCallbackTest.
struct BloodPressureMeasurementTests {
    /// All fields, mmHg: 138/88 (MAP 120), time stamp with year 0 (unknown), pulse 60, user 1,
    /// status 0b100111.
    @Test func decodesNordicFullExample() throws {
        let measurement = try BloodPressureMeasurement(decoding: hex(
            "1E 8A 00 58 00 78 00 00 00 04 11 14 29 3B 3C 00 01 27 00"))
        #expect(measurement.unit == .millimetersOfMercury)
        #expect(measurement.systolic == 138)
        #expect(measurement.diastolic == 88)
        #expect(measurement.meanArterialPressure == 120)
        #expect(measurement.timestamp == nil)  // year 0: the monitor does not know the date
        #expect(measurement.pulseRate == 60)
        #expect(measurement.userID == 1)
        #expect(measurement.measurementStatus == 0b100111)
    }

    /// kPa with pulse and status: 18.9/11.0 (MAP 15.9), pulse 60, status 0b010010.
    @Test func decodesNordicKilopascalExample() throws {
        let measurement = try BloodPressureMeasurement(decoding: hex("15 BD F0 0B 00 9F F0 3C 00 12 00"))
        #expect(measurement.unit == .kilopascals)
        #expect(measurement.systolic == 18.9)
        #expect(measurement.diastolic == 11)
        #expect(measurement.meanArterialPressure == 15.9)
        #expect(measurement.pulseRate == 60)
        #expect(measurement.userID == nil)
        #expect(measurement.measurementStatus == 0b010010)
    }

    @Test func decodesNordicMinimalExample() throws {
        let measurement = try BloodPressureMeasurement(decoding: hex("00 BD F0 0B 00 9F F0"))
        #expect(measurement.unit == .millimetersOfMercury)
        #expect(measurement.systolic == 18.9)
        #expect(measurement.pulseRate == nil)
        #expect(measurement.measurementStatus == nil)
    }

    @Test func nordicShortExampleThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "mean-arterial-pressure", offset: 5, needed: 2, have: 1)) {
            try BloodPressureMeasurement(decoding: hex("01 02 03 04 05 06"))
        }
    }

    @Test func nordicMissingTimeStampThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "time-stamp", offset: 7, needed: 7, have: 0)) {
            try BloodPressureMeasurement(decoding: hex("03 02 03 04 05 06 07"))
        }
    }

    @Test func decodesTimeStamp() throws {
        let measurement = try BloodPressureMeasurement(decoding: hex("02 7A 00 50 00 5E 00 E8 07 06 0F 07 1E 00"))
        #expect(measurement.systolic == 122)
        #expect(measurement.diastolic == 80)
        #expect(measurement.timestamp?.description == "2024-06-15T07:30:00")
    }

    @Test func specialMeanArterialPressureAndPulseAreNoValue() throws {
        // MAP 0x07FF (NaN), pulse 0x0800 (NRes)
        let measurement = try BloodPressureMeasurement(decoding: hex("04 8A 00 58 00 FF 07 00 08"))
        #expect(measurement.meanArterialPressure == nil)
        #expect(measurement.pulseRate == nil)
        #expect(measurement.systolic == 138)
    }

    @Test func specialSystolicOrDiastolicThrows() {
        #expect(throws: GATTDecodeError.specialValue(field: "systolic", offset: 1, value: .notANumber)) {
            try BloodPressureMeasurement(decoding: hex("00 FF 07 58 00 78 00"))
        }
        #expect(throws: GATTDecodeError.specialValue(field: "diastolic", offset: 3, value: .positiveInfinity)) {
            try BloodPressureMeasurement(decoding: hex("00 8A 00 FE 07 78 00"))
        }
    }

    @Test func reservedFlagsThrow() {
        #expect(throws: GATTDecodeError.reservedFlags(0x20, reservedBits: 0xE0)) {
            try BloodPressureMeasurement(decoding: hex("20 8A 00 58 00 78 00"))
        }
    }
}
