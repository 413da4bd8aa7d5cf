import Foundation
import HealthModel

/// The port through which the pipeline writes: implemented by the SQLite store (and by test sinks).
///
/// The store enforces identity with its own unique indexes; the pipeline never deduplicates in
/// memory. `write` commits the whole batch in one transaction or nothing.
public protocol SampleStore: AnyObject {
    /// The authorization grants in force now (re-read by the caller when they may have changed).
    func loadAuthorization() throws -> AuthorizationPolicy
    /// The people, device owners, scale user slots and recent body masses the assignment stage uses.
    func loadHousehold() throws -> Household
    /// The person of the stored body mass with this source and sync identifier (nil: none stored,
    /// or stored unassigned): where the derived readings of that weighing go.
    func personOfWeighing(source: String, syncIdentifier: String) throws -> Int64?
    /// Writes validated, normalized, authorized records in one transaction and says what became of each.
    /// `people[i]` is the person of `batch[i]` (nil: unassigned).
    /// In the same transaction: `held` (records of undecided (source, type) pairs) go to the pending
    /// area, and the pending rows `releasing` (being brought in by a grant) are removed from it.
    /// A store that other processes write too checks, under its write lock, that every `held`
    /// record's pair is still undecided, and throws ``AuthorizationChangedError`` (committing
    /// nothing) when a grant or denial came in since the caller read the grants.
    func write(_ batch: [NormalizedRecord], people: [Int64?], held: [NormalizedRecord], releasing: [Int64],
               rejections: [RejectionKey: Int]) throws -> CommitReceipt
}

/// A write was refused because a held record's (source, type) pair was granted or denied since
/// the grants were read (`ingestd auth grant` in another process during a replay): the
/// pipeline reads the grants again and retries, so nothing is held for a decided pair.
public struct AuthorizationChangedError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The pair that is decided now.
    public var source: String
    public var type: String

    public init(source: String, type: String) {
        self.source = source
        self.type = type
    }

    public var description: String { "the authorization of \(source) for \(type) changed during the write" }
}

/// A record that passed normalization, validation and authorization: values are in canonical units.
public enum NormalizedRecord: Sendable {
    case sample(QuantitySample)
    case correlation(Correlation)

    /// The source that produced the record.
    public var source: String {
        switch self {
        case .sample(let sample): sample.source
        case .correlation(let correlation): correlation.source
        }
    }

    /// The member samples (one for a sample, all objects for a correlation).
    public var samples: [QuantitySample] {
        switch self {
        case .sample(let sample): [sample]
        case .correlation(let correlation): correlation.objects
        }
    }
}

/// What the store did with one sample.
public enum WriteOutcome: Sendable, Equatable {
    /// Stored for the first time.
    case written
    /// Already stored (same identity, or the same sync identifier with an equal or higher version).
    case duplicate
    /// Stored, replacing an older sync version which became a tombstone.
    case replaced
    /// Not stored: its uuid belongs to a stored sample with different content (a uuid names one
    /// sample; reusing it for another is an error of the writer, never a duplicate).
    case uuidConflict
    /// Not stored: a sample with the same sync identifier and the same sync version but other
    /// content (value or times) is stored. A version names one content; sending another under
    /// it is an error of the writer, never a duplicate (a new content needs a higher version).
    case syncVersionConflict
}

/// The store's answer to a committed batch: per record, per member sample, what happened.
public struct CommitReceipt: Sendable {
    /// `outcomes[i][j]` is the outcome of the j-th member sample of the i-th record.
    public var outcomes: [[WriteOutcome]]
    /// The change-log anchor after the commit.
    public var anchor: Int64
    /// One "records processed" event per (type, source) with its count of newly stored samples.
    public var events: [RecordsProcessed]
    /// What the pending area did with the held records of the batch.
    public var pending: PendingReceipt

    public init(outcomes: [[WriteOutcome]], anchor: Int64, events: [RecordsProcessed],
                pending: PendingReceipt = PendingReceipt()) {
        self.outcomes = outcomes
        self.anchor = anchor
        self.events = events
        self.pending = pending
    }
}

/// The pending area's part of a commit: held records newly kept, already held (deduplicated),
/// and what the bounds and the retention period removed, per source.
public struct PendingReceipt: Sendable, Equatable {
    /// Held records kept for the first time (or replacing an older sync version).
    public var newlyHeld = 0
    /// Held records the pending area already had.
    public var alreadyHeld = 0
    /// Oldest pending records dropped per source because the source was over its count or size bound.
    public var dropped: [String: Int] = [:]
    /// Pending records removed per source because they were older than the retention period.
    public var expired: [String: Int] = [:]

    public init() {}

    public mutating func merge(_ other: PendingReceipt) {
        newlyHeld += other.newlyHeld
        alreadyHeld += other.alreadyHeld
        for (source, n) in other.dropped { dropped[source, default: 0] += n }
        for (source, n) in other.expired { expired[source, default: 0] += n }
    }
}

/// The "records processed" notification: after a commit, how many samples of a type a source added.
public struct RecordsProcessed: Sendable, Equatable {
    public var type: String
    public var source: String
    public var count: Int
    public var anchor: Int64
    /// The person the samples were assigned to (nil: unassigned).
    public var person: String?

    public init(type: String, source: String, count: Int, anchor: Int64, person: String? = nil) {
        self.type = type
        self.source = source
        self.count = count
        self.anchor = anchor
        self.person = person
    }
}
