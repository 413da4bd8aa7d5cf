/// The default formula: published, peer-reviewed single-frequency BIA equations.
///
/// - Fat-free mass: Sun et al. 2003 (NHANES III), as printed in the Institute of Medicine's
///   Dietary Reference Intakes for Energy (2005), appendix H:
///   men −10.68 + 0.65·H²/R + 0.26·W + 0.02·R, women −9.53 + 0.69·H²/R + 0.17·W + 0.02·R
///   (H cm, R Ω, W kg). Body fat = (W − FFM) / W.
/// - Total body water: Sun et al. 2003: men 1.20 + 0.45·H²/R + 0.18·W, women
///   3.75 + 0.45·H²/R + 0.11·W (litres; × 0.9934 kg/L, water at 37 °C).
/// - Skeletal muscle mass: Janssen et al. 2000, 0.401·H²/R + 3.825·(male) − 0.071·age + 5.102.
/// - Basal metabolic rate: Katch–McArdle, 370 + 21.6·FFM kcal/day.
/// - No bone mass or visceral fat: there is no established single-frequency equation for them.
///
/// Valid for adults 18–86 years (Janssen's sample; Sun's was 12–94), impedance 150–1,500 Ω,
/// height 100–230 cm, body mass 20–300 kg. The equations were developed with hand-to-foot
/// analysers; a foot-to-foot scale's impedance is higher, so absolute values are estimates and
/// trends are what they are good for.
public struct StandardBodyComposition: BodyCompositionFormula {
    public let name = "standard"
    public let version = 1
    public let limits = BodyCompositionLimits(ages: 18...86, impedance: 150...1500, height: 100...230, weight: 20...300)

    public init() {}

    public func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal> {
        if let refusal = limits.refusal(of: input) { return .failure(refusal) }
        let male = input.sex == .male
        let w = input.weightKilograms
        let r = input.impedanceOhms
        let index = input.heightCentimetres * input.heightCentimetres / r
        let fatFree = male ? -10.68 + 0.65 * index + 0.26 * w + 0.02 * r : -9.53 + 0.69 * index + 0.17 * w + 0.02 * r
        guard fatFree > 0, fatFree < w else {
            return .failure(.impossibleResult(name: "fat-free mass", value: fatFree, valid: 0...w))
        }
        let waterLitres = male ? 1.20 + 0.45 * index + 0.18 * w : 3.75 + 0.45 * index + 0.11 * w
        let muscle = 0.401 * index + (male ? 3.825 : 0) - 0.071 * Double(input.ageYears) + 5.102
        let result = BodyCompositionResult(
            bodyFatFraction: (w - fatFree) / w,
            leanBodyMassKilograms: fatFree,
            bodyWaterFraction: waterLitres * 0.9934 / w,
            skeletalMuscleMassKilograms: muscle,
            boneMassKilograms: nil,
            visceralFatRating: nil,
            basalMetabolicRateKilocaloriesPerDay: 370 + 21.6 * fatFree,
            bodyMassIndex: BodyCompositionChecks.bodyMassIndex(input))
        if let refusal = BodyCompositionChecks.plausibility(result) { return .failure(refusal) }
        return .success(result)
    }
}
