@testable import HealthModel
import Testing

/// The QN (Trisa equations), Xiaomi S400 dual-frequency and impedance-free formulas (issue 27),
/// against published test vectors (openScale's `TrisaBodyAnalyzeLibTest` and
/// `S400BodyCompositionTest`, each named below) and values computed by hand from the
/// published equations (the arithmetic is in the comments).
@Suite struct MoreBodyCompositionFormulasTests {
    static func close(_ value: Double?, _ expected: Double, within tolerance: Double) -> Bool {
        guard let value else { return false }
        return abs(value - expected) <= tolerance
    }

    // MARK: QN / Trisa

    /// openScale's TrisaBodyAnalyzeLibTest regression fixtures (computed there in Float: 1e-3).
    @Test(arguments: [
        (true, 30, 180.0, 80.0, 500.0, 24.691359, 57.031845, 23.186619, 40.767307, 4.254889),
        (false, 28, 165.0, 60.0, 520.0, 22.038567, 51.246567, 27.63467, 32.776436, 4.575968),
        (true, 45, 175.0, 95.0, 430.0, 31.020409, 51.385693, 34.484245, 30.524948, 3.1716952),
        (false, 55, 160.0, 50.0, 600.0, 19.53125, 55.407524, 26.659752, 27.356312, 3.8092093),
        (true, 20, 190.0, 65.0, 480.0, 18.00554, 64.203964, 10.668964, 49.972504, 5.2273664),
        (false, 40, 170.0, 70.0, 800.0, 24.221453, 47.909973, 35.216103, 27.238312, 3.7960525),
    ])
    func trisaEquationsMatchThePublishedFixtures(_ male: Bool, _ age: Int, _ height: Double, _ weight: Double, _ z: Double,
                                                 _ bmi: Double, _ water: Double, _ fat: Double, _ muscle: Double, _ bone: Double) {
        let metres = height / 100
        let values = TrisaEquations(male: male, ageYears: Double(age), bodyMassIndex: weight / (metres * metres), impedance: z)
        #expect(Self.close(values.bodyMassIndex, bmi, within: 1e-3))
        #expect(Self.close(values.waterPercent, water, within: 1e-3))
        #expect(Self.close(values.fatPercent, fat, within: 1e-3))
        #expect(Self.close(values.musclePercent, muscle, within: 1e-3))
        #expect(Self.close(values.boneKilograms, bone, within: 1e-3))
    }

    @Test func qnFormulaConvertsTheRawResistanceFirst() throws {
        // The QN ES-30M capture's weighing (60 kg, 509 Ω) of a woman of 45, 165 cm.
        let input = BodyCompositionInput(weightKilograms: 60, impedanceOhms: 509, heightCentimetres: 165, ageYears: 45, sex: .female)
        let result = try QNBodyComposition().derive(input).get()
        // Z = 0.3·(509 − 400) = 32.7; BMI = 60 / 1.65² = 22.038567.
        // Fat = 22.038567·(1.506 + 0.0003908·32.7) + 4.5 − 12.834 = 25.137717 %.
        #expect(Self.close(result.bodyFatFraction, 0.25137717, within: 1e-8))
        // Water = 77.721 − 1.148·22.038567 − 0.00573·32.7 + 0.06448·45 = 55.134954 %.
        #expect(Self.close(result.bodyWaterFraction, 0.55134954, within: 1e-8))
        // Muscle = 57.0 − 0.694·22.038567 − 0.00344·32.7 − 0.255·45 = 30.117746 % of 60 kg = 18.070648 kg.
        #expect(Self.close(result.skeletalMuscleMassKilograms, 18.070648, within: 1e-6))
        // Bone = 7.98 − 0.0973·22.038567 − 0.000484·32.7 − 0.036·45 = 4.199821 kg.
        #expect(Self.close(result.boneMassKilograms, 4.199821, within: 1e-6))
        #expect(Self.close(result.leanBodyMassKilograms, 60 * (1 - 0.25137717), within: 1e-6))
        #expect(result.visceralFatRating == nil && result.basalMetabolicRateKilocaloriesPerDay == nil)
    }

