import TestSupport
import Testing
@testable import GATTHealthProfiles

struct WeightMeasurementTests {
    /// openScale's test: `00 8C 3C` = 0x3C8C × 0.005 kg = 77.5 kg (research/ble-protocols.md §2).
    @Test func decodesOpenScaleExample() throws {
        let weight = try WeightMeasurement(decoding: hex("00 8C 3C"))
        #expect(weight.unitSystem == .metric)
        #expect(weight.weight == 77.5)
        #expect(weight.timestamp == nil)
        #expect(weight.userID == nil)
        #expect(weight.bodyMassIndex == nil)
        #expect(weight.height == nil)
    }

    /// Every optional field, metric: flags 0x0E; time stamp 2012-12-05 11:50:27; user 1;
    /// BMI 0x00FD = 25.3; height 0x06D6 = 1750 mm.
    @Test func decodesAllFieldsMetric() throws {
        let weight = try WeightMeasurement(decoding: hex("0E 8C 3C DC 07 0C 05 0B 32 1B 01 FD 00 D6 06"))
        #expect(weight.weight == 77.5)
        #expect(weight.timestamp?.description == "2012-12-05T11:50:27")
        #expect(weight.userID == 1)
        #expect(weight.bodyMassIndex == 25.3)
        #expect(weight.height == 1.75)
    }

    /// Imperial: flags 0x09 (lb/in, BMI and height); 0x42BE = 17086 × 0.01 lb; height 0x02B1 = 689 × 0.1 in.
    @Test func decodesImperialUnits() throws {
        let weight = try WeightMeasurement(decoding: hex("09 BE 42 FD 00 B1 02"))
        #expect(weight.unitSystem == .imperial)
        #expect(weight.weight == 170.86)
        #expect(weight.bodyMassIndex == 25.3)
        #expect(weight.height == 68.9)
    }

    @Test func unknownTimeStampIsNil() throws {
        let weight = try WeightMeasurement(decoding: hex("02 8C 3C 00 00 00 00 00 00 00"))
        #expect(weight.timestamp == nil)
        #expect(weight.weight == 77.5)
    }

    @Test func unsuccessfulMeasurementThrows() {
        #expect(throws: GATTDecodeError.unsuccessfulMeasurement(field: "weight", offset: 1)) {
            try WeightMeasurement(decoding: hex("00 FF FF"))
        }
    }

    @Test(arguments: [UInt8(0x10), 0x20, 0x40, 0x80, 0xF0])
    func reservedFlagsThrow(flags: UInt8) {
        #expect(throws: GATTDecodeError.reservedFlags(UInt16(flags), reservedBits: 0xF0)) {
            try WeightMeasurement(decoding: [flags, 0x8C, 0x3C])
        }
    }

    @Test(arguments: [
        ("", GATTDecodeError.tooShort(field: "flags", offset: 0, needed: 1, have: 0)),
        ("00 8C", .tooShort(field: "weight", offset: 1, needed: 2, have: 1)),
        ("02 8C 3C DC 07", .tooShort(field: "time-stamp", offset: 3, needed: 7, have: 2)),
        ("04 8C 3C", .tooShort(field: "user-id", offset: 3, needed: 1, have: 0)),
        ("08 8C 3C FD", .tooShort(field: "bmi", offset: 3, needed: 2, have: 1)),
        ("08 8C 3C FD 00", .tooShort(field: "height", offset: 5, needed: 2, have: 0)),
    ])
    func shortFramesThrow(frame: String, error: GATTDecodeError) {
        #expect(throws: error) { try WeightMeasurement(decoding: hex(frame)) }
        #expect(error.reason == "short-frame")
    }
}
