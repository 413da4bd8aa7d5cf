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
    ///
    /// A sum over a given range is first summed as the rows are read (`StreamingSum`), holding no
    /// samples; only when the rows need the priority merge (sources overlapping) are they read
    /// again for the engine.
    public func statistics(
        _ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
        granularity: BucketGranularity?, zone: TimeZone, person: PersonScope = .everyone
    ) throws -> [StatisticsBucket] {
        if from != nil, to != nil,
           let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone, extent: nil) {
            var samples: [StatisticsSample]?
            return try statistics(operation, type: type, from: from, to: to, in: buckets, person: person, samples: &samples)
        }
        let samples = try statisticsSamples(type: type, from: from, to: to, person: person)
        guard let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone,
                                                        extent: SampleExtent(samples)) else { return [] }
        return try StatisticsEngine().statistics(operation, of: samples, in: buckets)
    }

    /// `operation` per bucket of `buckets` over `person`'s samples of `type` overlapping
    /// `[from, to)`. A sum is summed as the rows are read (`StreamingSum`) while `samples` is nil;
    /// otherwise, or when the rows need the priority merge, the engine computes it over the
    /// samples, read once into `samples` for every later operation over the same rows.
    func statistics(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                    in buckets: CalendarBuckets, person: PersonScope,
                    samples: inout [StatisticsSample]?) throws -> [StatisticsBucket] {
        if operation == .sum, samples == nil {
            var sum = StreamingSum(buckets: buckets)
            let complete = try forEachStatisticsRow(type: type, from: from, to: to, person: person) {
                try sum.add(start: $0, end: $1, value: $2, sourceRank: $3)
            }
            if complete { return sum.result() }
        }
        let read = try samples ?? statisticsSamples(type: type, from: from, to: to, person: person)
        samples = read
        return try StatisticsEngine().statistics(operation, of: read, in: buckets)
    }

    /// The extent of the samples `statisticsSamples` gives (`SampleExtent(_:)` of them), taken
    /// as the rows are read, holding none; nil when there are none.
    func statisticsExtent(type: QuantityType, from: Date?, to: Date?, person: PersonScope) throws -> SampleExtent? {
        var extent: SampleExtent?
        try forEachStatisticsRow(type: type, from: from, to: to, person: person) { start, end, _, _ in
            if extent == nil { extent = SampleExtent(start: start, end: end) } else { extent?.include(start: start, end: end) }
            return true
        }
        return extent
    }

    /// The samples of `type` overlapping `[from, to)` as the statistics engine takes them, each
    /// with its source's rank in `priority(for: type)` (sources not listed rank last).
    public func statisticsSamples(type: QuantityType, from: Date?, to: Date?,
                                  person: PersonScope = .everyone) throws -> [StatisticsSample] {
        var result: [StatisticsSample] = []
        try forEachStatisticsRow(type: type, from: from, to: to, person: person) {
            result.append(StatisticsSample(start: $0, end: $1, value: $2, sourceRank: $3))
            return true
        }
        return result
    }

    /// Hands `body` the start, end, value and source rank of each sample `statisticsSamples`
    /// gives, in start order, straight from the rows; stops when `body` answers false. Whether
    /// every row was handed. A source's rank is looked up once, then found in a short list (a
    /// type's samples come from a few sources, often interleaved row by row), or past its first
    /// sixteen sources in a dictionary.
    @discardableResult
    private func forEachStatisticsRow(type: QuantityType, from: Date?, to: Date?, person: PersonScope,
                                      _ body: (Date, Date, Double, Int) throws -> Bool) throws -> Bool {
        let statement = try pointsStatement(type: type, from: from, to: to, person: person)
        let priority = try priority(for: type)
        guard let statement else { return true }
        var rankByName: [String: Int] = [:]
        for (index, source) in priority.enumerated() { rankByName[source] = index }
        var sourceIDs: [Int64] = []
        var sourceRanks: [Int] = []
        var moreRanks: [Int64: Int] = [:]
        var lastSource: Int64?
        var lastRank = priority.count
        defer { statement.reset() }
        while try statement.step() {
            let source = statement.int64(at: 3)
            if source != lastSource {
                lastSource = source
                if let known = sourceIDs.firstIndex(of: source) {
                    lastRank = sourceRanks[known]
                } else if let rank = moreRanks[source] {
                    lastRank = rank
                } else {
                    lastRank = rankByName[sourceNames[source] ?? "?"] ?? priority.count
                    if sourceIDs.count < 16 {
                        sourceIDs.append(source)
                        sourceRanks.append(lastRank)
                    } else {
                        moreRanks[source] = lastRank
                    }
                }
            }
            guard try body(Date(timeIntervalSince1970: statement.double(at: 0)),
                            Date(timeIntervalSince1970: statement.double(at: 1)), statement.double(at: 2), lastRank)
            else { return false }
        }
        return true
    }
}
