import Foundation
import HealthModel

// The delivery side of a store, the port a sink reads through: its definition and cursor, the
// change feed of its granted types after the cursor, acknowledgements that move the cursor, and
// the dead letters of records its receiver refused for good. The local SQLite store implements
// it (`HealthStore`); `Delivery` knows only this port.

/// One entry of the anchored change feed: a stored sample, or the tombstone of a removed one.
public enum ChangeEntry: Sendable {
    case added(QuantitySample, anchor: Int64)
    case deleted(uuid: UUID, type: String, anchor: Int64)
}

/// Errors of a store's sink definitions, naming the sink.
public enum SinkStoreError: Error, Equatable, CustomStringConvertible {
    case sinkExists(String)
    case noSuchSink(String)
    /// `sinks revoke` named types the sink does not read.
    case notRead(sink: String, types: [String])

    public var description: String {
        switch self {
        case .sinkExists(let name): "a sink named '\(name)' already exists (remove it first)"
        case .noSuchSink(let name): "no sink named '\(name)' (see 'ingestd sinks list')"
        case .notRead(let sink, let types): "sink '\(sink)' does not read \(types.joined(separator: ", ")) (see 'ingestd sinks list')"
        }
    }
}

/// A sink as stored: its name, target URL, kind options (opaque JSON owned by the Delivery
/// module), schedule, read grants (type identifiers, `*` for every type) and whose samples it
/// reads (one person, or every person; never the unassigned samples).
public struct SinkDefinition: Sendable, Equatable {
    public var name: String
    public var url: String
    public var options: String
    /// Seconds between scheduled deliveries; nil delivers right after each commit.
    public var every: Double?
    public var readTypes: [String]
    /// The person whose samples the sink reads; nil for every person's.
    public var person: String?

    public init(name: String, url: String, options: String, every: Double?, readTypes: [String], person: String? = nil) {
        self.name = name
        self.url = url
        self.options = options
        self.every = every
        self.readTypes = readTypes
        self.person = person
    }

    /// Whether the sink may read every type.
    public var readsAllTypes: Bool { readTypes.contains("*") }
}

/// A sink with its delivery state: cursor, last success, last error, dead letters.
public struct SinkState: Sendable {
    public var definition: SinkDefinition
    /// The change-feed anchor through which the receiver acknowledged.
    public var cursor: Int64
    public var lastSuccess: Date?
    public var lastError: String?
    public var lastErrorAt: Date?
    public var deadLetters: Int

    public init(definition: SinkDefinition, cursor: Int64, lastSuccess: Date?, lastError: String?, lastErrorAt: Date?,
                deadLetters: Int) {
        self.definition = definition
        self.cursor = cursor
        self.lastSuccess = lastSuccess
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
        self.deadLetters = deadLetters
    }
}

/// One stretch of a sink's change feed: entries of its granted types after its cursor, and the
/// anchor the cursor moves to once the receiver has acknowledged them all.
public struct FeedBatch: Sendable {
    public var entries: [ChangeEntry]
    /// The person of each entry (a deletion's: the person the sample had), in `entries` order.
    public var people: [String]
    public var throughAnchor: Int64

    public init(entries: [ChangeEntry], people: [String], throughAnchor: Int64) {
        self.entries = entries
        self.people = people
        self.throughAnchor = throughAnchor
    }
}

/// A record a receiver rejected for good, kept for listing and `sinks retry`.
public struct DeadLetter: Sendable, Equatable {
    public var id: Int64
    public var anchor: Int64
    public var uuid: UUID
    public var type: String
    /// The sample's JSON line, or `{"deleted":…,"type":…}`.
    public var record: String
    public var reason: String
    public var at: Date
    /// Whether `sinks retry` queued it to be sent again.
    public var retrying: Bool

    public init(id: Int64, anchor: Int64, uuid: UUID, type: String, record: String, reason: String, at: Date, retrying: Bool) {
        self.id = id
        self.anchor = anchor
        self.uuid = uuid
        self.type = type
        self.record = record
        self.reason = reason
        self.at = at
        self.retrying = retrying
    }
}

