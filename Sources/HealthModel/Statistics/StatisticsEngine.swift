import Foundation

/// Computes HealthKit-style statistics (`HKStatisticsCollectionQuery`) over samples of one
/// quantity type, per calendar bucket. Pure values: no I/O, no clock.
///
/// Rules, in brief (each is detailed on its method):
/// - **Sum** (cumulative types): overlapping sources are merged by priority, interval samples are
///   prorated by time into the buckets they overlap, instantaneous samples count whole in the
///   bucket holding their instant.
/// - **Average, minimum, maximum, latest** (discrete types): all sources count. A sample is
///   *assigned* to every bucket its interval overlaps (positive overlap, buckets half-open); an
///   instantaneous sample to the bucket containing its instant.
/// - Only the parts of samples inside the buckets' overall range count; samples entirely outside
///   it are ignored. Choosing which samples to pass (for example those overlapping `--from`/`--to`)
///   is the caller's business.
/// - A bucket to which no sample contributed has a nil value ("no statistics", as in HealthKit).
public struct StatisticsEngine: Hashable, Sendable {
    /// The default cap on how long an instantaneous reading holds for temporal weighting.
    public static let defaultMaxHoldGap: TimeInterval = 10 * 60

    /// The cap on how long an instantaneous reading holds for temporal weighting, in seconds.
    public var maxHoldGap: TimeInterval

    /// An engine with the given hold cap for temporally weighted averages.
    public init(maxHoldGap: TimeInterval = StatisticsEngine.defaultMaxHoldGap) {
        self.maxHoldGap = maxHoldGap
    }

    /// Computes `operation` for every bucket.
    public func statistics(
        _ operation: StatisticsOperation,
        of samples: [StatisticsSample],
        in buckets: CalendarBuckets
    ) throws(StatisticsError) -> [StatisticsBucket] {
        switch operation {
        case .sum: try sum(of: samples, in: buckets)
        case .average(let weighting): try average(of: samples, weighting: weighting, in: buckets)
        case .minimum: try minimum(of: samples, in: buckets)
        case .maximum: try maximum(of: samples, in: buckets)
        case .latest: try latest(of: samples, in: buckets)
        }
    }

    /// Computes `operation` over the single interval `[from, to)`, e.g. today's steps.
    public func total(
        _ operation: StatisticsOperation,
        of samples: [StatisticsSample],
        from: Date,
        to: Date
    ) throws(StatisticsError) -> StatisticsBucket {
        let buckets = try CalendarBuckets(single: from, to: to)
        let results = try statistics(operation, of: samples, in: buckets)
        return results[0]
    }

    // MARK: - Sum

    /// Sums a cumulative type per bucket, merging overlapping sources by priority.
    ///
    /// The timeline is cut at every start and end of an interval sample. In each slice only the
    /// source with the highest priority (lowest `sourceRank`) that has an interval sample
    /// overlapping the slice contributes; each of its samples adds `value × overlap / duration`.
    /// The same proration splits a sample across bucket edges. Example: A (rank 0) 1000 steps
    /// 08:00–09:00 and B (rank 1) 600 steps 08:30–09:30 sum to 1000 + 300 = 1300.
    ///
    /// An instantaneous sample counts whole in the bucket containing its instant, unless an
    /// interval sample of a higher-priority source covers that instant (start ≤ t < end); it never
    /// displaces anyone's interval samples, and instantaneous samples never displace one another.
    public func sum(of samples: [StatisticsSample], in buckets: CalendarBuckets) throws(StatisticsError) -> [StatisticsBucket] {
        var columns = try SampleColumns(samples)
        columns.sortByStart()
        let bounds = buckets.boundarySeconds
        let bucketCount = buckets.count
        guard bucketCount > 0 else { return [] }
        let rangeStart = bounds[0]
        let rangeEnd = bounds[bucketCount]

        // Interval samples, clipped to the buckets' range.
        var intervalIndices: [Int] = []
        var clippedStarts: [Double] = []
        var clippedEnds: [Double] = []
        var intervalRanks: [Int] = []
        for i in 0..<columns.count where columns.starts[i] < columns.ends[i] {
            let start = max(columns.starts[i], rangeStart)
            let end = min(columns.ends[i], rangeEnd)
            guard start < end else { continue }
            intervalIndices.append(i)
            clippedStarts.append(start)
            clippedEnds.append(end)
            intervalRanks.append(columns.ranks[i])
        }
        let timeline = PriorityTimeline(starts: clippedStarts, ends: clippedEnds, ranks: intervalRanks)

        var totals = BucketTotals(count: bucketCount)
        for (k, i) in intervalIndices.enumerated() {
            let value = columns.values[i]
            let duration = columns.ends[i] - columns.starts[i]
            var lastCountedBucket = -1
            timeline.forEachWinningPart(of: intervalRanks[k], from: clippedStarts[k], to: clippedEnds[k]) { partStart, partEnd in
                guard let bucket = buckets.bucketIndex(seconds: partStart) else { return }
                totals.add(value, duration: duration, from: partStart, to: partEnd, firstBucket: bucket, bounds: bounds,
                           lastCountedBucket: &lastCountedBucket)
            }
        }

        for i in 0..<columns.count where columns.starts[i] == columns.ends[i] {
            let instant = columns.starts[i]
            guard let bucket = buckets.bucketIndex(seconds: instant) else { continue }
            if let winner = timeline.winningRank(at: instant), winner < columns.ranks[i] { continue }
            totals.add(instant: columns.values[i], in: bucket)
        }
        return totals.buckets(buckets)
    }

