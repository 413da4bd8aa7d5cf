/// Yunmai's own formula (the vendor app's, as published by openScale's `YunmaiLib`), for Yunmai
/// scales whose owners want the numbers the vendor app shows. The "normal" body type (the app's
/// athlete type needs an activity level ingestd does not keep).
///
/// - body fat % = 1.5·W / h² + 0.08·age − 10.8 (men) − 7.4 + r, with h in metres and
///   r = (R − 100) / 100, replaced by √r when r ≥ 1;
/// - water % = (100 − fat) · 0.726;
/// - skeletal muscle = W · (100 − fat) · 0.53 / 100;
/// - bone = W · (100 − fat) · 0.67 / 100 · 4/7 · 0.22 · 0.6 (men) or · 0.34 · 0.45 (women),
///   + (H − 170 cm) / 100;
/// - visceral fat rating = f / d + 9.5 with f = fat − 21 / 22 / 24 (men under 40 / under 60 /
///   older) or − 34 / 35 / 36 (women), d = 1.1 when f > 0, else 1.4 (men) or 1.8 (women);
/// - no basal metabolic rate (the vendor's is not published).
///
/// The app clamps its results (fat outside 5–75 % shown as 0, the rating to 1–30); ingestd
/// never does: a fat outside 5–75 % derives nothing and says why, and a rating outside 1–30
/// is left out. Valid for ages 18–90, impedance 150–1,500 Ω, height 100–230 cm, body mass
/// 20–200 kg.
public struct YunmaiBodyComposition: BodyCompositionFormula {
    public let name = "yunmai"
    public let version = 1
    public let limits = BodyCompositionLimits(ages: 18...90, impedance: 150...1500, height: 100...230, weight: 20...200)

    public init() {}

    public func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal> {
        if let refusal = limits.refusal(of: input) { return .failure(refusal) }
        let male = input.sex == .male
        let w = input.weightKilograms
        let metres = input.heightCentimetres / 100
        var r = (input.impedanceOhms - 100) / 100
        if r >= 1 { r = r.squareRoot() }
        let fatPercent = w * 1.5 / (metres * metres) + Double(input.ageYears) * 0.08 - (male ? 10.8 : 0) - 7.4 + r
        guard (5...75).contains(fatPercent) else {
            return .failure(.impossibleResult(name: "Yunmai body fat percentage", value: fatPercent, valid: 5...75))
        }
        let lean = 100 - fatPercent
        let musclePercent = lean * 0.67
        let bone = w * musclePercent / 100 * 4 / 7 * (male ? 0.22 * 0.6 : 0.34 * 0.45) + (input.heightCentimetres - 170) / 100
        var f = fatPercent
        switch input.ageYears {
        case ..<40: f -= male ? 21 : 34
        case ..<60: f -= male ? 22 : 35
        default: f -= male ? 24 : 36
        }
        let visceral = f / (f > 0 ? 1.1 : male ? 1.4 : 1.8) + 9.5
        let result = BodyCompositionResult(
            bodyFatFraction: fatPercent / 100,
            leanBodyMassKilograms: w * lean / 100,
            bodyWaterFraction: lean * 0.726 / 100,
            skeletalMuscleMassKilograms: w * lean * 0.53 / 100,
            boneMassKilograms: bone,
            visceralFatRating: (1...30).contains(visceral) ? visceral : nil,
            basalMetabolicRateKilocaloriesPerDay: nil,
            bodyMassIndex: BodyCompositionChecks.bodyMassIndex(input))
        if let refusal = BodyCompositionChecks.plausibility(result) { return .failure(refusal) }
        return .success(result)
    }
}
