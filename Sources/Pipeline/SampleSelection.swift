import Foundation
import HealthModel

/// Why a selection of samples (`samples` on the command line, `/api/v1/samples`) cannot be made;
/// carries the offending count.
public enum SampleSelectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Both the newest sample only and the newest N were asked for.
    case latestAndNewest
    /// A count of newest samples below 1.
    case newestBelowOne(Int)
    /// A limit (which lists the oldest) together with the newest N.
    case limitWithNewest(Int)
    case negativeLimit(Int)

    public var description: String {
        switch self {
        case .latestAndNewest: "give latest or newest N, not both"
        case .newestBelowOne(let count): "newest must be at least 1, not \(count)"
        case .limitWithNewest(let limit): "limit \(limit) lists the oldest; use newest N alone"
        case .negativeLimit(let limit): "limit must not be negative, not \(limit)"
        }
    }
}

/// Which samples of a type to list: those overlapping `[from, to)`, optionally of one source,
/// either the oldest (at most `limit`, 0: all) or the newest `newest`, oldest of them first.
/// Checked once here for the command line and the dashboard's API alike.
public struct SampleSelection: Sendable, Equatable {
    public var type: QuantityType
    public var from: Date?
    public var to: Date?
    public var source: String?
    /// At most this many of the oldest (0: no limit); 0 when `newest` is set.
    public var limit: Int
    /// The newest N instead of the oldest; nil lists from the oldest.
    public var newest: Int?

    public init(type: QuantityType, from: Date? = nil, to: Date? = nil, source: String? = nil, limit: Int = 0,
                latest: Bool = false, newest: Int? = nil) throws(SampleSelectionError) {
        if latest, newest != nil { throw .latestAndNewest }
        let count = latest ? 1 : newest
        if let count, count < 1 { throw .newestBelowOne(count) }
        if count != nil, limit != 0 { throw .limitWithNewest(limit) }
        guard limit >= 0 else { throw .negativeLimit(limit) }
        self.type = type
        self.from = from
        self.to = to
        self.source = source
        self.limit = limit
        self.newest = count
    }

    /// Hands the selected samples to `body` in start order: the oldest streamed as the store reads
    /// them (a throwing `body` stops the read), the newest N read at once (N is the bound).
    public func forEach(in store: any QueryStore, scope: QueryScope, _ body: (QuantitySample) throws -> Void) throws {
        if let newest {
            try store.newestSamples(type: type, from: from, to: to, source: source, scope: scope, count: newest).forEach(body)
        } else {
            try store.forEachSample(type: type, from: from, to: to, source: source, scope: scope, limit: limit, body)
        }
    }
}
