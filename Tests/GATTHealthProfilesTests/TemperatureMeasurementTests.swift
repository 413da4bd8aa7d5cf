import TestSupport
import Testing
@testable import GATTHealthProfiles

struct TemperatureMeasurementTests {
    /// Nordic Android-BLE-Common-Library TemperatureMeasurementDataCallbackTest (also in
    /// research/ble-protocols.md §2): 37.60 °C, 2012-12-05 11:50:27, finger.
    @Test func decodesNordicExample() throws {
        let measurement = try TemperatureMeasurement(decoding: hex("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04"))
        #expect(measurement.scale == .celsius)
        #expect(measurement.temperature == 37.6)
        #expect(measurement.timestamp?.description == "2012-12-05T11:50:27")
        #expect(measurement.temperatureType == 4)
    }

    /// The same test suite's invalid value: the temperature type byte is missing.
    @Test func nordicShortExampleThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "temperature-type", offset: 12, needed: 1, have: 0)) {
            try TemperatureMeasurement(decoding: hex("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B"))
        }
    }

    @Test func decodesFahrenheitWithoutOptionalFields() throws {
        // flags 0x01; 0xFF0003DA = 986 × 10^-1 = 98.6 °F
        let measurement = try TemperatureMeasurement(decoding: hex("01 DA 03 00 FF"))
        #expect(measurement.scale == .fahrenheit)
        #expect(measurement.temperature == 98.6)
        #expect(measurement.timestamp == nil)
        #expect(measurement.temperatureType == nil)
    }

    @Test(arguments: [
        ("00 FF FF 7F 00", MedicalFloatSpecial.notANumber),
        ("00 00 00 80 00", .notAtThisResolution),
        ("00 FE FF 7F 00", .positiveInfinity),
    ])
    func specialTemperatureThrows(frame: String, special: MedicalFloatSpecial) {
        let error = GATTDecodeError.specialValue(field: "temperature", offset: 1, value: special)
        #expect(throws: error) { try TemperatureMeasurement(decoding: hex(frame)) }
        #expect(error.reason == "special-value")
    }

    @Test func reservedFlagsThrow() {
        #expect(throws: GATTDecodeError.reservedFlags(0x08, reservedBits: 0xF8)) {
            try TemperatureMeasurement(decoding: hex("08 B0 0E 00 FE"))
        }
    }

    @Test func shortTemperatureThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "temperature", offset: 1, needed: 4, have: 3)) {
            try TemperatureMeasurement(decoding: hex("00 B0 0E 00"))
        }
    }
}