    @Test func qnRefusesTheResistanceTheLibraryReplacesByAConstant() {
        // openScale substitutes 3.0 below 410 Ω; that is a clamp, so nothing is derived.
        let input = BodyCompositionInput(weightKilograms: 60, impedanceOhms: 405, heightCentimetres: 165, ageYears: 45, sex: .female)
        #expect(QNBodyComposition().derive(input) == .failure(.impedanceOutsideFormula(405, valid: 410...1500)))
        var zero = input
        zero.impedanceOhms = 0
        #expect(QNBodyComposition().derive(zero) == .failure(.impedanceOutsideFormula(0, valid: 410...1500)))
    }

    // MARK: Xiaomi S400

    static func s400(_ age: Int, _ male: Bool, _ height: Double, _ weight: Double, high: Double, low: Double) -> BodyCompositionInput {
        BodyCompositionInput(weightKilograms: weight, impedanceOhms: low, heightCentimetres: height, ageYears: age,
                             sex: male ? .male : .female, highFrequencyImpedanceOhms: high)
    }

    /// openScale's S400BodyCompositionTest §7.1–7.3 reference subjects, with its tolerances
    /// (0.05 kg, 0.1 %, 5 kcal).
    @Test func s400MatchesThePublishedReferenceSubjects() throws {
        let a = try S400BodyComposition().derive(Self.s400(27, true, 172, 76.5, high: 365, low: 402)).get()
        #expect(Self.close(a.bodyWaterFraction.map { $0 * 76.5 }, 48.13, within: 0.05))
        #expect(Self.close(a.bodyWaterFraction.map { $0 * 100 }, 62.9, within: 0.1))
        #expect(Self.close(a.leanBodyMassKilograms, 65.75, within: 0.05))
        #expect(Self.close(a.bodyFatFraction * 100, 14.1, within: 0.1))
        #expect(Self.close(a.skeletalMuscleMassKilograms, 36.56, within: 0.05))
        #expect(Self.close(a.boneMassKilograms, 2.99, within: 0.05))
        #expect(Self.close(a.visceralFatRating, 13.2, within: 0.1))
        #expect(Self.close(a.basalMetabolicRateKilocaloriesPerDay, 1790, within: 5))

        let b = try S400BodyComposition().derive(Self.s400(55, false, 162, 68, high: 600, low: 690)).get()
        #expect(Self.close(b.bodyWaterFraction.map { $0 * 68 }, 29.12, within: 0.05))
        #expect(Self.close(b.leanBodyMassKilograms, 39.79, within: 0.05))
        #expect(Self.close(b.bodyFatFraction * 100, 41.5, within: 0.1))
        #expect(Self.close(b.skeletalMuscleMassKilograms, 17.14, within: 0.05))
        #expect(Self.close(b.boneMassKilograms, 2.47, within: 0.05))
        #expect(Self.close(b.basalMetabolicRateKilocaloriesPerDay, 1229, within: 5))
        // 68 kg is not above 0.5·162 − 13 = 68: the library's equation for her gives −61.4 (shown as 1); left out.
        #expect(b.visceralFatRating == nil)

        let c = try S400BodyComposition().derive(Self.s400(70, true, 170, 80, high: 520, low: 610)).get()
        #expect(Self.close(c.bodyWaterFraction.map { $0 * 80 }, 38.34, within: 0.05))
        #expect(Self.close(c.leanBodyMassKilograms, 52.37, within: 0.05))
        #expect(Self.close(c.bodyFatFraction * 100, 34.5, within: 0.1))
        #expect(Self.close(c.skeletalMuscleMassKilograms, 24.22, within: 0.05))
        #expect(Self.close(c.boneMassKilograms, 2.84, within: 0.05))
        #expect(Self.close(c.basalMetabolicRateKilocaloriesPerDay, 1501, within: 5))
    }

    @Test func s400SwapsImpedancesSentInEachOthersPlace() throws {
        // §7.4: subject A with the two impedances swapped gives subject A.
        let swapped = try S400BodyComposition().derive(Self.s400(27, true, 172, 76.5, high: 402, low: 365)).get()
        let straight = try S400BodyComposition().derive(Self.s400(27, true, 172, 76.5, high: 365, low: 402)).get()
        #expect(swapped == straight)
    }