/// A record to move to dead letters: where it was in the feed, what it was, why it was refused.
public struct RejectedRecord: Sendable {
    public var anchor: Int64
    public var uuid: UUID
    public var type: String
    public var record: String
    public var reason: String

    public init(anchor: Int64, uuid: UUID, type: String, record: String, reason: String) {
        self.anchor = anchor
        self.uuid = uuid
        self.type = type
        self.record = record
        self.reason = reason
    }
}

/// A sink's current state of one (person, type): the end time of the reading it shows. Only ever
/// moves forward (`DeliveryFeed.acknowledge(publishedStates:)` keeps the later of two).
public struct PublishedState: Sendable, Hashable {
    /// The person's name; empty for the gateway's own (ambient) entities.
    public var person: String
    /// The type identifier.
    public var type: String
    public var end: Date

    public init(person: String, type: String, end: Date) {
        self.person = person
        self.type = type
        self.end = end
    }
}

/// What a sink reads, acknowledges and dead-letters: the port `Delivery` works through. One
/// feed connection belongs to one thread (a deliverer and its worker).
public protocol DeliveryFeed: AnyObject {
    /// The store's identity (a fleet binds the gateway id to it).
    func identity() throws -> String
    /// Every sink with its delivery state, in name order.
    func sinks() throws -> [SinkState]
    /// The sink named `name` (an unknown name is an error naming it).
    func sink(named name: String) throws -> SinkState
    /// Lets the feed trade durability of cursor moves for speed (a lost one re-sends a batch).
    func relaxDurabilityForDelivery() throws
    /// The feed after `cursor`: entries of `types` (`*` for every type), at most `limit`, of the
    /// samples of `person` (nil: every person's, never the unassigned ones).
    func feedBatch(after cursor: Int64, types: [String], limit: Int, person: String?) throws -> FeedBatch
    /// The newest anchor of the feed (a worker compares it with what it delivered).
    func latestAnchor() throws -> Int64
    /// Records the receiver handled: moves the cursor through `through` (nil: it stays), counts
    /// `delivered` per type, moves `rejected` to dead letters, resolves `resolvedDeadLetters`
    /// and keeps the later of each published state; one transaction.
    func acknowledge(sink: String, through: Int64?, delivered: [String: Int], rejected: [RejectedRecord],
                     resolvedDeadLetters: [Int64], publishedStates: [PublishedState], now: Date) throws
    /// Moves the cursor forward to `anchor` (never back) without a delivery (an empty stretch).
    func advanceCursor(sink: String, to anchor: Int64) throws
    /// The sink's dead letters in order, only those queued for a retry when `retryingOnly`, at most `limit` (0: all).
    func deadLetters(sink: String, retryingOnly: Bool, limit: Int) throws -> [DeadLetter]
    /// Whether `sinks retry` queued dead letters of the sink.
    func hasDeadLettersToRetry(sink: String) throws -> Bool
    /// Dead letters sent again and refused again: unqueued with the new `reason`.
    func refuseAgain(sink: String, deadLetters ids: [Int64], reason: String, now: Date) throws
    /// The sink's last error (shown by `sinks list`).
    func recordDeliveryFailure(sink: String, message: String, now: Date) throws
    /// The sink's published state per (person, type).
    func publishedStates(sink: String) throws -> [PublishedState]
    /// Whether the person named `person` has any stored sample of type `type` (an identifier).
    func holdsSamples(person: String, type: String) throws -> Bool
    /// The newest stored sample (by start, then end) of `type` of the person named `person`;
    /// nil when there is none (a Home Assistant sink shows it again in another unit).
    func newestSample(person: String, type: QuantityType) throws -> QuantitySample?
    /// Forgets the sink's published states of these (person, type identifier) pairs: their
    /// entities were removed from the receiver.
    func forgetPublishedStates(sink: String, keys: [(person: String, type: String)]) throws
    /// The names of the people, in the order they were added.
    func queryPeopleNames() throws -> [String]
    /// The measurement system the person named `name` set (`people set P --units`); nil when none.
    func queryUnitSystem(ofPerson name: String) throws -> UnitSystem?
    /// The statistics query of the read port (today's totals of a Home Assistant sink).
    func statistics(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                    granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [StatisticsBucket]
    /// Ends the feed's connection.
    func close()
}
