import TestSupport
import Testing
@testable import GATTHealthProfiles

/// Vectors built field by field from the Body Composition Measurement layout (GATT Specification
/// Supplement / research/ble-protocols.md §2); the values are a plausible adult.
struct BodyCompositionMeasurementTests {
    @Test func decodesMandatoryFieldsOnly() throws {
        // flags 0x0000, body fat 0x00EB = 235 -> 23.5 %
        let measurement = try BodyCompositionMeasurement(decoding: hex("00 00 EB 00"))
        #expect(measurement.bodyFatPercentage == 23.5)
        #expect(measurement.bodyFatFraction == 0.235)
        #expect(measurement.weight == nil)
        #expect(!measurement.isMultiplePacket)
    }

    /// Flags 0x0FFE: time stamp, user, basal metabolism 7000 kJ, muscle 40.2 %, muscle mass 55 kg,
    /// fat free mass 59.3 kg, soft lean mass 56 kg, body water 42 kg, impedance 503.0 Ω,
    /// weight 77.5 kg, height 1.75 m.
    @Test func decodesEveryField() throws {
        let measurement = try BodyCompositionMeasurement(decoding: hex(
            "FE 0F EB 00 DC 07 0C 05 0B 32 1B 01 58 1B 92 01 F8 2A 54 2E C0 2B D0 20 A6 13 8C 3C D6 06"))
        #expect(measurement.unitSystem == .metric)
        #expect(measurement.bodyFatFraction == 0.235)
        #expect(measurement.timestamp?.description == "2012-12-05T11:50:27")
        #expect(measurement.userID == 1)
        #expect(measurement.basalMetabolism == 7000)
        #expect(measurement.musclePercentage == 40.2)
        #expect(measurement.muscleMass == 55)
        #expect(measurement.fatFreeMass == 59.3)
        #expect(measurement.softLeanMass == 56)
        #expect(measurement.bodyWaterMass == 42)
        #expect(measurement.impedance == 503)
        #expect(measurement.weight == 77.5)
        #expect(measurement.height == 1.75)
    }

    @Test func decodesImperialMasses() throws {
        // flags 0x0C01: imperial, weight (0x42BE = 170.86 lb), height (0x02B1 = 68.9 in)
        let measurement = try BodyCompositionMeasurement(decoding: hex("01 0C EB 00 BE 42 B1 02"))
        #expect(measurement.unitSystem == .imperial)
        #expect(measurement.weight == 170.86)
        #expect(measurement.height == 68.9)
    }

    /// A measurement split in two (bit 12 in both): the first carries body fat, time stamp, user
    /// and fat free mass; the second 0xFFFF for body fat, then impedance, weight and height.
    @Test func mergesMultiplePacketHalves() throws {
        let first = try BodyCompositionMeasurement(decoding: hex("46 10 EB 00 DC 07 0C 05 0B 32 1B 01 54 2E"))
        let second = try BodyCompositionMeasurement(decoding: hex("00 1E FF FF A6 13 8C 3C D6 06"))
        #expect(first.isMultiplePacket)
        #expect(second.isMultiplePacket)
        #expect(second.bodyFatPerMille == nil)
        let merged = try #require(first.merging(second))
        #expect(!merged.isMultiplePacket)
        #expect(merged.flags == 0x0E46)
        #expect(merged.bodyFatFraction == 0.235)
        #expect(merged.timestamp?.description == "2012-12-05T11:50:27")
        #expect(merged.userID == 1)
        #expect(merged.fatFreeMass == 59.3)
        #expect(merged.impedance == 503)
        #expect(merged.weight == 77.5)
        #expect(merged.height == 1.75)
    }

    @Test func halvesInDifferentUnitsDoNotMerge() throws {
        let metric = try BodyCompositionMeasurement(decoding: hex("00 10 EB 00"))
        let imperial = try BodyCompositionMeasurement(decoding: hex("01 14 FF FF BE 42"))
        #expect(metric.merging(imperial) == nil)
    }

    @Test func unsuccessfulSinglePacketThrows() {
        #expect(throws: GATTDecodeError.unsuccessfulMeasurement(field: "body-fat-percentage", offset: 2)) {
            try BodyCompositionMeasurement(decoding: hex("00 00 FF FF"))
        }
    }

    @Test(arguments: [UInt16(0x2000), 0x4000, 0x8000])
    func reservedFlagsThrow(flags: UInt16) {
        #expect(throws: GATTDecodeError.reservedFlags(flags, reservedBits: 0xE000)) {
            try BodyCompositionMeasurement(decoding: [UInt8(flags & 0xFF), UInt8(flags >> 8), 0xEB, 0x00])
        }
    }

    @Test(arguments: [
        ("00", GATTDecodeError.tooShort(field: "flags", offset: 0, needed: 2, have: 1)),
        ("00 00 EB", .tooShort(field: "body-fat-percentage", offset: 2, needed: 2, have: 1)),
        ("00 04 EB 00 8C", .tooShort(field: "weight", offset: 4, needed: 2, have: 1)),
        ("00 02 EB 00 A6", .tooShort(field: "impedance", offset: 4, needed: 2, have: 1)),
        ("04 00 EB 00", .tooShort(field: "user-id", offset: 4, needed: 1, have: 0)),
    ])
    func shortFramesThrow(frame: String, error: GATTDecodeError) {
        #expect(throws: error) { try BodyCompositionMeasurement(decoding: hex(frame)) }
    }
}
