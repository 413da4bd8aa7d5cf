import Foundation
import HealthModel

/// What holding does with a record the pending area's bounds have no room for.
public enum PendingOverflow: Sendable, Equatable {
    /// Drop the source's oldest held readings (counted in `PendingReceipt.dropped` and in
    /// `auth pending`): the daemon and replay, where a device keeps sending.
    case dropOldest
    /// Throw `PendingBoundExceeded`, rolling the batch back: an import, whose held history must
    /// never be dropped (the user grants, or raises the bound, and imports again).
    case refuse
}

/// A batch would take the pending area past a bound that `PendingOverflow.refuse` keeps.
public struct PendingBoundExceeded: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Bound: Sendable, Equatable {
        /// `source` would hold more than `limit` records.
        case records
        /// `source`'s held records would take more than `limit` bytes.
        case bytes
        /// More than `limit` distinct sources would hold records (`source` is the first one past it).
        case sources
    }
    public var source: String
    public var bound: Bound
    public var limit: Int

    public init(source: String, bound: Bound, limit: Int) {
        self.source = source
        self.bound = bound
        self.limit = limit
    }

    public var description: String {
        switch bound {
        case .records: "\(JSONText.quoted(source)) would hold more than \(limit) records in the pending area"
        case .bytes: "\(JSONText.quoted(source)) would hold more than \(limit) bytes of records in the pending area"
        case .sources: "more than \(limit) sources would hold records in the pending area (the next is \(JSONText.quoted(source)))"
        }
    }
}

/// How long the pending area keeps held records and how much it keeps per source.
public struct PendingLimits: Sendable, Equatable {
    /// Records held longer than this are removed (with a log line by the daemon). Default 30 days.
    public var retention: TimeInterval
    /// At most this many held records per source; past it the oldest readings are dropped.
    public var maxRecordsPerSource: Int
    /// At most this many bytes of held records (their JSON lines) per source; past it the oldest are dropped.
    public var maxBytesPerSource: Int
    /// At most this many distinct sources hold records at once (the per-source bounds alone let
    /// ever new source names grow the area without end); a new source past it is not held.
    public var maxSources: Int
    /// What happens past a bound.
    public var overflow: PendingOverflow

    public static let defaultRetentionDays = 30
    public static let defaultMaxRecordsPerSource = 100_000
    public static let defaultMaxBytesPerSource = 64 * 1024 * 1024
    public static let defaultMaxSources = 1_000

    public init(retention: TimeInterval = TimeInterval(defaultRetentionDays) * 86_400,
                maxRecordsPerSource: Int = defaultMaxRecordsPerSource,
                maxBytesPerSource: Int = defaultMaxBytesPerSource,
                maxSources: Int = defaultMaxSources,
                overflow: PendingOverflow = .dropOldest) {
        self.retention = retention
        self.maxRecordsPerSource = maxRecordsPerSource
        self.maxBytesPerSource = maxBytesPerSource
        self.maxSources = maxSources
        self.overflow = overflow
    }
}
