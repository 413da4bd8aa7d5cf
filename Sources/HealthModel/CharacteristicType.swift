/// A fact about the user that is not a time-stamped sample (HealthKit's `HKCharacteristicType`).
/// ingestd keeps characteristics in the `UserProfile`.
public enum CharacteristicType: String, Sendable, CaseIterable, CustomStringConvertible {
    case dateOfBirth = "HKCharacteristicTypeIdentifierDateOfBirth"
    case biologicalSex = "HKCharacteristicTypeIdentifierBiologicalSex"

    /// The full identifier, e.g. `HKCharacteristicTypeIdentifierDateOfBirth`.
    public var identifier: String { rawValue }

    /// The short form, e.g. `dateOfBirth`.
    public var shortName: String {
        switch self {
        case .dateOfBirth: "dateOfBirth"
        case .biologicalSex: "biologicalSex"
        }
    }

    /// Looks up a characteristic type by full identifier (exact) or short name (case-insensitive).
    public static func named(_ name: some StringProtocol) -> CharacteristicType? {
        let name = String(name)
        if let type = CharacteristicType(rawValue: name) { return type }
        let lowered = name.lowercased()
        return allCases.first { $0.shortName.lowercased() == lowered }
    }

    public var description: String { identifier }
}
