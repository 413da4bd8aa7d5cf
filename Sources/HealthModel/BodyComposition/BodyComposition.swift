/// What a body-composition formula needs: one weighing with its bioelectrical impedance, and
/// the person's profile at the time of the weighing.
public struct BodyCompositionInput: Hashable, Sendable {
    /// Body mass in kilograms.
    public var weightKilograms: Double
    /// Whole-body impedance in ohms as the scale measured it (foot to foot, about 50 kHz);
    /// NaN for a weighing without one (only impedance-free formulas take such an input).
    public var impedanceOhms: Double
    /// The impedance at a high frequency (about 250 kHz) of a dual-frequency scale (the S400), if sent.
    public var highFrequencyImpedanceOhms: Double?
    /// Height in centimetres.
    public var heightCentimetres: Double
    /// Age in full years on the day of the weighing.
    public var ageYears: Int
    /// The person's biological sex; the formulas have one equation per sex.
    public var sex: BiologicalSex

    public init(weightKilograms: Double, impedanceOhms: Double, heightCentimetres: Double, ageYears: Int, sex: BiologicalSex,
                highFrequencyImpedanceOhms: Double? = nil) {
        self.weightKilograms = weightKilograms
        self.impedanceOhms = impedanceOhms
        self.highFrequencyImpedanceOhms = highFrequencyImpedanceOhms
        self.heightCentimetres = heightCentimetres
        self.ageYears = ageYears
        self.sex = sex
    }

    /// Full years between a date of birth and the day of a weighing, or nil when the weighing
    /// is before the birth.
    public static func age(bornOn birth: CalendarDate, on day: CalendarDate) -> Int? {
        guard birth <= day else { return nil }
        var years = day.year - birth.year
        if (day.month, day.day) < (birth.month, birth.day) { years -= 1 }
        return years
    }
}

/// The values a formula derives from one weighing. A value a formula does not define is nil.
public struct BodyCompositionResult: Hashable, Sendable {
    /// Body fat as a fraction of body mass (HealthKit's `%`: 0.235 is 23.5 %).
    public var bodyFatFraction: Double
    /// Fat-free ("lean") mass in kilograms.
    public var leanBodyMassKilograms: Double
    /// Total body water as a fraction of body mass.
    public var bodyWaterFraction: Double?
    /// Skeletal muscle mass in kilograms.
    public var skeletalMuscleMassKilograms: Double?
    /// Bone mineral mass in kilograms.
    public var boneMassKilograms: Double?
    /// The vendor's visceral fat rating (a unitless score, 1–59 on Xiaomi's scale).
    public var visceralFatRating: Double?
    /// Basal metabolic rate in kilocalories per day.
    public var basalMetabolicRateKilocaloriesPerDay: Double?
    /// Body mass index in kg/m².
    public var bodyMassIndex: Double
}

