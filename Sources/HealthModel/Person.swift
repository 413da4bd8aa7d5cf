/// One member of a household: HealthKit keeps one person per store, ingestd keeps that per person
/// while one daemon serves several. Samples belong to one person or are unassigned.
public struct Person: Hashable, Sendable {
    /// The store's id of the person (stable while the person exists).
    public var id: Int64
    /// The name the commands take (`--person NAME`): non-empty, no control characters.
    public var name: String
    /// The person's characteristics (date of birth, biological sex, height).
    public var profile: UserProfile
    /// The body mass given when the person was added (kg), used for assigning shared-scale
    /// readings until the person has a weighing of their own.
    public var bodyMassKilograms: Double?
    /// The person's user slot on multi-user scales (the UDS user index or a vendor user id).
    public var scaleUserIndex: Int?
    /// Which formula derives body composition from the person's weighings
    /// (`ingestd people set P --body-composition`).
    public var bodyComposition: BodyCompositionChoice
    /// The measurement system the person reads values in (`ingestd people set P --units us`);
    /// nil: the configuration's or the command line's.
    public var units: UnitSystem?

    public init(id: Int64, name: String, profile: UserProfile = UserProfile(), bodyMassKilograms: Double? = nil,
                scaleUserIndex: Int? = nil, bodyComposition: BodyCompositionChoice = .standard, units: UnitSystem? = nil) {
        self.bodyComposition = bodyComposition
        self.units = units
        self.id = id
        self.name = name
        self.profile = profile
        self.bodyMassKilograms = bodyMassKilograms
        self.scaleUserIndex = scaleUserIndex
    }

    /// The longest person name accepted.
    public static let maximumNameLength = 64

    /// Why a person name is refused, or nil when it is acceptable: non-empty, at most
    /// `maximumNameLength` characters, no control characters, no leading or trailing space.
    public static func problem(withName name: String) -> String? {
        if name.isEmpty { return "a person's name must not be empty" }
        if name.count > maximumNameLength { return "a person's name has at most \(maximumNameLength) characters" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a person's name must not contain control characters"
        }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true {
            return "a person's name must not start or end with a space"
        }
        return nil
    }
}
