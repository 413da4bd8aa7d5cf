import Foundation
import HealthModel
import Pipeline

extension HealthStore {
    /// HealthKit's statistics collection query over the store: fetches the samples of `type`
    /// overlapping `[from, to)`, ranks their sources by the type's priority order, and computes
    /// `operation` per calendar bucket of `granularity` in `zone` (one bucket without
    /// `granularity`), over the samples of `person` (the commands always pass one person:
    /// statistics never merge two people). Without `from`/`to` the range is taken from the samples found; no samples
    /// and no range give no buckets. This is what `ingestd stats` and `ingestd today` run.
    public func statistics(
        _ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
        granularity: BucketGranularity?, zone: TimeZone, person: PersonScope = .everyone
    ) throws -> [StatisticsBucket] {
        let samples = try statisticsSamples(type: type, from: from, to: to, person: person)
        guard let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone,
                                                        extent: SampleExtent(samples)) else { return [] }
        return try StatisticsEngine().statistics(operation, of: samples, in: buckets)
    }

    /// The samples of `type` overlapping `[from, to)` as the statistics engine takes them, each
    /// with its source's rank in `priority(for: type)` (sources not listed rank last). Read
    /// straight from the rows: the rank is looked up once per run of samples of one source.
    public func statisticsSamples(type: QuantityType, from: Date?, to: Date?,
                                  person: PersonScope = .everyone) throws -> [StatisticsSample] {
        let statement = try pointsStatement(type: type, from: from, to: to, person: person)
        let priority = try priority(for: type)
        guard let statement else { return [] }
        var rankByName: [String: Int] = [:]
        for (index, source) in priority.enumerated() { rankByName[source] = index }
        var rankBySourceID: [Int64: Int] = [:]
        var lastSource: Int64?
        var lastRank = priority.count
        var result: [StatisticsSample] = []
        try statement.forEachRow { row in
            let source = row.int64(at: 3)
            if source != lastSource {
                lastSource = source
                if let rank = rankBySourceID[source] {
                    lastRank = rank
                } else {
                    lastRank = rankByName[sourceNames[source] ?? "?"] ?? priority.count
                    rankBySourceID[source] = lastRank
                }
            }
            result.append(StatisticsSample(
                start: Date(timeIntervalSince1970: row.double(at: 0)), end: Date(timeIntervalSince1970: row.double(at: 1)),
                value: row.double(at: 2), sourceRank: lastRank))
        }
        return result
    }
}
