import Foundation
import HealthModel

/// Why a weighing derived no body composition. Counted per weighing (as a
/// rejection of `bodyFatPercentage` with the key `not-derived-…`, so `ingestd status` shows it);
/// each case carries the offending value. Nothing is ever clamped into range.
public enum BodyCompositionSkip: Error, Hashable, Sendable, CustomStringConvertible {
    /// The person's profile lacks what every formula needs (names of the missing fields).
    case profileIncomplete(missing: [String])
    /// The date of birth is after the day of the weighing.
    case bornAfterWeighing(CalendarDate, weighedOn: CalendarDate)
    /// The impedance metadata is not a number.
    case impedanceNotANumber(String)
    /// The formula refused the input or its result.
    case refused(formula: String, BodyCompositionRefusal)
    /// The weighing's source is not granted a derived type (`ingestd auth grant`).
    case notAuthorized(type: String)

    /// The stable counting key (`not-derived-…`).
    public var key: String {
        let reason = switch self {
        case .profileIncomplete: "profile-incomplete"
        case .bornAfterWeighing: "born-after-weighing"
        case .impedanceNotANumber: "impedance-not-a-number"
        case .refused(_, let refusal):
            switch refusal {
            case .sexNotCovered: "sex-not-covered"
            case .ageOutsideFormula: "age-outside-formula"
            case .impedanceOutsideFormula: "impedance-outside-formula"
            case .heightOutsideFormula: "height-outside-formula"
            case .weightOutsideFormula: "weight-outside-formula"
            case .impossibleResult: "impossible-result"
            case .bodyMassIndexOutsideFormula: "bmi-outside-formula"
            case .highFrequencyImpedanceMissing: "high-frequency-impedance-missing"
            case .unreliableContact: "unreliable-contact"
            }
        case .notAuthorized: "not-authorized"
        }
        return "not-derived-" + reason
    }

    public var description: String {
        switch self {
        case .profileIncomplete(let missing):
            "the person's profile has no \(missing.joined(separator: ", ")) (set with 'ingestd profile set')"
        case .bornAfterWeighing(let birth, let day): "the date of birth \(birth) is after the weighing on \(day)"
        case .impedanceNotANumber(let text): "the impedance \(text) is not a number"
        case .refused(let formula, let refusal): "\(formula) formula: \(refusal)"
        case .notAuthorized(let type): "the source is not granted \(type)"
        }
    }
}

/// The derivation stage (after person assignment): a weighing — a body mass with the scale's
/// impedance (`IngestImpedanceOhm`), one source, one instant; or, for the `estimate` choice, a
/// body mass without one — of a person whose profile has a
/// height, a date of birth and a biological sex gives derived samples of the same instant,
/// source, device and sync identity: body fat, lean body mass, body mass index (when the scale
/// sent none), body water, skeletal muscle, bone mass, visceral fat rating and basal metabolic
/// rate, as far as the person's formula defines them. Each carries the formula's name and
/// version and the impedance it used. A type the scale sent itself for the weighing keeps the
/// scale's value and is not derived. A pure function of its inputs: the store's recomputation
/// (profile change, reassignment) uses the same code as ingestion.
public enum BodyCompositionStage {
    /// The types the stage derives, in the order a weighing's derived samples come.
    public static let derivedTypes: [QuantityType] = [
        .bodyFatPercentage, .leanBodyMass, .bodyMassIndex, .bodyWaterPercentage, .skeletalMuscleMass, .boneMass,
        .visceralFatRating, .basalMetabolicRate,
    ]

    /// The scale family's own published formula for `weighing`, when there is one (by the
    /// device's manufacturer; a Xiaomi weighing with a high-frequency impedance is the S400's).
    public static func vendorFormula(for weighing: QuantitySample) -> (any BodyCompositionFormula)? {
        switch weighing.device?.manufacturer?.lowercased() {
        case "xiaomi":
            weighing.metadata[MetadataKey.highFrequencyImpedance] != nil ? S400BodyComposition() : XiaomiBodyComposition()
        case "yunmai": YunmaiBodyComposition()
        case "qn": QNBodyComposition()
        default: nil
        }
    }

    /// Whether `sample` is a derived value (carries a formula name) rather than a stored one.
    public static func isDerived(_ sample: QuantitySample) -> Bool {
        sample.metadata[MetadataKey.bodyCompositionFormula] != nil
    }