    // MARK: - Discrete statistics

    /// Averages a discrete type per bucket; all sources count.
    ///
    /// - `arithmetic`: the plain mean of the samples assigned to the bucket (see the type's
    ///   overview for the assignment rule).
    /// - `temporal`: each sample's value holds over the interval given by the temporal-weighting
    ///   rule (`heldEnd(start:end:nextStartFromSameSource:maxHoldGap:)`: an interval sample over
    ///   its interval, a reading until the same source's next sample, at most `maxHoldGap`), and
    ///   the mean is weighted by how much of that interval lies inside the bucket. A bucket thus
    ///   also counts a reading from shortly before it whose hold reaches into it (callers should
    ///   pass readings up to `maxHoldGap` before the first bucket if they want that edge exact).
    ///   When a bucket's total weight is 0 (only possible with a hold cap of 0) it falls back to
    ///   the arithmetic mean of its instantaneous samples.
    /// - `equivalentContinuousLevel`: like `temporal`, but combining sound levels as
    ///   Leq = 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ).
    public func average(
        of samples: [StatisticsSample],
        weighting: AverageWeighting,
        in buckets: CalendarBuckets
    ) throws(StatisticsError) -> [StatisticsBucket] {
        let columns = try SampleColumns(samples)
        switch weighting {
        case .arithmetic:
            return discreteFold(columns, buckets, initial: (sum: 0.0, count: 0)) { state, i in
                state.sum += columns.values[i]
                state.count += 1
            } finish: { state in
                (state.count > 0 ? state.sum / Double(state.count) : nil, nil, state.count)
            }
        case .temporal:
            var columns = columns
            columns.sortByStart()
            return try weightedAverage(columns, buckets, toLinear: { $0 }, fromLinear: { $0 })
        case .equivalentContinuousLevel:
            var columns = columns
            columns.sortByStart()
            return try weightedAverage(
                columns, buckets,
                toLinear: { Foundation.pow(10, $0 / 10) },
                fromLinear: { 10 * Foundation.log10($0) })
        }
    }

    /// The smallest value among the samples assigned to each bucket; all sources count.
    public func minimum(of samples: [StatisticsSample], in buckets: CalendarBuckets) throws(StatisticsError) -> [StatisticsBucket] {
        let columns = try SampleColumns(samples)
        return discreteFold(columns, buckets, initial: (value: Double.infinity, count: 0)) { state, i in
            state.value = min(state.value, columns.values[i])
            state.count += 1
        } finish: { state in
            (state.count > 0 ? state.value : nil, nil, state.count)
        }
    }

    /// The largest value among the samples assigned to each bucket; all sources count.
    public func maximum(of samples: [StatisticsSample], in buckets: CalendarBuckets) throws(StatisticsError) -> [StatisticsBucket] {
        let columns = try SampleColumns(samples)
        return discreteFold(columns, buckets, initial: (value: -Double.infinity, count: 0)) { state, i in
            state.value = max(state.value, columns.values[i])
            state.count += 1
        } finish: { state in
            (state.count > 0 ? state.value : nil, nil, state.count)
        }
    }

    /// The most recent sample assigned to each bucket: the latest end, then the latest start,
    /// then the higher-priority source, then the later one in the input. Reports its value and
    /// its interval. All sources count.
    public func latest(of samples: [StatisticsSample], in buckets: CalendarBuckets) throws(StatisticsError) -> [StatisticsBucket] {
        let columns = try SampleColumns(samples)
        return discreteFold(columns, buckets, initial: (best: -1, count: 0)) { state, i in
            state.count += 1
            let best = state.best
            if best < 0 || columns.isMoreRecent(i, than: best) { state.best = i }
        } finish: { state in
            guard state.best >= 0 else { return (nil, nil, 0) }
            let interval = DateInterval(
                start: Date(timeIntervalSinceReferenceDate: columns.starts[state.best]),
                end: Date(timeIntervalSinceReferenceDate: columns.ends[state.best]))
            return (columns.values[state.best], interval, state.count)
        }
    }