    @Test func s400RefusesWhatItsValidationRefuses() {
        let formula = S400BodyComposition()
        // §7.5: impedances within 1 % ((398 − 395) / 395 = 0.76 %): poor contact.
        #expect(formula.derive(Self.s400(30, true, 180, 85, high: 395, low: 398))
            == .failure(.unreliableContact(lowFrequency: 398, highFrequency: 395)))
        // Under 18.
        #expect(formula.derive(Self.s400(10, true, 140, 35, high: 500, low: 600)) == .failure(.ageOutsideFormula(10, valid: 18...120)))
        // BMI 250 / 1.5² = 111 (the body mass, 250 kg, is just inside its range).
        guard case .failure(.bodyMassIndexOutsideFormula(let bmi, 12...60)) = formula.derive(Self.s400(40, true, 150, 250, high: 500, low: 600)) else {
            Issue.record("BMI 111 was not refused"); return
        }
        #expect(Self.close(bmi, 111.11, within: 0.01))
        // An impedance of 50 Ω, and the scale's "no contact" values.
        #expect(formula.derive(Self.s400(30, true, 175, 75, high: 50, low: 600)) == .failure(.impedanceOutsideFormula(50, valid: 200...1500)))
        #expect(formula.derive(Self.s400(30, true, 175, 75, high: 500, low: 65535)) == .failure(.impedanceOutsideFormula(65535, valid: 200...1500)))
        var single = Self.s400(30, true, 175, 75, high: 500, low: 600)
        single.highFrequencyImpedanceOhms = nil
        #expect(formula.derive(single) == .failure(.highFrequencyImpedanceMissing))
    }

    @Test func s400WithTheRealCapture() throws {
        // The S400 capture (xiaomi-ble's test frames: 69.9 kg, 497.6 Ω at 250 kHz, 543.2 Ω at 50 kHz), a man of 30, 180 cm.
        let result = try S400BodyComposition().derive(Self.s400(30, true, 180, 69.9, high: 497.6, low: 543.2)).get()
        // H²/(1.1·R_H) = 32400 / 547.36 = 59.19322; TBW = 1.20 + 0.45·59.19322 + 0.18·69.9 = 40.41895 kg (57.82 %).
        #expect(Self.close(result.bodyWaterFraction, 0.5782396, within: 1e-6))
        // FFM = 40.41895 / 0.732 = 55.21714 kg; fat = 14.68286 / 69.9 = 21.0055 %.
        #expect(Self.close(result.leanBodyMassKilograms, 55.217142, within: 1e-5))
        #expect(Self.close(result.bodyFatFraction, 0.2100552, within: 1e-6))
        // Janssen: 0.401·59.19322 + 3.825 − 2.13 + 5.102 = 30.53348 kg; BMR 370 + 21.6·55.21714 = 1562.69.
        #expect(Self.close(result.skeletalMuscleMassKilograms, 30.533481, within: 1e-5))
        #expect(Self.close(result.basalMetabolicRateKilocaloriesPerDay, 1562.690, within: 1e-2))
        // Bone: L = 29.34792 + 22.368 + 12.226 − 3.38368 − 1.626 = 58.93224; 0.05158·L − 0.18017 + 0.1 = 2.95956 kg.
        #expect(Self.close(result.boneMassKilograms, 2.959556, within: 1e-5))
        // 180 ≥ 1.6·69.9: (0.765 − 0.27)·69.9 − 25.74 + 4.5 − 5 = 8.3605.
        #expect(Self.close(result.visceralFatRating, 8.3605, within: 1e-6))
    }

    // MARK: Impedance-free estimates

    static let noImpedance = Double.nan

    @Test func estimatesForAManWithoutImpedance() throws {
        let input = BodyCompositionInput(weightKilograms: 80, impedanceOhms: Self.noImpedance, heightCentimetres: 180, ageYears: 30, sex: .male)
        let result = try EstimateBodyComposition().derive(input).get()
        // BMI 24.691358. Gallagher 2000: 64.5 − 848/24.691358 + 2.37 − 16.4 + 1.5 + 39/24.691358
        //   = 64.5 − 34.344 + 2.37 − 16.4 + 1.5 + 1.5795 = 19.2055 %.
        #expect(Self.close(result.bodyFatFraction, 0.192055, within: 1e-9))
        // Boer 1984: 0.407·80 + 0.267·180 − 19.2 = 61.42 kg.
        #expect(Self.close(result.leanBodyMassKilograms, 61.42, within: 1e-9))
        // Mifflin-St Jeor: 800 + 1125 − 150 + 5 = 1780 kcal/day.
        #expect(Self.close(result.basalMetabolicRateKilocaloriesPerDay, 1780, within: 1e-9))
        #expect(result.bodyWaterFraction == nil && result.skeletalMuscleMassKilograms == nil && result.boneMassKilograms == nil
                && result.visceralFatRating == nil)
    }

    @Test func estimatesForAWomanAndForAgesUnderGallaghersSample() throws {
        let woman = BodyCompositionInput(weightKilograms: 62, impedanceOhms: Self.noImpedance, heightCentimetres: 165, ageYears: 45, sex: .female)
        let result = try EstimateBodyComposition().derive(woman).get()
        // BMI 22.773186; Gallagher: 64.5 − 848/22.773186 + 0.079·45 = 30.818226 %.
        #expect(Self.close(result.bodyFatFraction, 0.30818226, within: 1e-8))
        // Boer: 0.252·62 + 0.473·165 − 48.3 = 45.369 kg; Mifflin: 620 + 1031.25 − 225 − 161 = 1265.25.
        #expect(Self.close(result.leanBodyMassKilograms, 45.369, within: 1e-9))
        #expect(Self.close(result.basalMetabolicRateKilocaloriesPerDay, 1265.25, within: 1e-9))
        // At 19 (Gallagher's sample began at 20): Deurenberg 1991, 1.2·24.691358 + 0.23·19 − 10.8 − 5.4 = 17.7996 %.
        let young = BodyCompositionInput(weightKilograms: 80, impedanceOhms: Self.noImpedance, heightCentimetres: 180, ageYears: 19, sex: .male)
        #expect(Self.close(try EstimateBodyComposition().derive(young).get().bodyFatFraction, 0.1779963, within: 1e-7))
    }

    @Test func estimatesRefuseWhatTheirEquationsDoNotCover() {
        let formula = EstimateBodyComposition()
        var input = BodyCompositionInput(weightKilograms: 80, impedanceOhms: Self.noImpedance, heightCentimetres: 180, ageYears: 12, sex: .male)
        #expect(formula.derive(input) == .failure(.ageOutsideFormula(12, valid: 18...79)))
        input.ageYears = 30
        input.heightCentimetres = 0
        #expect(formula.derive(input) == .failure(.heightOutsideFormula(0, valid: 100...230)))
        input.heightCentimetres = 180
        input.sex = .other
        #expect(formula.derive(input) == .failure(.sexNotCovered(.other)))
        // A very light, tall woman: Gallagher's fat goes below 2 %; refused, not clamped.
        let thin = BodyCompositionInput(weightKilograms: 40, impedanceOhms: Self.noImpedance, heightCentimetres: 200, ageYears: 20, sex: .female)
        guard case .failure(.impossibleResult) = formula.derive(thin) else {
            Issue.record("an impossible estimate was not refused: \(formula.derive(thin))"); return
        }
    }

    @Test func theEstimateChoiceIsStandardWithAnImpedanceAndEstimatesWithout() {
        #expect(BodyCompositionChoice.estimate.formula(vendorFormula: XiaomiBodyComposition())?.name == "standard")
        #expect(BodyCompositionChoice.estimate.formulaWithoutImpedance?.name == "estimate")
        #expect(BodyCompositionChoice.standard.formulaWithoutImpedance == nil)
        #expect(BodyCompositionChoice.vendor.formulaWithoutImpedance == nil)
    }
}
