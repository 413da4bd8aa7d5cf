import Foundation
import HealthModel

/// Why the pipeline refused a sample. Each case carries the offending value.
public enum RejectionReason: Error, Hashable, Sendable, CustomStringConvertible {
    /// The sample's unit cannot express the type (e.g. `kg` for a step count).
    case incompatibleUnit(unit: String, canonical: String)
    /// The value is NaN or infinite.
    case nonFiniteValue
    /// The value, in the canonical unit, lies outside the type's plausible range.
    case outOfRange(value: Double, unit: String, range: ClosedRange<Double>)
    /// The sample ends before it starts.
    case endBeforeStart
    /// The sample ends more than the allowed clock skew after the ingest clock's now.
    case inFuture(secondsAhead: Double)
    /// The source was explicitly denied the type (`ingestd auth deny`).
    case notAuthorized
    /// The correlation breaks its type's rules.
    case invalidCorrelation(String)
    /// `HKMetadataKeySyncIdentifier` is the empty string.
    case emptySyncIdentifier
    /// The uuid is already stored for a sample with different content.
    case uuidConflict(UUID)
    /// The sync identifier is stored with the same sync version and different content.
    case syncVersionConflict(syncIdentifier: String, version: Int)

    /// A short stable name used for counting and reports (`out-of-range`, `denied`, …).
    public var key: String {
        switch self {
        case .incompatibleUnit: "incompatible-unit"
        case .nonFiniteValue: "non-finite"
        case .outOfRange: "out-of-range"
        case .endBeforeStart: "end-before-start"
        case .inFuture: "in-future"
        case .notAuthorized: "denied"
        case .invalidCorrelation: "invalid-correlation"
        case .emptySyncIdentifier: "empty-sync-identifier"
        case .uuidConflict: "uuid-conflict"
        case .syncVersionConflict: "sync-version-conflict"
        }
    }

    public var description: String {
        switch self {
        case .incompatibleUnit(let unit, let canonical): "unit \"\(unit)\" is not compatible with \"\(canonical)\""
        case .nonFiniteValue: "value is not a finite number"
        case .outOfRange(let value, let unit, let range):
            "value \(value) \(unit) is outside the plausible range \(range.lowerBound)...\(range.upperBound)"
        case .endBeforeStart: "end is before start"
        case .inFuture(let seconds): "sample ends \(Int(seconds.rounded())) s in the future"
        case .notAuthorized: "type denied to the source"
        case .invalidCorrelation(let reason): "invalid correlation: \(reason)"
        case .emptySyncIdentifier: "the sync identifier is empty"
        case .uuidConflict(let uuid): "uuid \(uuid.uuidString) is already stored for a different sample"
        case .syncVersionConflict(let identifier, let version):
            "sync identifier \(JSONText.quoted(identifier)) version \(version) is already stored with another value or time (a changed reading needs a higher HKMetadataKeySyncVersion)"
        }
    }
}

/// What rejections are counted by: source, type identifier and reason key.
public struct RejectionKey: Hashable, Sendable, Comparable {
    public var source: String
    public var type: String
    public var reason: String

    public init(source: String, type: String, reason: String) {
        self.source = source
        self.type = type
        self.reason = reason
    }

    public static func < (a: RejectionKey, b: RejectionKey) -> Bool {
        (a.type, a.source, a.reason) < (b.type, b.source, b.reason)
    }
}

/// Per-type counts of what happened to the samples of one or more batches.
public struct TypeCounts: Sendable, Equatable {
    public var written = 0
    public var duplicate = 0
    public var replaced = 0
    public var denied = 0
    public var invalid = 0
    /// Samples of an undecided (source, type) pair, kept in the pending area (new or already there).
    public var held = 0

    public init() {}

    public static func += (lhs: inout TypeCounts, rhs: TypeCounts) {
        lhs.written += rhs.written
        lhs.duplicate += rhs.duplicate
        lhs.replaced += rhs.replaced
        lhs.denied += rhs.denied
        lhs.invalid += rhs.invalid
        lhs.held += rhs.held
    }
}

/// The summary of an ingest: counts per type, rejections per (source, type, reason), denied types
/// per source, and the events the commits produced. Mergeable across batches.
public struct IngestReport: Sendable {
    public var perType: [String: TypeCounts] = [:]
    public var rejections: [RejectionKey: Int] = [:]
    /// Denied type identifiers per source, for the grant hint.
    public var denied: [String: Set<String>] = [:]
    /// Held (undecided) type identifiers per source, for the grant and deny hints.
    public var held: [String: Set<String>] = [:]
    /// What the pending area did (new, already held, dropped by the bounds, expired).
    public var pending = PendingReceipt()
    /// One example message per (type, reason), for logs.
    public var examples: [RejectionKey: String] = [:]
    public var events: [RecordsProcessed] = []
    public var anchor: Int64?
    /// The records of the batch (by index in the `ingest` call) with a member whose uuid or sync
    /// version conflicted, and why: for per-line reports. Not carried over by `merge`, whose
    /// indexes would mean nothing.
    public var conflicts: [(record: Int, reason: RejectionReason)] = []
    /// Samples stored without a person (the assignment rules could not tell whose they are).
    public var unassigned = 0

    public init() {}

    public var totals: TypeCounts {
        var t = TypeCounts()
        for counts in perType.values { t += counts }
        return t
    }

    public mutating func merge(_ other: IngestReport) {
        for (type, counts) in other.perType { perType[type, default: TypeCounts()] += counts }
        for (key, n) in other.rejections { rejections[key, default: 0] += n }
        for (source, types) in other.denied { denied[source, default: []].formUnion(types) }
        for (source, types) in other.held { held[source, default: []].formUnion(types) }
        pending.merge(other.pending)
        for (key, text) in other.examples where examples[key] == nil { examples[key] = text }
        events += other.events
        unassigned += other.unassigned
        if let a = other.anchor { anchor = max(anchor ?? a, a) }
    }

    /// The `ingestd auth grant …` commands that would bring the held samples in.
    public var grantHints: [String] {
        held.keys.sorted().map { source in
            let types = (held[source] ?? []).compactMap { QuantityType.named($0) }
            return AuthorizationPolicy.grantCommand(source: source, types: types)
        }
    }
}