    /// Folds every sample into each bucket it is assigned to (overlap for interval samples, the
    /// instant for instantaneous ones), then turns each bucket's state into a result.
    private func discreteFold<State>(
        _ columns: SampleColumns,
        _ buckets: CalendarBuckets,
        initial: State,
        add: (inout State, Int) -> Void,
        finish: (State) -> (value: Double?, latestInterval: DateInterval?, count: Int)
    ) -> [StatisticsBucket] {
        var states = [State](repeating: initial, count: buckets.count)
        for i in 0..<columns.count {
            for bucket in assignedBuckets(start: columns.starts[i], end: columns.ends[i], in: buckets) {
                add(&states[bucket], i)
            }
        }
        return states.enumerated().map { j, state in
            let (value, interval, count) = finish(state)
            return StatisticsBucket(
                start: buckets.boundaries[j], end: buckets.boundaries[j + 1],
                value: value, latestInterval: interval, sampleCount: count)
        }
    }

    /// The buckets a discrete sample belongs to: those its interval overlaps by a positive amount,
    /// or, for an instantaneous sample, the one containing its instant.
    private func assignedBuckets(start: Double, end: Double, in buckets: CalendarBuckets) -> Range<Int> {
        let bounds = buckets.boundarySeconds
        let bucketCount = buckets.count
        guard bucketCount > 0 else { return 0..<0 }
        if start == end {
            guard let bucket = buckets.bucketIndex(seconds: start) else { return 0..<0 }
            return bucket..<(bucket + 1)
        }
        guard end > bounds[0], start < bounds[bucketCount] else { return 0..<0 }
        let first = max(CalendarBuckets.countOfBoundaries(atOrBefore: start, in: bounds) - 1, 0)
        // The last bucket starting strictly before `end`.
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if bounds[middle] < end { low = middle + 1 } else { high = middle }
        }
        let last = min(low - 1, bucketCount - 1)
        return first..<(last + 1)
    }

    // MARK: - Temporal weighting

    /// **The temporal-weighting rule**, in one place: until when a sample's value is taken to hold
    /// for a temporally weighted average (HealthKit's `discreteTemporallyWeighted`, e.g. heart rate;
    /// Apple does not document its own rule).
    ///
    /// - An interval sample holds over its own interval `[start, end)`.
    /// - An instantaneous reading at `t` holds until the next sample *from the same source* starts
    ///   (the earliest start strictly after `t`), but for at most `maxHoldGap` seconds. So a reading
    ///   followed by a gap longer than the cap, and the source's last reading, hold for exactly
    ///   `maxHoldGap`; sparse readings (all further apart than the cap) therefore weigh equally and
    ///   their weighted mean equals the arithmetic one. Readings at the same instant share the hold.
    /// - With `maxHoldGap == 0` readings carry no weight and the caller falls back to the
    ///   arithmetic mean.
    ///
    /// Returns the end of the held interval, which starts at `start`.
    static func heldEnd(start: Double, end: Double, nextStartFromSameSource: Double?, maxHoldGap: Double) -> Double {
        if end > start { return end }
        guard let next = nextStartFromSameSource else { return start + maxHoldGap }
        return start + min(next - start, maxHoldGap)
    }

    private func weightedAverage(
        _ columns: SampleColumns,
        _ buckets: CalendarBuckets,
        toLinear: (Double) -> Double,
        fromLinear: (Double) -> Double
    ) throws(StatisticsError) -> [StatisticsBucket] {
        guard maxHoldGap.isFinite, maxHoldGap >= 0 else { throw .invalidMaxHoldGap(maxHoldGap) }
        let bucketCount = buckets.count
        guard bucketCount > 0 else { return [] }
        let bounds = buckets.boundarySeconds
        let rangeStart = bounds[0]
        let rangeEnd = bounds[bucketCount]
        let heldEnds = heldEnds(columns)

        var weightedSums = [Double](repeating: 0, count: bucketCount)
        var weights = [Double](repeating: 0, count: bucketCount)
        var unweightedSums = [Double](repeating: 0, count: bucketCount)
        var unweightedCounts = [Int](repeating: 0, count: bucketCount)
        var counts = [Int](repeating: 0, count: bucketCount)
        for i in 0..<columns.count {
            let linear = toLinear(columns.values[i])
            let heldStart = columns.starts[i]
            let heldEnd = heldEnds[i]
            if heldEnd == heldStart {
                guard let bucket = buckets.bucketIndex(seconds: heldStart) else { continue }
                unweightedSums[bucket] += linear
                unweightedCounts[bucket] += 1
                counts[bucket] += 1
                continue
            }
            var cursor = max(heldStart, rangeStart)
            let end = min(heldEnd, rangeEnd)
            guard cursor < end, var bucket = buckets.bucketIndex(seconds: cursor) else { continue }
            while cursor < end, bucket < bucketCount {
                let pieceEnd = min(end, bounds[bucket + 1])
                let weight = pieceEnd - cursor
                weightedSums[bucket] += linear * weight
                weights[bucket] += weight
                counts[bucket] += 1
                cursor = pieceEnd
                bucket += 1
            }
        }
        return (0..<bucketCount).map { j in
            let value: Double?
            if weights[j] > 0 {
                value = fromLinear(weightedSums[j] / weights[j])
            } else if unweightedCounts[j] > 0 {
                value = fromLinear(unweightedSums[j] / Double(unweightedCounts[j]))
            } else {
                value = nil
            }
            return StatisticsBucket(
                start: buckets.boundaries[j], end: buckets.boundaries[j + 1], value: value, sampleCount: counts[j])
        }
    }

    /// The end of each sample's held interval under ``heldEnd(start:end:nextStartFromSameSource:maxHoldGap:)``.
    private func heldEnds(_ columns: SampleColumns) -> [Double] {
        var result = columns.ends
        // Samples per source, in input order; usually a single source and already sorted.
        var groups: [Int: [Int]] = [:]
        if let firstRank = columns.ranks.first, columns.ranks.allSatisfy({ $0 == firstRank }) {
            groups[firstRank] = Array(0..<columns.count)
        } else {
            for i in 0..<columns.count { groups[columns.ranks[i], default: []].append(i) }
        }
        let starts = columns.starts
        for var group in groups.values {
            let isSorted = zip(group, group.dropFirst()).allSatisfy { starts[$0] <= starts[$1] }
            if !isSorted { group.sort { starts[$0] < starts[$1] } }  // stable
            // Walk backwards, remembering the earliest start strictly after the current one.
            var nextDistinctStart: Double? = nil
            var position = group.count - 1
            while position >= 0 {
                let start = starts[group[position]]
                var runStart = position
                while runStart > 0, starts[group[runStart - 1]] == start { runStart -= 1 }
                for member in runStart...position {
                    let i = group[member]
                    result[i] = Self.heldEnd(
                        start: start, end: columns.ends[i],
                        nextStartFromSameSource: nextDistinctStart, maxHoldGap: maxHoldGap)
                }
                nextDistinctStart = start
                position = runStart - 1
            }
        }
        return result
    }
}

