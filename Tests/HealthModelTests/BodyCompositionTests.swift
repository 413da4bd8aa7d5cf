import HealthModel
import Testing

/// The body-composition formulas against values computed by hand from the published equations
/// (each expectation says which), and their refusals: no formula clamps a value into range.
@Suite struct BodyCompositionTests {
    static let man = BodyCompositionInput(weightKilograms: 80, impedanceOhms: 500, heightCentimetres: 180, ageYears: 30, sex: .male)
    static let woman = BodyCompositionInput(weightKilograms: 62, impedanceOhms: 600, heightCentimetres: 165, ageYears: 45, sex: .female)

    static func derived(_ formula: some BodyCompositionFormula, _ input: BodyCompositionInput) throws -> BodyCompositionResult {
        try formula.derive(input).get()
    }

    static func close(_ value: Double?, _ expected: Double, within tolerance: Double = 1e-9) -> Bool {
        guard let value else { return false }
        return abs(value - expected) <= tolerance
    }

    @Test func standardFormulaForAMan() throws {
        // H²/R = 180² / 500 = 64.8.
        let result = try Self.derived(StandardBodyComposition(), Self.man)
        // Sun 2003 (IOM appendix H): FFM = −10.68 + 0.65·64.8 + 0.26·80 + 0.02·500 = 62.24 kg.
        #expect(Self.close(result.leanBodyMassKilograms, 62.24))
        // Fat = (80 − 62.24) / 80 = 0.222.
        #expect(Self.close(result.bodyFatFraction, 0.222))
        // TBW = 1.20 + 0.45·64.8 + 0.18·80 = 44.76 L; × 0.9934 kg/L / 80 kg = 0.555807.
        #expect(Self.close(result.bodyWaterFraction, 0.5558073))
        // Janssen 2000: 0.401·64.8 + 3.825 − 0.071·30 + 5.102 = 32.7818 kg.
        #expect(Self.close(result.skeletalMuscleMassKilograms, 32.7818))
        // Katch–McArdle: 370 + 21.6·62.24 = 1714.384 kcal/day.
        #expect(Self.close(result.basalMetabolicRateKilocaloriesPerDay, 1714.384))
        // BMI = 80 / 1.8² = 24.69.
        #expect(Self.close(result.bodyMassIndex, 24.691358024691358))
        #expect(result.boneMassKilograms == nil && result.visceralFatRating == nil)
    }

    @Test func standardFormulaForAWoman() throws {
        // H²/R = 165² / 600 = 45.375.
        let result = try Self.derived(StandardBodyComposition(), Self.woman)
        // FFM = −9.53 + 0.69·45.375 + 0.17·62 + 0.02·600 = 44.31875 kg; fat = 17.68125 / 62.
        #expect(Self.close(result.leanBodyMassKilograms, 44.31875))
        #expect(Self.close(result.bodyFatFraction, 0.2851814516129032))
        // TBW = 3.75 + 0.45·45.375 + 0.11·62 = 30.98875 L.
        #expect(Self.close(result.bodyWaterFraction, 0.4965197459677419))
        // Janssen: 0.401·45.375 − 0.071·45 + 5.102 = 20.102375 kg (no male term).
        #expect(Self.close(result.skeletalMuscleMassKilograms, 20.102375))
    }

