import Foundation
import HealthModel

/// What the user decided for one (source, type) pair.
public enum AuthorizationDecision: Sendable, Equatable {
    /// `ingestd auth grant`: samples go into the store.
    case granted
    /// `ingestd auth deny`: samples are refused and never held.
    case denied
    /// No decision yet (the default): samples wait in the store's pending area.
    case undecided
}

/// Which source may write which types: granted, explicitly denied or undecided (the default),
/// per (source, type) or for all types of a source.
public struct AuthorizationPolicy: Sendable, Equatable {
    /// Type identifiers granted per source.
    public private(set) var grants: [String: Set<String>]
    /// Sources granted every type (`ingestd auth grant SOURCE --all`).
    public private(set) var allTypes: Set<String>
    /// Type identifiers explicitly denied per source.
    public private(set) var denials: [String: Set<String>]
    /// Sources denied every type (`ingestd auth deny SOURCE --all`).
    public private(set) var deniedAllTypes: Set<String>

    public init(grants: [String: Set<String>] = [:], allTypes: Set<String> = [],
                denials: [String: Set<String>] = [:], deniedAllTypes: Set<String> = []) {
        self.grants = grants
        self.allTypes = allTypes
        self.denials = denials
        self.deniedAllTypes = deniedAllTypes
    }

    /// The decision for `source` writing `type`: a decision about the type itself wins over one
    /// about all types of the source (`grant --all` then `deny SOURCE bodyFat` denies body fat),
    /// and no entry at all is undecided.
    public func decision(source: String, type: QuantityType) -> AuthorizationDecision {
        if grants[source]?.contains(type.identifier) == true { return .granted }
        if denials[source]?.contains(type.identifier) == true { return .denied }
        if allTypes.contains(source) { return .granted }
        if deniedAllTypes.contains(source) { return .denied }
        return .undecided
    }

    /// Whether `source` may write samples of `type`.
    public func allows(source: String, type: QuantityType) -> Bool {
        decision(source: source, type: type) == .granted
    }

    public mutating func grant(source: String, type: QuantityType) {
        grants[source, default: []].insert(type.identifier)
    }

    public mutating func grantAll(source: String) { allTypes.insert(source) }

    public mutating func deny(source: String, type: QuantityType) {
        denials[source, default: []].insert(type.identifier)
    }

    public mutating func denyAll(source: String) { deniedAllTypes.insert(source) }

    /// The exact command that would allow `source` to write `types`.
    public static func grantCommand(source: String, types: [QuantityType]) -> String {
        command("grant", source: source, types: types)
    }

    /// The exact command that would refuse `types` of `source` for good (and discard what is held).
    public static func denyCommand(source: String, types: [QuantityType]) -> String {
        command("deny", source: source, types: types)
    }

    /// `ingestd auth grant SOURCE TYPE…` with SOURCE shell-quoted (`$'…'` when it holds control
    /// or invisible characters) so that copying the line grants exactly that source; a source
    /// that starts with `-` (`--all`) follows `--`, so it is never read as an option:
    /// `ingestd auth grant --all -- '--all'`.
    private static func command(_ verb: String, source: String, types: [QuantityType]) -> String {
        let quoted = PrintableText.shellQuoted(source)
        if source.hasPrefix("-") {
            let words = types.isEmpty ? ["--all", "--", quoted] : ["--", quoted] + types.map(\.shortName).sorted()
            return (["ingestd", "auth", verb] + words).joined(separator: " ")
        }
        let names = types.isEmpty ? ["--all"] : types.map(\.shortName).sorted()
        return (["ingestd", "auth", verb, quoted] + names).joined(separator: " ")
    }
}