    /// The derived samples of one weighing, nil when there is nothing to derive (not a body
    /// mass, no impedance and no `estimate` choice, or the choice `none`), or why the weighing
    /// derived nothing.
    /// - Parameter present: the types the weighing already has values of (sent by the scale).
    /// - Parameter deviceChoice: the formula set for the weighing's device, over the person's.
    public static func derive(weighing: QuantitySample, person: Person, present: Set<QuantityType>,
                              deviceChoice: BodyCompositionChoice? = nil) -> Result<[QuantitySample], BodyCompositionSkip>? {
        guard weighing.type == .bodyMass else { return nil }
        let choice = deviceChoice ?? person.bodyComposition
        let impedanceValue = weighing.metadata[MetadataKey.impedance]
        guard let formula = impedanceValue == nil ? choice.formulaWithoutImpedance
                : choice.formula(vendorFormula: vendorFormula(for: weighing)) else { return nil }
        var impedance = Double.nan
        if let impedanceValue {
            guard case .number(let ohms) = impedanceValue else { return .failure(.impedanceNotANumber(impedanceValue.description)) }
            impedance = ohms
        }
        var highFrequency: Double?
        if let value = weighing.metadata[MetadataKey.highFrequencyImpedance] {
            guard case .number(let ohms) = value else { return .failure(.impedanceNotANumber(value.description)) }
            highFrequency = ohms
        }
        let profile = person.profile
        var missing: [String] = []
        let heightCentimetres = profile.height.flatMap { try? $0.doubleValue(for: .meter) * 100 }
        if heightCentimetres == nil { missing.append("height") }
        if profile.dateOfBirth == nil { missing.append("date of birth") }
        if profile.biologicalSex == .notSet { missing.append("biological sex") }
        guard missing.isEmpty, let heightCentimetres, let birth = profile.dateOfBirth else {
            return .failure(.profileIncomplete(missing: missing))
        }
        guard let day = calendarDay(of: weighing) else { return nil }
        guard let age = BodyCompositionInput.age(bornOn: birth, on: day) else {
            return .failure(.bornAfterWeighing(birth, weighedOn: day))
        }
        guard let kilograms = try? weighing.quantity.doubleValue(for: .gram) / 1000 else { return nil }
        let input = BodyCompositionInput(weightKilograms: kilograms, impedanceOhms: impedance,
                                         heightCentimetres: heightCentimetres, ageYears: age, sex: profile.biologicalSex,
                                         highFrequencyImpedanceOhms: highFrequency)
        let result: BodyCompositionResult
        switch formula.derive(input) {
        case .success(let derived): result = derived
        case .failure(let refusal): return .failure(.refused(formula: formula.name, refusal))
        }
        // A vendor formula that leaves a value undefined (Xiaomi's has no skeletal muscle, the
        // standard one no bone or visceral fat) gets it from the other, when that one accepts the
        // input; each sample names the formula that computed it.
        var fallback: (any BodyCompositionFormula, BodyCompositionResult)?
        if formula.name != StandardBodyComposition().name, impedanceValue != nil,
           case .success(let other) = StandardBodyComposition().derive(input) {
            fallback = (StandardBodyComposition(), other)
        }
        func value(_ field: KeyPath<BodyCompositionResult, Double?>) -> (Double, any BodyCompositionFormula)? {
            if let own = result[keyPath: field] { return (own, formula) }
            if let (other, values) = fallback, let theirs = values[keyPath: field] { return (theirs, other) }
            return nil
        }
        let values: [(QuantityType, (Double, any BodyCompositionFormula)?)] = [
            (.bodyFatPercentage, (result.bodyFatFraction, formula)),
            (.leanBodyMass, (result.leanBodyMassKilograms, formula)),
            (.bodyMassIndex, (result.bodyMassIndex, formula)),
            (.bodyWaterPercentage, value(\.bodyWaterFraction)),
            (.skeletalMuscleMass, value(\.skeletalMuscleMassKilograms)),
            (.boneMass, value(\.boneMassKilograms)),
            (.visceralFatRating, value(\.visceralFatRating)),
            (.basalMetabolicRate, value(\.basalMetabolicRateKilocaloriesPerDay)),
        ]
        var metadata = Metadata()
        metadata.syncIdentifier = weighing.metadata.syncIdentifier
        metadata.syncVersion = weighing.metadata.syncVersion
        metadata.timeZone = weighing.metadata.timeZone
        metadata.deviceSerialNumber = weighing.metadata.deviceSerialNumber
        if impedanceValue != nil { metadata.entries[MetadataKey.impedance] = .number(impedance) }
        if let highFrequency { metadata.entries[MetadataKey.highFrequencyImpedance] = .number(highFrequency) }
        if let slot = weighing.metadata[MetadataKey.deviceUserID] { metadata.entries[MetadataKey.deviceUserID] = slot }
        let derived = values.compactMap { type, computed -> QuantitySample? in
            guard let (value, by) = computed, !present.contains(type) else { return nil }
            var own = metadata
            own.entries[MetadataKey.bodyCompositionFormula] = .string(by.name)
            own.entries[MetadataKey.bodyCompositionFormulaVersion] = .number(Double(by.version))
            return QuantitySample(type: type, quantity: Quantity(value: rounded(value, type), unit: type.canonicalUnit),
                                  start: weighing.start, end: weighing.end, source: weighing.source,
                                  device: weighing.device, metadata: own)
        }
        return .success(derived)
    }