    @Test func xiaomiFormulaForAMan() throws {
        // The Mi scale capture's weighing (85.15 kg, 428 Ω) of a 30-year-old man, 180 cm.
        let input = BodyCompositionInput(weightKilograms: 85.15, impedanceOhms: 428, heightCentimetres: 180, ageYears: 30, sex: .male)
        let result = try Self.derived(XiaomiBodyComposition(), input)
        // L = 9.058·1.8² + 0.32·85.15 + 12.226 − 0.0068·428 − 0.0542·30
        //   = 29.34792 + 27.248 + 12.226 − 2.9104 − 1.626 = 64.28552.
        // Men at 61 kg or more: fat = 1 − (L − 0.8) / W = 1 − 63.48552 / 85.15.
        #expect(Self.close(result.bodyFatFraction, 0.2544272460364063))
        // Water = (1 − fat)·0.7 = 0.52189…, above 50 %: × 0.98.
        #expect(Self.close(result.bodyWaterFraction, 0.5114629092190253))
        // Bone = 0.05158·L − 0.18016894 = 3.13568 kg, above 2.2: + 0.1.
        #expect(Self.close(result.boneMassKilograms, 3.2356781816))
        // 180 < 85.15·1.6 + 63: 0.15·30 + 85.15·305 / (0.0826·180² − 0.4·180 + 48) − 2.9
        //   = 4.5 + 25970.75 / 2652.24 − 2.9.
        #expect(Self.close(result.visceralFatRating, 11.392006002473382))
        // BMR = 877.8 + 14.916·85.15 − 0.726·180 − 8.976·30 = 877.8 + 1270.0974 − 130.68 − 269.28.
        #expect(Self.close(result.basalMetabolicRateKilocaloriesPerDay, 1747.9374))
        #expect(result.skeletalMuscleMassKilograms == nil)
    }

    @Test func xiaomiFormulaForAWoman() throws {
        let result = try Self.derived(XiaomiBodyComposition(), Self.woman)
        // L = 9.058·1.65² + 0.32·62 + 12.226 − 0.0068·600 − 0.0542·45
        //   = 24.660405 + 19.84 + 12.226 − 4.08 − 2.439 = 50.207405.
        // Women ≤ 49: a = 9.25; above 60 kg and taller than 160 cm: c = 0.96·1.03;
        // fat = 1 − 40.957405·0.9888 / 62.
        #expect(Self.close(result.bodyFatFraction, 0.3467954505806452))
        // 62 ≤ 0.5·165 − 13 = 69.5: 0.07·45 + (62·(0.691 − 0.0024·165) − 0.027·165) − 10.5 = 6.485.
        #expect(Self.close(result.visceralFatRating, 6.485, within: 1e-9))
        // BMR = 864.6 + 10.2036·62 − 0.39336·165 − 6.204·45 = 1153.1388.
        #expect(Self.close(result.basalMetabolicRateKilocaloriesPerDay, 1153.1388, within: 1e-9))
    }

    @Test func yunmaiFormulaForAMan() throws {
        let result = try Self.derived(YunmaiBodyComposition(), Self.man)
        // r = (500 − 100) / 100 = 4 ≥ 1: √4 = 2. Fat = 1.5·80 / 1.8² + 0.08·30 − 10.8 − 7.4 + 2
        //   = 37.037037 + 2.4 − 18.2 + 2 = 23.237037 %.
        #expect(Self.close(result.bodyFatFraction, 0.23237037037037034))
        // Lean = 80 · 76.762963 / 100; water = 76.762963 · 0.726 %; skeletal muscle = 80 · 76.762963 · 0.53 / 100.
        #expect(Self.close(result.leanBodyMassKilograms, 61.41037037037038))
        #expect(Self.close(result.bodyWaterFraction, 0.5572991111111112))
        #expect(Self.close(result.skeletalMuscleMassKilograms, 32.5474962962963))
        // Bone = 80 · (76.762963 · 0.67 %) · 4/7 · 0.22 · 0.6 + (180 − 170) / 100 = 3.2035 kg.
        #expect(Self.close(result.boneMassKilograms, 3.2035046603174613))
        // Visceral: f = 23.237 − 21 > 0, so d = 1.1: 2.237037 / 1.1 + 9.5.
        #expect(Self.close(result.visceralFatRating, 11.533670033670031))
        #expect(result.basalMetabolicRateKilocaloriesPerDay == nil)
    }

    @Test func yunmaiRefusesAFatOutsideItsRangeInsteadOfShowingZero() {
        // A very lean, tall, young man: 1.5·50 / 2² + 0.08·18 − 18.2 + r(400 Ω) = 18.75 + 1.44 − 18.2 + 1.732 = 3.72 %.
        let input = BodyCompositionInput(weightKilograms: 50, impedanceOhms: 400, heightCentimetres: 200, ageYears: 18, sex: .male)
        guard case .failure(.impossibleResult(_, let value, let valid)) = YunmaiBodyComposition().derive(input) else {
            Issue.record("a fat of 3.7 % was not refused: \(YunmaiBodyComposition().derive(input))"); return
        }
        #expect(abs(value - 3.722050807568879) < 1e-9 && valid == 5...75)
    }

