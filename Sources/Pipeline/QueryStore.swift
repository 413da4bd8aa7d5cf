import Foundation
import HealthModel

/// Whose samples a query reads and from which gateway.
public struct QueryScope: Sendable, Equatable {
    /// Whose samples.
    public enum People: Sendable, Equatable {
        /// Everybody's (statistics are still computed per person, then combined).
        case everyone
        /// The samples of the person with this name.
        case named(String)
        /// The samples nobody was assigned.
        case unassigned
    }

    public var people: People
    /// Only samples delivered by this gateway (nil: every gateway; a local store is one gateway).
    public var gateway: String?

    public init(people: People = .everyone, gateway: String? = nil) {
        self.people = people
        self.gateway = gateway
    }
}

/// A source that wrote samples, with its devices and counts (`ingestd sources`).
public struct SourceSummary: Sendable, Equatable {
    public var name: String
    public var sampleCount: Int
    public var countsByType: [String: Int]
    public var devices: [Device]
    /// The battery charge each device of the source last said (a local store's; a fleet's
    /// database holds none).
    public var batteries: [DeviceBattery]

    public init(name: String, sampleCount: Int, countsByType: [String: Int], devices: [Device], batteries: [DeviceBattery] = []) {
        self.name = name
        self.sampleCount = sampleCount
        self.countsByType = countsByType
        self.devices = devices
        self.batteries = batteries
    }
}

/// The read side of a store, the port the query commands use: the local SQLite store of one
/// gateway and the shared PostgreSQL store of a fleet answer the same questions with the same
/// semantics (HealthKit's sample and statistics queries; merge by source priority, calendar
/// buckets in a time zone, proportional split of intervals across bucket edges).
public protocol QueryStore: AnyObject {
    /// The names of the people whose samples the store holds (for resolving `--person`).
    func queryPeopleNames() throws -> [String]
    /// The measurement system the person named `name` reads values in (`people set P --units`);
    /// nil when none is set, or the store keeps no such preference (a fleet's database).
    func queryUnitSystem(ofPerson name: String) throws -> UnitSystem?
    /// Samples of `type` overlapping `[from, to)` (an instantaneous sample at `from` included),
    /// optionally of one source, in `scope`, sorted by start date, at most `limit` (0: no limit).
    func samples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int) throws
        -> [QuantitySample]
    /// The samples `samples` returns, handed to `body` one at a time in the same order as they
    /// are read, in memory bounded whatever their number (`samples --json` of years of minute
    /// data). A throwing `body` stops the read.
    func forEachSample(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int,
                       _ body: (QuantitySample) throws -> Void) throws
    /// The newest `count` samples of `type` (by start date) matching as `samples` does, returned
    /// oldest first: `samples --latest` / `--newest N`.
    func newestSamples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, count: Int) throws
        -> [QuantitySample]
    /// The statistics collection query: `operation` per calendar bucket of `granularity` in `zone`
    /// (one bucket without `granularity`). Samples of different people (or gateways) are never
    /// merged by priority with each other: each person's statistics are computed, then combined.
    func statistics(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                    granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [StatisticsBucket]
    /// Several statistics of one type over the same buckets, one array of buckets per operation,
    /// in the order asked (a dashboard's minimum, average and maximum heart rate per day). A store
    /// may read the samples once for all of them; the answers equal `statistics` asked once each.
    func statistics(_ operations: [StatisticsOperation], type: QuantityType, from: Date?, to: Date?,
                    granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [[StatisticsBucket]]
    /// Who wrote what: per source its sample count per type and its devices, in `scope`'s gateway.
    func sourceSummaries(scope: QueryScope) throws -> [SourceSummary]
    /// Samples held for undecided (source, type) pairs, per source (`sources`, `status`): they
    /// exist only in a gateway's own store, a fleet's shared store holds none (empty).
    func heldSampleCounts() throws -> [String: Int]
    /// What the store holds: per source and type its samples (a fleet's database: per gateway
    /// too, with each gateway's deliveries, in `scope`'s gateway), held and unassigned samples, and
    /// the rejections since `since` (`ingestd status`).
    func status(scope: QueryScope, rejectionsSince since: Date) throws -> StoreStatus
    /// The anchored query: changes after `anchor` of `type` (every type when nil) in `scope`, oldest
    /// first, handed to `body` as they are read (at most `limit` when above 0, or a few more to
    /// finish an anchor); returns the anchor to pass next time. An anchor of another kind of store
    /// throws ``ChangeAnchorError/ofAnotherStore(text:reason:)``.
    @discardableResult
    func changes(since anchor: ChangeAnchor, type: QuantityType?, scope: QueryScope, limit: Int,
                 _ body: (ChangeEntry) throws -> Void) throws -> ChangeAnchor
    /// The export cursor: the records overlapping `[from, to)` of `types` (nil: every type) in
    /// `scope`, oldest first, one at a time in constant memory, from one consistent snapshot: a
    /// sample, or a correlation with its members where the store keeps correlations.
    @discardableResult
    func forEachRecord(types: [QuantityType]?, from: Date?, to: Date?, scope: QueryScope,
                       _ body: (HealthRecord) throws -> Void) throws -> ExportReadSummary
    /// Where `watch` starts: after `anchor` (what was committed after it comes first), or (nil) now.
    func watchStart(after anchor: ChangeAnchor?) throws -> WatchCursor
    /// What was committed (and delivered by sinks) since `cursor`, oldest first, of `scope`; and
    /// the cursor after it.
    func watchEvents(after cursor: WatchCursor, scope: QueryScope) throws -> (events: [WatchEvent], cursor: WatchCursor)
    /// Ends the store's connection.
    func close()
}

extension QueryStore {
    /// No preference: the store keeps none.
    public func queryUnitSystem(ofPerson name: String) throws -> UnitSystem? { nil }

    /// The measurement system of the one person `scope` names, when they set one; nil for
    /// everybody, the unassigned samples, or a person without one.
    public func queryUnitSystem(for scope: QueryScope) throws -> UnitSystem? {
        guard case .named(let name) = scope.people else { return nil }
        return try queryUnitSystem(ofPerson: name)
    }

    /// The sources of `scope`'s gateway sorted by name, each with its held samples (`sources`): a
    /// source that has only held samples so far is listed too, with no samples.
    public func sourcesWithHeld(scope: QueryScope) throws -> [(summary: SourceSummary, held: Int)] {
        let held = try heldSampleCounts()
        var summaries = try sourceSummaries(scope: scope)
        for name in held.keys where !summaries.contains(where: { $0.name == name }) {
            summaries.append(SourceSummary(name: name, sampleCount: 0, countsByType: [:], devices: []))
        }
        return summaries.sorted { $0.name < $1.name }.map { ($0, held[$0.name] ?? 0) }
    }

    /// `statistics` asked once per operation.
    public func statistics(_ operations: [StatisticsOperation], type: QuantityType, from: Date?, to: Date?,
                           granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [[StatisticsBucket]] {
        try operations.map {
            try statistics($0, type: type, from: from, to: to, granularity: granularity, zone: zone, scope: scope)
        }
    }
}