    /// A batch's derived samples: per derived sample the index of its weighing's record; and the
    /// skips with their weighings. `people[i]` is the person of `records[i]`. `bodyMassRecords`:
    /// the indices of the records that are body mass samples (the others are not looked at).
    public static func derive(_ records: [NormalizedRecord], bodyMassRecords: [Int], people: [Int64?], household: Household)
        -> (derived: [(record: Int, sample: QuantitySample)], skips: [(weighing: QuantitySample, skip: BodyCompositionSkip)]) {
        var derived: [(record: Int, sample: QuantitySample)] = []
        var skips: [(weighing: QuantitySample, skip: BodyCompositionSkip)] = []
        // Most batches hold no weighing to derive from: nothing is built for them. A weighing
        // without an impedance counts only for a person (or device) that chose `estimate`.
        let estimates = household.estimatesWithoutImpedance
        var weighings: [Int] = []
        for index in bodyMassRecords {
            guard records.indices.contains(index), case .sample(let sample) = records[index], sample.type == .bodyMass,
                  people.indices.contains(index), let person = people[index] else { continue }
            if sample.metadata[MetadataKey.impedance] == nil {
                guard estimates, (household.bodyComposition(ofDeviceOf: sample)
                                  ?? household.people.first(where: { $0.id == person })?.bodyComposition) == .estimate else { continue }
            }
            weighings.append(index)
        }
        guard !weighings.isEmpty else { return ([], []) }
        var present: [PersonAssigner.WeighingKey: Set<QuantityType>] = [:]
        for record in records {
            for sample in record.samples where derivedTypes.contains(sample.type) {
                present[PersonAssigner.weighingKey(sample), default: []].insert(sample.type)
            }
        }
        for index in weighings {
            guard case .sample(let weighing) = records[index], let id = people[index],
                  let person = household.people.first(where: { $0.id == id }) else { continue }
            switch derive(weighing: weighing, person: person, present: present[PersonAssigner.weighingKey(weighing)] ?? [],
                          deviceChoice: household.bodyComposition(ofDeviceOf: weighing)) {
            case .success(let samples)?: derived += samples.map { (index, $0) }
            case .failure(let skip)?: skips.append((weighing, skip))
            case nil: break
            }
        }
        return (derived, skips)
    }

    /// The calendar day of the weighing in its time zone (UTC without one).
    static func calendarDay(of sample: QuantitySample) -> CalendarDate? {
        var calendar = Calendar(identifier: .gregorian)
        if let zone = sample.metadata.timeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC") {
            calendar.timeZone = zone
        }
        let parts = calendar.dateComponents([.year, .month, .day], from: sample.start)
        guard let year = parts.year, let month = parts.month, let day = parts.day else { return nil }
        return CalendarDate(year: year, month: month, day: day)
    }

    /// Values at the resolution people read them (0.1 % fat and water, 10 g masses, whole kcal),
    /// so a recomputation with the same inputs gives byte-equal samples.
    static func rounded(_ value: Double, _ type: QuantityType) -> Double {
        let perUnit: Double = switch type {
        case .bodyFatPercentage, .bodyWaterPercentage: 10_000
        case .basalMetabolicRate: 1
        case .visceralFatRating: 10
        default: 100
        }
        return (value * perUnit).rounded() / perUnit
    }
}