    @Test func ageFollowsTheBirthday() {
        let birth = CalendarDate(year: 1990, month: 3, day: 10)!
        #expect(BodyCompositionInput.age(bornOn: birth, on: CalendarDate(year: 2026, month: 3, day: 9)!) == 35)
        #expect(BodyCompositionInput.age(bornOn: birth, on: CalendarDate(year: 2026, month: 3, day: 10)!) == 36)
        #expect(BodyCompositionInput.age(bornOn: birth, on: CalendarDate(year: 1989, month: 1, day: 1)!) == nil)
    }

    @Test(arguments: [StandardBodyComposition() as any BodyCompositionFormula, XiaomiBodyComposition(), YunmaiBodyComposition()])
    func hostileProfilesDeriveNothingAndSayWhy(_ formula: any BodyCompositionFormula) {
        var input = Self.man
        input.impedanceOhms = 0
        #expect(formula.derive(input) == .failure(.impedanceOutsideFormula(0, valid: 150...1500)))
        input.impedanceOhms = 65535
        #expect(formula.derive(input) == .failure(.impedanceOutsideFormula(65535, valid: 150...1500)))
        input = Self.man
        input.heightCentimetres = 0
        guard case .failure(.heightOutsideFormula(0, _)) = formula.derive(input) else {
            Issue.record("height 0 was not refused: \(formula.derive(input))"); return
        }
        input = Self.man
        input.ageYears = 5
        guard case .failure(.ageOutsideFormula(5, _)) = formula.derive(input) else {
            Issue.record("age 5 was not refused"); return
        }
        input = Self.man
        input.sex = .notSet
        #expect(formula.derive(input) == .failure(.sexNotCovered(.notSet)))
        input = Self.man
        input.weightKilograms = .nan
        guard case .failure(.weightOutsideFormula) = formula.derive(input) else {
            Issue.record("NaN body mass was not refused"); return
        }
    }

    @Test func anImpossibleResultIsRefusedNotClamped() {
        // A very light, tall man with a low impedance: Sun's FFM exceeds the body mass.
        let input = BodyCompositionInput(weightKilograms: 40, impedanceOhms: 150, heightCentimetres: 220, ageYears: 30, sex: .male)
        guard case .failure(.impossibleResult(let name, let value, _)) = StandardBodyComposition().derive(input) else {
            Issue.record("an FFM above the body mass was not refused: \(StandardBodyComposition().derive(input))"); return
        }
        #expect(name == "fat-free mass" && value > 40)
        // The Xiaomi app would show 5 % or 75 % here; we refuse.
        guard case .failure(.impossibleResult) = XiaomiBodyComposition().derive(input) else {
            Issue.record("an impossible Xiaomi result was not refused: \(XiaomiBodyComposition().derive(input))"); return
        }
    }

    @Test func refusalsNameTheirValues() {
        #expect(BodyCompositionRefusal.impedanceOutsideFormula(65535, valid: 150...1500).description
            == "impedance 65535 Ω is outside the formula's 150–1500 Ω")
        #expect(BodyCompositionRefusal.ageOutsideFormula(5, valid: 18...86).description == "age 5 is outside the formula's 18–86 years")
    }

    @Test func theChoicePicksAFormula() {
        #expect(BodyCompositionChoice.standard.formula(vendorFormula: XiaomiBodyComposition())?.name == "standard")
        #expect(BodyCompositionChoice.vendor.formula(vendorFormula: XiaomiBodyComposition())?.name == "xiaomi")
        #expect(BodyCompositionChoice.vendor.formula(vendorFormula: nil)?.name == "standard")
        #expect(BodyCompositionChoice.none.formula(vendorFormula: XiaomiBodyComposition()) == nil)
    }
}
