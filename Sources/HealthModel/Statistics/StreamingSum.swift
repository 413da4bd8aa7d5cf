import Foundation

/// `StatisticsEngine.sum` computed one sample at a time, from samples in start order, without
/// holding them (a year of minute steps is half a million samples).
///
/// It is exact only while the priority merge drops nothing: while no interval sample overlaps
/// an interval sample of another source rank and no instantaneous sample lies inside an interval
/// sample of a higher-priority source. Then every sample wins wherever it lies, and the totals
/// are the engine's bit for bit (the same pieces added in the same order). `add` answers false
/// as soon as that stops holding (or the samples are not in start order); the caller then hands
/// all the samples to the engine instead.
public struct StreamingSum: Sendable {
    private let buckets: CalendarBuckets
    private var totals: BucketTotals
    /// The bucket holding the latest clipped start seen (clipped starts never decrease).
    private var cursor = 0
    private var lastStart = -Double.infinity
    private var index = 0
    /// Each source rank seen with the latest (clipped) end of its interval samples.
    private var rankEnds: [(rank: Int, end: Double)] = []
    /// The latest instant of a counted instantaneous sample, and the lowest priority (highest
    /// rank) among those at that instant: an interval of higher priority starting there covers them.
    private var latestInstant = -Double.infinity
    private var highestRankAtLatestInstant = Int.min

    /// A sum over `buckets`, no samples added yet.
    public init(buckets: CalendarBuckets) {
        self.buckets = buckets
        totals = BucketTotals(count: buckets.count)
    }

    /// Adds the next sample (validated as the engine validates it, with its position among those
    /// added as the error's index). False when the samples so far need the priority merge or are
    /// not in start order: this sum is then not the engine's and must be dropped.
    public mutating func add(start startDate: Date, end endDate: Date, value: Double, sourceRank rank: Int)
        throws(StatisticsError) -> Bool {
        let start = startDate.timeIntervalSinceReferenceDate
        let end = endDate.timeIntervalSinceReferenceDate
        guard start.isFinite, end.isFinite, start <= end
        else { throw .invalidSampleInterval(index: index, start: startDate, end: endDate) }
        guard value.isFinite else { throw .nonFiniteSampleValue(index: index, value: value) }
        index += 1
        guard start >= lastStart else { return false }
        lastStart = start
        let bounds = buckets.boundarySeconds
        let bucketCount = buckets.count
        guard bucketCount > 0 else { return true }
        let rangeStart = bounds[0]
        let rangeEnd = bounds[bucketCount]
        let position = max(start, rangeStart)
        while cursor + 1 < bucketCount, bounds[cursor + 1] <= position { cursor += 1 }

        if start == end {
            guard start >= rangeStart, start < rangeEnd else { return true }
            for other in rankEnds where other.rank < rank && other.end > start { return false }
            if start == latestInstant {
                highestRankAtLatestInstant = max(highestRankAtLatestInstant, rank)
            } else {
                latestInstant = start
                highestRankAtLatestInstant = rank
            }
            totals.add(instant: value, in: cursor)
            return true
        }
        let clippedEnd = min(end, rangeEnd)
        guard position < clippedEnd else { return true }
        if latestInstant == position, highestRankAtLatestInstant > rank { return false }
        var known = false
        for k in rankEnds.indices {
            if rankEnds[k].rank == rank {
                rankEnds[k].end = max(rankEnds[k].end, clippedEnd)
                known = true
            } else if rankEnds[k].end > position {
                return false
            }
        }
        if !known { rankEnds.append((rank, clippedEnd)) }
        var lastCountedBucket = -1
        totals.add(value, duration: end - start, from: position, to: clippedEnd, firstBucket: cursor,
                   bounds: bounds, lastCountedBucket: &lastCountedBucket)
        return true
    }

    /// The sum per bucket, as `StatisticsEngine.sum` gives it for the samples added.
    public func result() -> [StatisticsBucket] {
        totals.buckets(buckets)
    }
}

/// Per-bucket totals and sample counts of a sum, and the one way a part of an interval sample is
/// split across bucket edges (in proportion to time).
///
/// Interval parts and instantaneous samples are added up apart, each in the order they come,
/// and a bucket's value is the first total plus the second: the engine (which takes all the
/// interval samples first) and `StreamingSum` (which takes samples in start order, holding
/// none) add the same numbers in the same order, so they agree to the last bit.
struct BucketTotals: Sendable {
    private var totals: [Double]
    private var instantTotals: [Double]
    private var counts: [Int]

    init(count: Int) {
        totals = [Double](repeating: 0, count: count)
        instantTotals = [Double](repeating: 0, count: count)
        counts = [Int](repeating: 0, count: count)
    }

    /// Adds `value × overlap / duration` to each bucket that `[from, to)` overlaps, beginning with
    /// `firstBucket` (the one holding `from`); counts the sample once per bucket
    /// (`lastCountedBucket` carries that across the parts of one sample).
    mutating func add(_ value: Double, duration: Double, from: Double, to: Double, firstBucket: Int,
                      bounds: [Double], lastCountedBucket: inout Int) {
        var bucket = firstBucket
        var cursor = from
        while cursor < to, bucket < totals.count {
            let pieceEnd = min(to, bounds[bucket + 1])
            totals[bucket] += value * ((pieceEnd - cursor) / duration)
            if lastCountedBucket != bucket {
                counts[bucket] += 1
                lastCountedBucket = bucket
            }
            cursor = pieceEnd
            bucket += 1
        }
    }

    /// Adds an instantaneous sample's whole value to `bucket`.
    mutating func add(instant value: Double, in bucket: Int) {
        instantTotals[bucket] += value
        counts[bucket] += 1
    }

    /// One result per bucket: nil where no sample counted.
    func buckets(_ buckets: CalendarBuckets) -> [StatisticsBucket] {
        (0..<totals.count).map { j in
            StatisticsBucket(
                start: buckets.boundaries[j], end: buckets.boundaries[j + 1],
                value: counts[j] > 0 ? totals[j] + instantTotals[j] : nil, sampleCount: counts[j])
        }
    }
}
