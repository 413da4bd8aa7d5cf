import Foundation
import HealthModel

/// Which source may write which types: default deny, grants per (source, type) or for all types.
public struct AuthorizationPolicy: Sendable, Equatable {
    /// Type identifiers granted per source.
    public private(set) var grants: [String: Set<String>]
    /// Sources granted every type (`ingestd auth grant SOURCE --all`).
    public private(set) var allTypes: Set<String>

    public init(grants: [String: Set<String>] = [:], allTypes: Set<String> = []) {
        self.grants = grants
        self.allTypes = allTypes
    }

    /// Whether `source` may write samples of `type`.
    public func allows(source: String, type: QuantityType) -> Bool {
        allTypes.contains(source) || grants[source]?.contains(type.identifier) == true
    }

    public mutating func grant(source: String, type: QuantityType) {
        grants[source, default: []].insert(type.identifier)
    }

    public mutating func grantAll(source: String) { allTypes.insert(source) }

    /// The exact command that would allow `source` to write `types`.
    public static func grantCommand(source: String, types: [QuantityType]) -> String {
        let names = types.map(\.shortName).sorted()
        return (["ingestd", "auth", "grant", shellQuoted(source)] + names).joined(separator: " ")
    }

    static func shellQuoted(_ word: String) -> String {
        let safe = word.allSatisfy { $0.isLetter || $0.isNumber || "-_.:/@+".contains($0) }
        if safe && !word.isEmpty { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
