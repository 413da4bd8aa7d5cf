/// Xiaomi's own formula (Mi Fit / Zepp Life, reverse-engineered), for Mi Body Composition
/// scales whose owners want the numbers the vendor app shows.
///
/// The equations are the public reverse engineering of the Zepp Life app (prototux's
/// MIBCS-reverse-engineering, as maintained by the bodymiscale Home Assistant integration and
/// openScale's `BodyMiScaleLib`):
/// - lean mass coefficient L = 9.058·H²/10⁴ + 0.32·W + 12.226 − 0.0068·R − 0.0542·age;
/// - body fat = 1 − (L − a)·c / W with a = 0.8 (men) or 9.25 / 7.25 (women ≤ 49 / older) and
///   c = 0.98 for men under 61 kg, for women 0.96 above 60 kg or 1.02 under 50 kg (×1.03 when
///   taller than 160 cm), else 1;
/// - water = (1 − fat)·0.7, then ×1.02 when at most 50 % or ×0.98 above;
/// - bone = −(b − 0.05158·L) with b = 0.18016894 (men) or 0.245691014 (women), then +0.1 above
///   2.2 kg or −0.1 otherwise;
/// - visceral fat rating and basal metabolic rate by the app's equations (below).
///
/// The app clamps its results (a fat above 63 % shown as 75 %, bone above 5.2 kg as 8 kg...);
/// ingestd never does: a weighing whose result leaves the plausible range derives nothing and
/// says why. Valid for ages 10–90, impedance 150–1,500 Ω (the app's own input range),
/// height 100–230 cm, body mass 20–200 kg. Lean body mass is W·(1 − fat); the app's "muscle"
/// (W − fat − bone) is not skeletal muscle and is not derived.
public struct XiaomiBodyComposition: BodyCompositionFormula {
    public let name = "xiaomi"
    public let version = 1
    public let limits = BodyCompositionLimits(ages: 10...90, impedance: 150...1500, height: 100...230, weight: 20...200)

    public init() {}

    public func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal> {
        if let refusal = limits.refusal(of: input) { return .failure(refusal) }
        let male = input.sex == .male
        let w = input.weightKilograms
        let h = input.heightCentimetres
        let age = Double(input.ageYears)
        let lean = (h * 9.058 / 100) * (h / 100) + w * 0.32 + 12.226 - input.impedanceOhms * 0.0068 - age * 0.0542

        var adjustment = 0.8
        var coefficient = 1.0
        if male {
            if w < 61 { coefficient = 0.98 }
        } else {
            adjustment = input.ageYears <= 49 ? 9.25 : 7.25
            if w > 60 {
                coefficient = 0.96 * (h > 160 ? 1.03 : 1)
            } else if w < 50 {
                coefficient = 1.02 * (h > 160 ? 1.03 : 1)
            }
        }
        let fat = 1 - (lean - adjustment) * coefficient / w

        var water = (1 - fat) * 0.7
        water *= water <= 0.5 ? 1.02 : 0.98

        var bone = -((male ? 0.18016894 : 0.245691014) - lean * 0.05158)
        bone += bone > 2.2 ? 0.1 : -0.1

        let visceral: Double
        if male {
            visceral = h < w * 1.6 + 63
                ? age * 0.15 + (w * 305 / (h * 0.0826 * h - h * 0.4 + 48) - 2.9)
                : age * 0.15 + (w * (h * -0.0015 + 0.765) - h * 0.143) - 5
        } else {
            visceral = w <= h * 0.5 - 13
                ? age * 0.07 + (w * (h * -0.0024 + 0.691) - h * 0.027) - 10.5
                : age * 0.07 + (w * 500 / (h * 1.45 + h * 0.1158 * h - 120) - 6)
        }
        let metabolicRate = male
            ? 877.8 + w * 14.916 - h * 0.726 - age * 8.976
            : 864.6 + w * 10.2036 - h * 0.39336 - age * 6.204

        let result = BodyCompositionResult(
            bodyFatFraction: fat,
            leanBodyMassKilograms: w * (1 - fat),
            bodyWaterFraction: water,
            skeletalMuscleMassKilograms: nil,
            boneMassKilograms: bone,
            visceralFatRating: visceral,
            basalMetabolicRateKilocaloriesPerDay: metabolicRate,
            bodyMassIndex: BodyCompositionChecks.bodyMassIndex(input))
        if let refusal = BodyCompositionChecks.plausibility(result) { return .failure(refusal) }
        return .success(result)
    }
}
