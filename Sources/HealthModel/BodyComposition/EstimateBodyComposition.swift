/// Impedance-free estimates for weighings without an impedance (a plain scale, an imported
/// weight, a Mi scale weighed in socks), from body mass, height, age and sex alone. Much less
/// accurate than any impedance formula: population averages for a person of that build.
///
/// - Body fat: Gallagher et al. 2000 (Am J Clin Nutr 72:694, four-compartment criterion; ages
///   20–79): 64.5 − 848 / BMI + 0.079·age − 16.4·male + 0.05·male·age + 39.0·male / BMI;
///   for ages 18 and 19 (under Gallagher's sample), Deurenberg et al. 1991 (Br J Nutr 65:105,
///   adult equation): 1.20·BMI + 0.23·age − 10.8·male − 5.4 (male = 1 for men, 0 for women).
/// - Lean body mass: Boer 1984: men 0.407·W + 0.267·H − 19.2, women 0.252·W + 0.473·H − 48.3.
/// - Basal metabolic rate: Mifflin, St Jeor et al. 1990: 10·W + 6.25·H − 5·age + 5 (men) or
///   − 161 (women) kcal/day.
/// - BMI: W / h². No water, muscle, bone or visceral fat: there is nothing to estimate them from.
///
/// Valid for ages 18–79, height 100–230 cm, body mass 20–300 kg; results outside the plausible
/// ranges are refused, never clamped. The US Navy circumference method needs neck and waist
/// circumferences, which ingestd does not have.
public struct EstimateBodyComposition: BodyCompositionFormula {
    public let name = "estimate"
    public let version = 1
    public let limits = BodyCompositionLimits(ages: 18...79, impedance: nil, height: 100...230, weight: 20...300)

    public init() {}

    /// Gallagher 2000 body fat in percent (ages 20–79).
    public static func gallagherFatPercent(bodyMassIndex bmi: Double, ageYears age: Int, male: Bool) -> Double {
        let m = male ? 1.0 : 0
        let a = Double(age)
        return 64.5 - 848 / bmi + 0.079 * a - 16.4 * m + 0.05 * m * a + 39.0 * m / bmi
    }

    /// Deurenberg 1991 (adults) body fat in percent.
    public static func deurenbergFatPercent(bodyMassIndex bmi: Double, ageYears age: Int, male: Bool) -> Double {
        1.20 * bmi + 0.23 * Double(age) - (male ? 10.8 : 0) - 5.4
    }

    /// Boer 1984 lean body mass in kilograms.
    public static func boerLeanBodyMass(weightKilograms w: Double, heightCentimetres h: Double, male: Bool) -> Double {
        male ? 0.407 * w + 0.267 * h - 19.2 : 0.252 * w + 0.473 * h - 48.3
    }

    /// Mifflin-St Jeor 1990 resting energy expenditure in kcal/day.
    public static func mifflinStJeor(weightKilograms w: Double, heightCentimetres h: Double, ageYears age: Int, male: Bool) -> Double {
        10 * w + 6.25 * h - 5 * Double(age) + (male ? 5 : -161)
    }

    public func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal> {
        if let refusal = limits.refusal(of: input) { return .failure(refusal) }
        let male = input.sex == .male
        let w = input.weightKilograms
        let h = input.heightCentimetres
        let bmi = BodyCompositionChecks.bodyMassIndex(input)
        let fatPercent = input.ageYears >= 20
            ? Self.gallagherFatPercent(bodyMassIndex: bmi, ageYears: input.ageYears, male: male)
            : Self.deurenbergFatPercent(bodyMassIndex: bmi, ageYears: input.ageYears, male: male)
        let lean = Self.boerLeanBodyMass(weightKilograms: w, heightCentimetres: h, male: male)
        guard lean.isFinite, lean > 0, lean < w else {
            return .failure(.impossibleResult(name: "lean body mass", value: lean, valid: 0...w))
        }
        let result = BodyCompositionResult(
            bodyFatFraction: fatPercent / 100,
            leanBodyMassKilograms: lean,
            bodyWaterFraction: nil,
            skeletalMuscleMassKilograms: nil,
            boneMassKilograms: nil,
            visceralFatRating: nil,
            basalMetabolicRateKilocaloriesPerDay: Self.mifflinStJeor(weightKilograms: w, heightCentimetres: h,
                                                                     ageYears: input.ageYears, male: male),
            bodyMassIndex: bmi)
        if let refusal = BodyCompositionChecks.plausibility(result) { return .failure(refusal) }
        return .success(result)
    }
}
