import Testing
@testable import GATTHealthProfiles

/// SFLOAT vectors from Nordic's Android-BLE-Common-Library tests (via research/ble-protocols.md §1)
/// and the special values of IEEE 11073-20601.
struct MedicalSFloatTests {
    @Test func decodesNordicExamples() {
        // `8A 00` -> 0x008A = 138 × 10^0
        #expect(MedicalSFloat(rawValue: 0x008A).value == 138)
        // `BD F0` -> 0xF0BD: exponent 0xF = -1, mantissa 0x0BD = 189 -> 18.9
        let sfloat = MedicalSFloat(rawValue: 0xF0BD)
        #expect(sfloat.exponent == -1)
        #expect(sfloat.mantissa == 189)
        #expect(sfloat.value == 18.9)
        // `3C 00` -> 60; `9F F0` -> 15.9
        #expect(MedicalSFloat(rawValue: 0x003C).value == 60)
        #expect(MedicalSFloat(rawValue: 0xF09F).value == 15.9)
    }

    @Test func negativeMantissaAndExponentLimits() {
        // mantissa 0xFFF = -1, exponent 0xF = -1 -> -0.1
        #expect(MedicalSFloat(rawValue: 0xFFFF).value == -0.1)
        // mantissa 0x800 with a non-zero exponent is an ordinary number: -2048 × 10^1
        #expect(MedicalSFloat(rawValue: 0x1800).value == -20480)
        // exponent 7 (largest), mantissa 1 -> 10^7; exponent -8 (smallest), mantissa 5 -> 5e-8
        #expect(MedicalSFloat(rawValue: 0x7001).value == 10_000_000)
        #expect(MedicalSFloat(rawValue: 0x8005).value == 5e-8)
    }

    @Test(arguments: [
        (UInt16(0x07FF), MedicalFloatSpecial.notANumber),
        (0x0800, .notAtThisResolution),
        (0x07FE, .positiveInfinity),
        (0x0802, .negativeInfinity),
        (0x0801, .reserved),
    ])
    func specialValuesHaveNoNumber(raw: UInt16, special: MedicalFloatSpecial) {
        let sfloat = MedicalSFloat(rawValue: raw)
        #expect(sfloat.special == special)
        #expect(sfloat.value == nil)
        #expect(sfloat.scaled(byPowerOfTen: -2) == nil)
        #expect(sfloat.description == special.rawValue)
    }

    /// research/ble-protocols.md: a suite with a biased exponent reads `78 80` as 120 mmHg.
    /// Per the standard the exponent is plain two's complement: 0x8 = -8, so 120 × 10^-8.
    @Test func biasedExponentTrapIsNotFollowed() {
        let sfloat = MedicalSFloat(rawValue: 0x8078)
        #expect(sfloat.exponent == -8)
        #expect(sfloat.mantissa == 120)
        #expect(sfloat.value == 120e-8)
        #expect(sfloat.value != 120)
    }

    @Test func scalingIsOneRounding() {
        // 98 % as a fraction is the double nearest 0.98, not 98 × 0.01.
        #expect(MedicalSFloat(rawValue: 0x0062).scaled(byPowerOfTen: -2) == 0.98)
        // 0.00095 kg/L (95e-5) in mg/dL is exactly 95.
        #expect(MedicalSFloat(rawValue: 0xB05F).scaled(byPowerOfTen: 5) == 95)
    }
}