/// Validated samples as parallel arrays of seconds, values and ranks.
private struct SampleColumns {
    var starts: [Double]
    var ends: [Double]
    var values: [Double]
    var ranks: [Int]
    var count: Int { starts.count }

    init(_ samples: [StatisticsSample]) throws(StatisticsError) {
        starts = []
        ends = []
        values = []
        ranks = []
        starts.reserveCapacity(samples.count)
        ends.reserveCapacity(samples.count)
        values.reserveCapacity(samples.count)
        ranks.reserveCapacity(samples.count)
        for (index, sample) in samples.enumerated() {
            let start = sample.start.timeIntervalSinceReferenceDate
            let end = sample.end.timeIntervalSinceReferenceDate
            guard start.isFinite, end.isFinite, start <= end
            else { throw .invalidSampleInterval(index: index, start: sample.start, end: sample.end) }
            guard sample.value.isFinite else { throw .nonFiniteSampleValue(index: index, value: sample.value) }
            starts.append(start)
            ends.append(end)
            values.append(sample.value)
            ranks.append(sample.sourceRank)
        }
    }

    /// Reorders the samples by start time (stable), unless they already are. Sums and temporal
    /// weights do not depend on input order, and sorted columns keep their sweeps cache-friendly.
    mutating func sortByStart() {
        var isSorted = true
        for i in starts.indices.dropFirst() where starts[i - 1] > starts[i] {
            isSorted = false
            break
        }
        guard !isSorted else { return }
        struct Key {
            var start: Double
            var index: Int
        }
        var keys = starts.enumerated().map { Key(start: $0.element, index: $0.offset) }
        keys.sort { $0.start < $1.start }  // Swift's sort is stable
        starts = keys.map(\.start)
        ends = keys.map { ends[$0.index] }
        values = keys.map { values[$0.index] }
        ranks = keys.map { ranks[$0.index] }
    }

    /// Whether sample `i` is more recent than sample `k`: later end, then later start, then
    /// higher priority, then later in the input.
    func isMoreRecent(_ i: Int, than k: Int) -> Bool {
        if ends[i] != ends[k] { return ends[i] > ends[k] }
        if starts[i] != starts[k] { return starts[i] > starts[k] }
        if ranks[i] != ranks[k] { return ranks[i] < ranks[k] }
        return i > k
    }
}
