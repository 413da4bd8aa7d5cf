import Foundation
import HealthModel

/// Combines the statistics of several people (or gateways), computed separately over the same
/// buckets, into one answer per bucket: statistics never merge two people by priority.
public enum StatisticsCombination {
    /// Sums add; minimum and maximum take the extreme; averages are weighted by each part's
    /// sample count; latest takes the most recent interval (latest end, then latest start).
    public static func combine(_ operation: StatisticsOperation, _ parts: [[StatisticsBucket]]) -> [StatisticsBucket] {
        guard var result = parts.first else { return [] }
        for part in parts.dropFirst() where part.count == result.count {
            for (index, bucket) in part.enumerated() {
                result[index] = merge(operation, result[index], bucket)
            }
        }
        return result
    }

    private static func merge(_ operation: StatisticsOperation, _ a: StatisticsBucket, _ b: StatisticsBucket) -> StatisticsBucket {
        guard let bValue = b.value else { return a }
        guard let aValue = a.value else { return b }
        var merged = a
        merged.sampleCount = a.sampleCount + b.sampleCount
        switch operation {
        case .sum: merged.value = aValue + bValue
        case .minimum: merged.value = min(aValue, bValue)
        case .maximum: merged.value = max(aValue, bValue)
        case .average:
            let total = Double(a.sampleCount + b.sampleCount)
            merged.value = total > 0 ? (aValue * Double(a.sampleCount) + bValue * Double(b.sampleCount)) / total : aValue
        case .latest:
            let aInterval = a.latestInterval ?? DateInterval(start: a.start, duration: 0)
            let bInterval = b.latestInterval ?? DateInterval(start: b.start, duration: 0)
            let bIsLater = (bInterval.end, bInterval.start) > (aInterval.end, aInterval.start)
            merged.value = bIsLater ? bValue : aValue
            merged.latestInterval = bIsLater ? b.latestInterval : a.latestInterval
        }
        return merged
    }
}

/// The earliest start and latest end of the samples a statistics query found: all a query
/// without `--from`/`--to` needs to choose its buckets.
public struct SampleExtent: Sendable, Equatable {
    public var earliestStart: Date
    public var latestEnd: Date
    /// Whether an instantaneous reading lies exactly at `latestEnd` (it must still count).
    public var instantAtLatestEnd: Bool

    public init(earliestStart: Date, latestEnd: Date, instantAtLatestEnd: Bool) {
        self.earliestStart = earliestStart
        self.latestEnd = latestEnd
        self.instantAtLatestEnd = instantAtLatestEnd
    }

    /// The extent of one sample from `start` to `end`.
    public init(start: Date, end: Date) {
        self.init(earliestStart: start, latestEnd: end, instantAtLatestEnd: start == end)
    }

    /// The extent of `samples`; nil when there are none.
    public init?(_ samples: [StatisticsSample]) {
        guard let first = samples.first else { return nil }
        self.init(start: first.start, end: first.end)
        for sample in samples.dropFirst() { include(start: sample.start, end: sample.end) }
    }

    /// Grows the extent to hold a sample from `start` to `end` (samples in any order).
    public mutating func include(start: Date, end: Date) {
        earliestStart = min(earliestStart, start)
        if end > latestEnd {
            latestEnd = end
            instantAtLatestEnd = start == end
        } else if end == latestEnd, start == end {
            instantAtLatestEnd = true
        }
    }

    /// Two samples with this extent (for `CalendarBuckets(covering:)`).
    var representatives: [StatisticsSample] {
        var samples = [StatisticsSample(start: earliestStart, end: latestEnd, value: 0)]
        if instantAtLatestEnd { samples.append(StatisticsSample(at: latestEnd, value: 0)) }
        return samples
    }
}

/// How a statistics query chooses its buckets, the same for every store.
public enum StatisticsRange {
    /// Calendar buckets of `granularity` in `zone` over `[from, to)`, one bucket without
    /// `granularity`; a missing end of the range is taken from `extent` (the samples found). Nil
    /// when there is nothing to bucket (no samples and no range).
    public static func buckets(from: Date?, to: Date?, granularity: BucketGranularity?, zone: TimeZone,
                               extent: SampleExtent?) throws -> CalendarBuckets? {
        switch (from, to, granularity) {
        case (let from?, let to?, let granularity?):
            return try CalendarBuckets(from: from, to: to, granularity: granularity, timeZone: zone)
        case (let from?, let to?, nil):
            return try CalendarBuckets(single: from, to: to)
        case (_, _, let granularity?):
            let covering = try CalendarBuckets(covering: extent?.representatives ?? [], granularity: granularity, timeZone: zone)
            guard !covering.isEmpty else { return nil }
            let start = from ?? covering.boundaries[0]
            let end = to ?? covering.boundaries[covering.boundaries.count - 1]
            guard start < end else { return nil }
            return try CalendarBuckets(from: start, to: end, granularity: granularity, timeZone: zone)
        case (_, _, nil):
            guard let extent else { return nil }
            let start = from ?? extent.earliestStart
            var end = to ?? extent.latestEnd
            // The range is half-open: a reading exactly at the last instant must still count.
            if to == nil, extent.instantAtLatestEnd { end = extent.latestEnd.addingTimeInterval(1) }
            if end <= start { end = start.addingTimeInterval(1) }
            return try CalendarBuckets(single: start, to: end)
        }
    }
}
