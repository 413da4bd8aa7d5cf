/// The QN family's formula (QN-Scale, Renpho, FITINDEX and other scales on QN's chipset), for
/// owners who want numbers close to the vendor app's. QN has not published its app's
/// equations; openScale derives QN weighings with the Trisa Body Analyze equations, which it
/// found to give nearly the vendor's values, after converting the scale's raw resistance:
///
/// - converted impedance Z = 0.3·(R − 400) (openScale's QN handler); below 410 Ω the library
///   substitutes a constant, which ingestd does not: such a weighing derives nothing;
/// - with BMI = W / h² (h in metres), the Trisa equations (`TrisaBodyAnalyzeLib`):
///   - body fat % = BMI·(1.479 + 0.00044·Z) + 0.1·age − 21.764 (men),
///     BMI·(1.506 + 0.0003908·Z) + 0.1·age − 12.834 (women);
///   - body water % = 87.51 − 1.162·BMI − 0.00813·Z + 0.07594·age (men),
///     77.721 − 1.148·BMI − 0.00573·Z + 0.06448·age (women);
///   - muscle % = 74.627 − 0.811·BMI − 0.00565·Z − 0.367·age (men),
///     57.0 − 0.694·BMI − 0.00344·Z − 0.255·age (women), as a share of body mass
///     (skeletal muscle, by its range);
///   - bone (kg) = 7.829 − 0.0855·BMI − 0.000592·Z − 0.0389·age (men),
///     7.98 − 0.0973·BMI − 0.000484·Z − 0.036·age (women);
/// - lean body mass = W·(1 − fat); no visceral fat rating, no basal metabolic rate.
///
/// The library states no limits; ingestd takes adults 18–90 years, raw impedance 410–1,500 Ω,
/// height 100–230 cm, body mass 20–200 kg.
public struct QNBodyComposition: BodyCompositionFormula {
    public let name = "qn"
    public let version = 1
    public let limits = BodyCompositionLimits(ages: 18...90, impedance: 410...1500, height: 100...230, weight: 20...200)

    public init() {}

    /// openScale's conversion of a QN scale's raw resistance to the Trisa equations' impedance.
    public static func trisaImpedance(fromRaw ohms: Double) -> Double { 0.3 * (ohms - 400) }

    public func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal> {
        if let refusal = limits.refusal(of: input) { return .failure(refusal) }
        let values = TrisaEquations(male: input.sex == .male, ageYears: Double(input.ageYears),
                                    bodyMassIndex: BodyCompositionChecks.bodyMassIndex(input),
                                    impedance: Self.trisaImpedance(fromRaw: input.impedanceOhms))
        let w = input.weightKilograms
        let fat = values.fatPercent / 100
        let result = BodyCompositionResult(
            bodyFatFraction: fat,
            leanBodyMassKilograms: w * (1 - fat),
            bodyWaterFraction: values.waterPercent / 100,
            skeletalMuscleMassKilograms: w * values.musclePercent / 100,
            boneMassKilograms: values.boneKilograms,
            visceralFatRating: nil,
            basalMetabolicRateKilocaloriesPerDay: nil,
            bodyMassIndex: values.bodyMassIndex)
        if let refusal = BodyCompositionChecks.plausibility(result) { return .failure(refusal) }
        return .success(result)
    }
}

/// The Trisa Body Analyze equations (as published by openScale's `TrisaBodyAnalyzeLib`), in
/// the library's own impedance unit: percentages of body mass, bone in kilograms.
struct TrisaEquations: Hashable, Sendable {
    var fatPercent: Double
    var waterPercent: Double
    var musclePercent: Double
    var boneKilograms: Double
    var bodyMassIndex: Double

    init(male: Bool, ageYears age: Double, bodyMassIndex bmi: Double, impedance z: Double) {
        bodyMassIndex = bmi
        if male {
            fatPercent = bmi * (1.479 + 4.4e-4 * z) + 0.1 * age - 21.764
            waterPercent = 87.51 - 1.162 * bmi - 0.00813 * z + 0.07594 * age
            musclePercent = 74.627 - 0.811 * bmi - 0.00565 * z - 0.367 * age
            boneKilograms = 7.829 - 0.0855 * bmi - 5.92e-4 * z - 0.0389 * age
        } else {
            fatPercent = bmi * (1.506 + 3.908e-4 * z) + 0.1 * age - 12.834
            waterPercent = 77.721 - 1.148 * bmi - 0.00573 * z + 0.06448 * age
            musclePercent = 57.0 - 0.694 * bmi - 0.00344 * z - 0.255 * age
            boneKilograms = 7.98 - 0.0973 * bmi - 4.84e-4 * z - 0.036 * age
        }
    }
}
