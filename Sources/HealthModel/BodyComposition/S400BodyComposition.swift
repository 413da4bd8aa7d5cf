/// The Xiaomi Body Composition Scale S400's dual-frequency formula, as published by openScale's
/// `S400BodyComposition` (literature equations, no vendor calibration). The scale sends the
/// foot-to-foot impedance at about 50 kHz (R_L, `IngestImpedanceOhm`) and at about 250 kHz
/// (R_H, `IngestImpedanceHighFrequencyOhm`).
///
/// - Validation (the whole weighing is refused outside it): age 18–120, height 100–230 cm,
///   body mass 20–250 kg, both impedances 200–1,500 Ω, BMI 12–60.
/// - R_L below R_H (physically impossible: low frequencies do not cross cell membranes) means
///   the two were sent in each other's place: they are swapped. Impedances within 1 % of each
///   other mean poor contact: nothing is derived.
/// - Both impedances × 1.10 (foot-to-foot to hand-to-foot, Bracco 1996) before the equations.
/// - Total body water, Sun et al. 2003: men 1.20 + 0.45·H²/R_H + 0.18·W, women
///   3.75 + 0.45·H²/R_H + 0.11·W; refused outside 30–75 % of W.
/// - Fat-free mass = TBW / 0.732 (Pace & Rathbun 1945); refused outside 30–97 % of W.
///   Body fat = (W − FFM) / W; refused outside 3–60 % (men) or 8–70 % (women).
/// - Skeletal muscle, Janssen et al. 2000 with the corrected R_H; refused outside 8–75 kg.
/// - Bone, the Mi-app regression on the raw R_H (as `XiaomiBodyComposition`'s, with R_H);
///   refused outside 1–6 kg.
/// - Visceral fat rating, the anthropometric regression of the library (no impedance):
///   men 305·W / (0.0826·H² − 0.4·H + 48) − 2.9 + 0.15·age when H < 1.6·W, else
///   (0.765 − 0.0015·H)·W − 0.143·H + 0.15·age − 5; women 500·W / (1.45·H + 0.1158·H² − 120)
///   − 6 + 0.07·age when W > 0.5·H − 13. Outside 1–30 it is left out, and for the other women
///   too (the library's equation for them subtracts the age and gives negative ratings).
/// - Basal metabolic rate, Cunningham 1991: 370 + 21.6·FFM; refused outside 800–4,000 kcal/day.
///
/// Where the library clamps a value into its range (muscle, bone, rating, BMR), ingestd refuses
/// the weighing (or leaves the rating out) instead.
public struct S400BodyComposition: BodyCompositionFormula {
    public let name = "xiaomi-s400"
    public let version = 1
    public let limits = BodyCompositionLimits(ages: 18...120, impedance: 200...1500, height: 100...230, weight: 20...250)
    /// The BMI range the equations are validated for.
    public static let bodyMassIndexLimits: ClosedRange<Double> = 12...60
    /// Foot-to-foot to hand-to-foot impedance (Bracco 1996, openScale's default).
    public static let footToFootCorrection = 1.10

    public init() {}

    public func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal> {
        if let refusal = limits.refusal(of: input) { return .failure(refusal) }
        guard let sentHigh = input.highFrequencyImpedanceOhms else { return .failure(.highFrequencyImpedanceMissing) }
        guard let range = limits.impedance, sentHigh.isFinite, range.contains(sentHigh) else {
            return .failure(.impedanceOutsideFormula(sentHigh, valid: limits.impedance ?? 200...1500))
        }
        let bmi = BodyCompositionChecks.bodyMassIndex(input)
        guard Self.bodyMassIndexLimits.contains(bmi) else {
            return .failure(.bodyMassIndexOutsideFormula(bmi, valid: Self.bodyMassIndexLimits))
        }
        let low = max(input.impedanceOhms, sentHigh)
        let high = min(input.impedanceOhms, sentHigh)
        guard (low - high) / high >= 0.01 else {
            return .failure(.unreliableContact(lowFrequency: input.impedanceOhms, highFrequency: sentHigh))
        }
        let male = input.sex == .male
        let w = input.weightKilograms
        let h = input.heightCentimetres
        let age = Double(input.ageYears)
        let index = h * h / (high * Self.footToFootCorrection)

        let water = male ? 1.20 + 0.45 * index + 0.18 * w : 3.75 + 0.45 * index + 0.11 * w
        if let refusal = Self.refuse("total body water", water, outside: 0.30 * w...0.75 * w) { return .failure(refusal) }
        let fatFree = water / 0.732
        if let refusal = Self.refuse("fat-free mass", fatFree, outside: 0.30 * w...0.97 * w) { return .failure(refusal) }
        let fatPercent = (w - fatFree) / w * 100
        if let refusal = Self.refuse("body fat percentage", fatPercent, outside: male ? 3...60 : 8...70) { return .failure(refusal) }
        let muscle = 0.401 * index + (male ? 3.825 : 0) - 0.071 * age + 5.102
        if let refusal = Self.refuse("skeletal muscle mass", muscle, outside: 8...75) { return .failure(refusal) }
        let lean = (h * 9.058 / 100) * (h / 100) + 0.32 * w + 12.226 - 0.0068 * high - 0.0542 * age
        var bone = 0.05158 * lean - (male ? 0.18016894 : 0.245691014)
        bone += bone > 2.2 ? 0.1 : -0.1
        if let refusal = Self.refuse("bone mass", bone, outside: 1...6) { return .failure(refusal) }
        let metabolicRate = 370 + 21.6 * fatFree
        if let refusal = Self.refuse("basal metabolic rate", metabolicRate, outside: 800...4000) { return .failure(refusal) }

        let visceral: Double?
        if male {
            visceral = h < 1.6 * w
                ? 305 * w / (0.0826 * h * h - 0.4 * h + 48) - 2.9 + 0.15 * age
                : (0.765 - 0.0015 * h) * w - 0.143 * h + 0.15 * age - 5
        } else {
            visceral = w > 0.5 * h - 13 ? 500 * w / (1.45 * h + 0.1158 * h * h - 120) - 6 + 0.07 * age : nil
        }
        let result = BodyCompositionResult(
            bodyFatFraction: fatPercent / 100,
            leanBodyMassKilograms: fatFree,
            bodyWaterFraction: water / w,
            skeletalMuscleMassKilograms: muscle,
            boneMassKilograms: bone,
            visceralFatRating: visceral.flatMap { (1...30).contains($0) ? $0 : nil },
            basalMetabolicRateKilocaloriesPerDay: metabolicRate,
            bodyMassIndex: bmi)
        if let refusal = BodyCompositionChecks.plausibility(result) { return .failure(refusal) }
        return .success(result)
    }

    private static func refuse(_ name: String, _ value: Double, outside valid: ClosedRange<Double>) -> BodyCompositionRefusal? {
        value.isFinite && valid.contains(value) ? nil : .impossibleResult(name: name, value: value, valid: valid)
    }
}
