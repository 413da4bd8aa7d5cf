/// The user's characteristics (HealthKit characteristic types): not samples, one per store.
///
/// JSON: `{"dateOfBirth":"1980-05-17","biologicalSex":"female","height":{"value":1.7,"unit":"m"}}`,
/// absent fields omitted.
public struct UserProfile: Hashable, Sendable, Codable {
    public var dateOfBirth: CalendarDate?
    public var biologicalSex: BiologicalSex
    public var height: Quantity?

    public init(dateOfBirth: CalendarDate? = nil, biologicalSex: BiologicalSex = .notSet, height: Quantity? = nil) {
        self.dateOfBirth = dateOfBirth
        self.biologicalSex = biologicalSex
        self.height = height
    }

    private enum CodingKeys: String, CodingKey { case dateOfBirth, biologicalSex, height }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        dateOfBirth = try container.decodeIfPresent(CalendarDate.self, forKey: .dateOfBirth)
        biologicalSex = try container.decodeIfPresent(BiologicalSex.self, forKey: .biologicalSex) ?? .notSet
        height = try container.decodeIfPresent(Quantity.self, forKey: .height)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(dateOfBirth, forKey: .dateOfBirth)
        try container.encode(biologicalSex, forKey: .biologicalSex)
        try container.encodeIfPresent(height, forKey: .height)
    }
}

/// HealthKit's `HKBiologicalSex`. JSON uses the case names; `HKBiologicalSex…` names are accepted.
public enum BiologicalSex: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case notSet, female, male, other

    /// HealthKit's constant name, e.g. `HKBiologicalSexFemale`.
    public var healthKitName: String {
        switch self {
        case .notSet: "HKBiologicalSexNotSet"
        case .female: "HKBiologicalSexFemale"
        case .male: "HKBiologicalSexMale"
        case .other: "HKBiologicalSexOther"
        }
    }

    /// Accepts the case name or HealthKit's constant name, case-insensitively.
    public init?(named name: some StringProtocol) {
        let lowered = name.lowercased()
        guard let match = Self.allCases.first(where: {
            $0.rawValue.lowercased() == lowered || $0.healthKitName.lowercased() == lowered
        }) else { return nil }
        self = match
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = BiologicalSex(named: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not a biological sex (notSet, female, male, other)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