/// Why a formula derived nothing from a weighing. Each case carries the offending value; no
/// formula ever clamps a value into range.
public enum BodyCompositionRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The formula has no equation for this sex (not set, or other).
    case sexNotCovered(BiologicalSex)
    /// The person is outside the ages the formula was developed for.
    case ageOutsideFormula(Int, valid: ClosedRange<Int>)
    /// The impedance is outside what the formula accepts (0 and 65535 are a scale's "no contact").
    case impedanceOutsideFormula(Double, valid: ClosedRange<Double>)
    /// The height is outside what the formula accepts.
    case heightOutsideFormula(Double, valid: ClosedRange<Double>)
    /// The body mass is outside what the formula accepts.
    case weightOutsideFormula(Double, valid: ClosedRange<Double>)
    /// A derived value is physically impossible (e.g. a fat-free mass above the body mass).
    case impossibleResult(name: String, value: Double, valid: ClosedRange<Double>)
    /// The body mass index is outside what the formula was validated for.
    case bodyMassIndexOutsideFormula(Double, valid: ClosedRange<Double>)
    /// A dual-frequency formula got no high-frequency impedance.
    case highFrequencyImpedanceMissing
    /// The two impedances of a dual-frequency scale are within 1 % of each other: the feet did
    /// not make good contact (dry feet, stepping off), so no compartment can be told apart.
    case unreliableContact(lowFrequency: Double, highFrequency: Double)

    public var description: String {
        switch self {
        case .sexNotCovered(let sex):
            "the formula has equations for female and male only (the profile says \(sex)); set it with 'ingestd people set … --biological-sex'"
        case .ageOutsideFormula(let age, let valid):
            "age \(age) is outside the formula's \(valid.lowerBound)–\(valid.upperBound) years"
        case .impedanceOutsideFormula(let ohms, let valid):
            "impedance \(formatted(ohms)) Ω is outside the formula's \(formatted(valid.lowerBound))–\(formatted(valid.upperBound)) Ω"
        case .heightOutsideFormula(let height, let valid):
            "height \(formatted(height)) cm is outside the formula's \(formatted(valid.lowerBound))–\(formatted(valid.upperBound)) cm"
        case .weightOutsideFormula(let weight, let valid):
            "body mass \(formatted(weight)) kg is outside the formula's \(formatted(valid.lowerBound))–\(formatted(valid.upperBound)) kg"
        case .impossibleResult(let name, let value, let valid):
            "the derived \(name) \(formatted(value)) is impossible (outside \(formatted(valid.lowerBound))–\(formatted(valid.upperBound)))"
        case .bodyMassIndexOutsideFormula(let index, let valid):
            "body mass index \(formatted((index * 10).rounded() / 10)) kg/m² is outside the formula's \(formatted(valid.lowerBound))–\(formatted(valid.upperBound)) kg/m²"
        case .highFrequencyImpedanceMissing:
            "the dual-frequency formula needs the scale's high-frequency impedance, and the weighing has none"
        case .unreliableContact(let low, let high):
            "the impedances \(formatted(low)) Ω and \(formatted(high)) Ω are within 1 % of each other: poor contact (dry feet?)"
        }
    }

    private func formatted(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A named, versioned body-composition formula: a pure function of a weighing and a profile.
public protocol BodyCompositionFormula: Sendable {
    /// The name derived samples carry in their metadata (`IngestBodyCompositionFormula`).
    var name: String { get }
    /// Bumped whenever the equations change, so stored derived values can be recomputed.
    var version: Int { get }
    /// The inputs the formula accepts.
    var limits: BodyCompositionLimits { get }
    /// The derived values, or why there are none.
    func derive(_ input: BodyCompositionInput) -> Result<BodyCompositionResult, BodyCompositionRefusal>
}

/// The inputs a formula was developed on and accepts; every formula covers female and male only.
public struct BodyCompositionLimits: Hashable, Sendable {
    public var ages: ClosedRange<Int>
    /// nil: an impedance-free formula, which ignores the impedance.
    public var impedance: ClosedRange<Double>?
    public var height: ClosedRange<Double>
    public var weight: ClosedRange<Double>

    public init(ages: ClosedRange<Int>, impedance: ClosedRange<Double>?, height: ClosedRange<Double>, weight: ClosedRange<Double>) {
        self.ages = ages
        self.impedance = impedance
        self.height = height
        self.weight = weight
    }

    /// Why the formula cannot take this input, or nil when it can.
    public func refusal(of input: BodyCompositionInput) -> BodyCompositionRefusal? {
        guard input.sex == .male || input.sex == .female else { return .sexNotCovered(input.sex) }
        guard ages.contains(input.ageYears) else { return .ageOutsideFormula(input.ageYears, valid: ages) }
        if let impedance, !(input.impedanceOhms.isFinite && impedance.contains(input.impedanceOhms)) {
            return .impedanceOutsideFormula(input.impedanceOhms, valid: impedance)
        }
        guard input.heightCentimetres.isFinite, height.contains(input.heightCentimetres) else {
            return .heightOutsideFormula(input.heightCentimetres, valid: height)
        }
        guard input.weightKilograms.isFinite, weight.contains(input.weightKilograms) else {
            return .weightOutsideFormula(input.weightKilograms, valid: weight)
        }
        return nil
    }
}

/// The checks every formula shares on what it produced.
enum BodyCompositionChecks {
    /// Refuses a result whose values are not physically possible: fat between 2 % and 75 % of
    /// body mass, water between 20 % and 80 %, muscle and bone positive and below the lean mass.
    static func plausibility(_ result: BodyCompositionResult) -> BodyCompositionRefusal? {
        let checks: [(String, Double?, ClosedRange<Double>)] = [
            ("body fat fraction", result.bodyFatFraction, 0.02...0.75),
            ("body water fraction", result.bodyWaterFraction, 0.20...0.80),
            ("skeletal muscle mass", result.skeletalMuscleMassKilograms, 1...result.leanBodyMassKilograms),
            ("bone mass", result.boneMassKilograms, 0.2...8),
            ("visceral fat rating", result.visceralFatRating, 1...59),
            ("basal metabolic rate", result.basalMetabolicRateKilocaloriesPerDay, 500...5000),
        ]
        for (name, value, valid) in checks {
            guard let value else { continue }
            if !value.isFinite || !valid.contains(value) { return .impossibleResult(name: name, value: value, valid: valid) }
        }
        return nil
    }

    static func bodyMassIndex(_ input: BodyCompositionInput) -> Double {
        let metres = input.heightCentimetres / 100
        return input.weightKilograms / (metres * metres)
    }
}

/// Which formula a person's (or a device's) weighings are derived with
/// (`ingestd people set P --body-composition standard|vendor|estimate|none`).
public enum BodyCompositionChoice: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `StandardBodyComposition`, the published equations (the default).
    case standard
    /// The scale family's own formula where it is published (e.g. `XiaomiBodyComposition`),
    /// else the standard one.
    case vendor
    /// The standard formula for weighings with an impedance, and the impedance-free estimates
    /// (`EstimateBodyComposition`) for weighings without one.
    case estimate
    /// Nothing is derived.
    case none

    /// The formula for a weighing with an impedance, given the scale family's own formula if it has one.
    public func formula(vendorFormula: (any BodyCompositionFormula)?) -> (any BodyCompositionFormula)? {
        switch self {
        case .standard, .estimate: StandardBodyComposition()
        case .vendor: vendorFormula ?? StandardBodyComposition()
        case .none: nil
        }
    }

    /// The formula for a weighing without an impedance: only `estimate` derives from those.
    public var formulaWithoutImpedance: (any BodyCompositionFormula)? {
        self == .estimate ? EstimateBodyComposition() : nil
    }

    public var description: String { rawValue }
}
