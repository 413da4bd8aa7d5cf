/// A kind of correlation (HealthKit's `HKCorrelationType`): a sample grouping other samples.
public enum CorrelationType: String, Sendable, CaseIterable, CustomStringConvertible {
    /// One systolic and one diastolic sample taken together.
    case bloodPressure = "HKCorrelationTypeIdentifierBloodPressure"
    /// Dietary samples describing one food item.
    case food = "HKCorrelationTypeIdentifierFood"

    /// The full identifier, e.g. `HKCorrelationTypeIdentifierBloodPressure`.
    public var identifier: String { rawValue }

    /// The short form, e.g. `bloodPressure`.
    public var shortName: String {
        switch self {
        case .bloodPressure: "bloodPressure"
        case .food: "food"
        }
    }

    /// Looks up a correlation type by full identifier (exact) or short name (case-insensitive).
    public init?(named name: some StringProtocol) {
        guard let type = Self.named(name) else { return nil }
        self = type
    }

    /// Looks up a correlation type by full identifier (exact) or short name (case-insensitive).
    public static func named(_ name: some StringProtocol) -> CorrelationType? {
        let name = String(name)
        if let type = CorrelationType(rawValue: name) { return type }
        let lowered = name.lowercased()
        return allCases.first { $0.shortName.lowercased() == lowered }
    }

    public var description: String { identifier }
}
