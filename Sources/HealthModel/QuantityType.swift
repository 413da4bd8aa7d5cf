/// A kind of measured quantity (HealthKit's `HKQuantityType`), e.g. step count or body mass.
///
/// Every type has a canonical unit in which ingestd stores its values, an aggregation style,
/// and a plausible range (in the canonical unit) that the pipeline uses to reject nonsense.
/// Two types are equal when their identifiers are equal.
public struct QuantityType: Hashable, Sendable, CustomStringConvertible {
    /// The fields, in one shared immutable box: a sample is copied through every stage of the
    /// pipeline, and a copy of a type is then one reference count, not one per string.
    private let storage: Storage

    private final class Storage: Sendable {
        let identifier: String
        let shortName: String
        let canonicalUnit: Unit
        let aggregationStyle: AggregationStyle
        let plausibleRange: ClosedRange<Double>
        let isDietary: Bool

        init(identifier: String, shortName: String, canonicalUnit: Unit, aggregationStyle: AggregationStyle,
             plausibleRange: ClosedRange<Double>, isDietary: Bool) {
            self.identifier = identifier
            self.shortName = shortName
            self.canonicalUnit = canonicalUnit
            self.aggregationStyle = aggregationStyle
            self.plausibleRange = plausibleRange
            self.isDietary = isDietary
        }
    }

    /// The full identifier, e.g. `HKQuantityTypeIdentifierStepCount`.
    public var identifier: String { storage.identifier }
    /// The short form accepted on the command line, e.g. `stepCount`.
    public var shortName: String { storage.shortName }
    /// The unit values of this type are stored in.
    public var canonicalUnit: Unit { storage.canonicalUnit }
    /// How values combine over time; decides which statistics are legal.
    public var aggregationStyle: AggregationStyle { storage.aggregationStyle }
    /// The range a single sample's value must lie in, expressed in `canonicalUnit`.
    public var plausibleRange: ClosedRange<Double> { storage.plausibleRange }
    /// Whether this is a nutrition type that may be a member of a food correlation.
    public var isDietary: Bool { storage.isDietary }

    /// Creates a quantity type. The built-in types are the static members listed in `catalogue`.
    public init(
        identifier: String,
        shortName: String,
        canonicalUnit: Unit,
        aggregationStyle: AggregationStyle,
        plausibleRange: ClosedRange<Double>,
        isDietary: Bool = false
    ) {
        storage = Storage(identifier: identifier, shortName: shortName, canonicalUnit: canonicalUnit,
                        aggregationStyle: aggregationStyle, plausibleRange: plausibleRange, isDietary: isDietary)
    }

    /// The short name in words, for a page or an entity without a name of its own:
    /// `bodyMassIndex` → "Body mass index".
    public var shortNameInWords: String { Self.words(shortName) }

    /// A camel-case name in words: `ambientTemperature` → "Ambient temperature".
    public static func words(_ camelCase: String) -> String {
        var result = ""
        for character in camelCase {
            if character.isUppercase, !result.isEmpty { result += " " + character.lowercased() } else { result.append(character) }
        }
        return result.prefix(1).uppercased() + result.dropFirst()
    }

    /// Looks up a catalogue type by full identifier (exact) or short name (case-insensitive).
    public init?(named name: some StringProtocol) {
        guard let type = Self.named(name) else { return nil }
        self = type
    }

    /// Looks up a catalogue type by full identifier (exact) or short name (case-insensitive).
    public static func named(_ name: some StringProtocol) -> QuantityType? {
        let name = String(name)
        if let type = CatalogueIndex.built.byIdentifier[name] { return type }
        return CatalogueIndex.built.byLowercasedShortName[name.lowercased()]
    }

    /// Whether `value` (in the canonical unit) lies in the plausible range.
    public func isPlausible(_ value: Double) -> Bool { plausibleRange.contains(value) }

    public var description: String { identifier }

    public static func == (lhs: QuantityType, rhs: QuantityType) -> Bool {
        lhs.storage === rhs.storage || lhs.identifier == rhs.identifier
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}

/// Lookup tables over `QuantityType.catalogue`, built once on first use.
private struct CatalogueIndex: Sendable {
    static let built = CatalogueIndex()

    let byIdentifier: [String: QuantityType]
    let byLowercasedShortName: [String: QuantityType]

    private init() {
        var byIdentifier: [String: QuantityType] = [:]
        var byShortName: [String: QuantityType] = [:]
        for type in QuantityType.catalogue {
            precondition(byIdentifier[type.identifier] == nil, "HealthModel catalogue: duplicate identifier \(type.identifier)")
            precondition(byShortName[type.shortName.lowercased()] == nil, "HealthModel catalogue: duplicate short name \(type.shortName)")
            byIdentifier[type.identifier] = type
            byShortName[type.shortName.lowercased()] = type
        }
        self.byIdentifier = byIdentifier
        self.byLowercasedShortName = byShortName
    }
}

/// Parses a unit string written as a constant in this module's catalogue.
/// A failure is a programmer error in the catalogue, never caused by input, so it traps.
func catalogueUnit(_ string: String) -> Unit {
    do {
        return try Unit(from: string)
    } catch {
        preconditionFailure("HealthModel catalogue: constant unit string \"\(string)\" does not parse: \(error)")
    }
}
