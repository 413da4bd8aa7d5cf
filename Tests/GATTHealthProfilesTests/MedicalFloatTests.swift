import Testing
@testable import GATTHealthProfiles

/// FLOAT vectors: Nordic's Health Thermometer test (via research/ble-protocols.md §1) and the
/// special values of IEEE 11073-20601.
struct MedicalFloatTests {
    @Test func decodesNordicThermometerExample() {
        // Wire `B0 0E 00 FE` -> 0xFE000EB0: exponent 0xFE = -2, mantissa 0x000EB0 = 3760 -> 37.60
        let float = MedicalFloat(rawValue: 0xFE00_0EB0)
        #expect(float.exponent == -2)
        #expect(float.mantissa == 3760)
        #expect(float.value == 37.6)
    }

    @Test func negativeMantissa() {
        // mantissa 0xFFFFFF = -1, exponent 0xFF = -1 -> -0.1; mantissa -125 (0xFFFF83), exponent -1 -> -12.5
        #expect(MedicalFloat(rawValue: 0xFFFF_FFFF).value == -0.1)
        #expect(MedicalFloat(rawValue: 0xFFFF_FF83).value == -12.5)
    }

    @Test(arguments: [
        (UInt32(0x007F_FFFF), MedicalFloatSpecial.notANumber),
        (0x0080_0000, .notAtThisResolution),
        (0x007F_FFFE, .positiveInfinity),
        (0x0080_0002, .negativeInfinity),
        (0x0080_0001, .reserved),
    ])
    func specialValuesHaveNoNumber(raw: UInt32, special: MedicalFloatSpecial) {
        let float = MedicalFloat(rawValue: raw)
        #expect(float.special == special)
        #expect(float.value == nil)
    }

    /// research/ble-protocols.md: a suite with a biased exponent reads `20 75 38 7B` as 37.0 °C.
    /// Per the standard 0x7B is exponent +123: a huge number, nothing like 37.
    @Test func biasedExponentTrapIsNotFollowed() throws {
        let float = MedicalFloat(rawValue: 0x7B38_7520)
        #expect(float.exponent == 123)
        #expect(float.mantissa == 0x387520)
        let value = try #require(float.value)
        #expect(value > 1e129)
    }
}
