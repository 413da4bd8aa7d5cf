import TestSupport
import Testing
@testable import GATTHealthProfiles

struct RSCMeasurementTests {
    /// Nordic Android-BLE-Common-Library RunningSpeedAndCadenceMeasurementDataCallbackTest:
    /// running, 3 m/s, cadence 18, stride 86 cm, total distance 0xF0000001 dm (Nordic's test
    /// asserts the raw decimetres, research/ble-protocols.md §2).
    @Test func decodesNordicExample() throws {
        let measurement = try RSCMeasurement(decoding: hex("07 00 03 12 56 00 01 00 00 F0"))
        #expect(measurement.isRunning)
        #expect(measurement.speed == 3)
        #expect(measurement.cadence == 18)
        #expect(measurement.strideLength == 0.86)
        #expect(measurement.totalDistanceDecimeters == 0xF000_0001)
        #expect(measurement.totalDistance == Double(0xF000_0001) / 10)
    }

    /// The same suite's invalid value: total distance cut to three bytes.
    @Test func nordicShortExampleThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "total-distance", offset: 6, needed: 4, have: 3)) {
            try RSCMeasurement(decoding: hex("07 00 03 12 56 00 00 00 00"))
        }
    }

    @Test func decodesWalkingWithoutOptionalFields() throws {
        // 0x0180 / 256 = 1.5 m/s, cadence 0x5A = 90 /min
        let measurement = try RSCMeasurement(decoding: hex("00 80 01 5A"))
        #expect(!measurement.isRunning)
        #expect(measurement.speed == 1.5)
        #expect(measurement.cadence == 90)
        #expect(measurement.strideLength == nil)
        #expect(measurement.totalDistanceDecimeters == nil)
    }

    @Test func totalDistanceWithoutStrideLength() throws {
        // flags 0x02: total distance follows cadence directly; 0x000003E8 = 1000 dm
        let measurement = try RSCMeasurement(decoding: hex("02 80 01 5A E8 03 00 00"))
        #expect(measurement.strideLength == nil)
        #expect(measurement.totalDistance == 100)
    }

    @Test func reservedFlagsThrow() {
        #expect(throws: GATTDecodeError.reservedFlags(0x08, reservedBits: 0xF8)) {
            try RSCMeasurement(decoding: hex("08 80 01 5A"))
        }
    }
}
