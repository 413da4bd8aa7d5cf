import Foundation
import HealthModel

/// The write authorization a store keeps, as `auth list`, `auth revoke`, `auth deny` and
/// `auth pending` read and change it (and `import` reads). (A grant goes through the ingestion front door, which brings the held samples in.)
public protocol AuthorizationStore: StoreConnection {
    /// Every grant as (source, type identifier or `*`), sorted.
    func grants() throws -> [(source: String, type: String)]
    /// Every explicit denial as (source, type identifier or `*`), sorted.
    func denials() throws -> [(source: String, type: String)]
    /// Every read grant of a sink as (sink, type identifier or `*`), sorted (`auth list` shows
    /// them beside the write grants).
    func readGrants() throws -> [(sink: String, type: String)]
    /// Every source name the store has met (stored, held or rejected samples), sorted.
    func seenSourceNames() throws -> [String]
    /// Denies `types` (or every type with `all`) of `source`, replacing its grants of them, and
    /// discards what was held for them; how many held records were discarded.
    @discardableResult
    func deny(source: String, types: [QuantityType], all: Bool) throws -> Int
    /// Revokes grants; `all` removes every grant of the source, including `--all`.
    func revoke(source: String, types: [QuantityType], all: Bool) throws
    /// The held records by (source, type, device).
    func pendingGroups() throws -> [PendingGroup]
    /// Per source, the held records dropped over the bound and those expired.
    func pendingLosses() throws -> [String: (dropped: Int, expired: Int)]
}

/// Held records of one (source, type, device): how many and the reading times they span (`ingestd auth pending`).
public struct PendingGroup: Sendable, Equatable {
    public var source: String
    public var type: String
    /// The device's name and local identifier, as far as known ("" when the records carry none).
    public var device: String
    public var count: Int
    public var firstStart: Date
    public var lastEnd: Date

    public init(source: String, type: String, device: String, count: Int, firstStart: Date, lastEnd: Date) {
        self.source = source
        self.type = type
        self.device = device
        self.count = count
        self.firstStart = firstStart
        self.lastEnd = lastEnd
    }
}

