import Foundation
import HealthModel

extension HealthStore {
    /// HealthKit's statistics collection query over the store: fetches the samples of `type`
    /// overlapping `[from, to)`, ranks their sources by the type's priority order, and computes
    /// `operation` per calendar bucket of `granularity` in `zone` (one bucket without
    /// `granularity`). Without `from`/`to` the range is taken from the samples found; no samples
    /// and no range give no buckets. This is what `ingestd stats` and `ingestd today` run.
    public func statistics(
        _ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
        granularity: BucketGranularity?, zone: TimeZone
    ) throws -> [StatisticsBucket] {
        let samples = try statisticsSamples(type: type, from: from, to: to)
        let engine = StatisticsEngine()
        let buckets: CalendarBuckets
        switch (from, to, granularity) {
        case (let from?, let to?, let granularity?):
            buckets = try CalendarBuckets(from: from, to: to, granularity: granularity, timeZone: zone)
        case (let from?, let to?, nil):
            buckets = try CalendarBuckets(single: from, to: to)
        case (_, _, let granularity?):
            let covering = try CalendarBuckets(covering: samples, granularity: granularity, timeZone: zone)
            guard !covering.isEmpty else { return [] }
            let start = from ?? covering.boundaries[0]
            let end = to ?? covering.boundaries[covering.boundaries.count - 1]
            guard start < end else { return [] }
            buckets = try CalendarBuckets(from: start, to: end, granularity: granularity, timeZone: zone)
        case (_, _, nil):
            guard let first = samples.map(\.start).min(), let last = samples.map(\.end).max() else { return [] }
            let start = from ?? first
            var end = to ?? last
            if end <= start { end = start.addingTimeInterval(1) }
            buckets = try CalendarBuckets(single: start, to: end)
        }
        return try engine.statistics(operation, of: samples, in: buckets)
    }

    /// The samples of `type` overlapping `[from, to)` as the statistics engine takes them, each
    /// with its source's rank in `priority(for: type)` (sources not listed rank last).
    public func statisticsSamples(type: QuantityType, from: Date?, to: Date?) throws -> [StatisticsSample] {
        let points = try points(type: type, from: from, to: to)
        let priority = try priority(for: type)
        var rank: [String: Int] = [:]
        for (index, source) in priority.enumerated() { rank[source] = index }
        return points.map {
            StatisticsSample(start: Date(timeIntervalSince1970: $0.start), end: Date(timeIntervalSince1970: $0.end),
                             value: $0.value, sourceRank: rank[$0.source] ?? priority.count)
        }
    }
}
