import Foundation

/// Which source wins where, for the priority merge of a cumulative type.
///
/// The timeline is cut at every start and end of an interval sample; in each elementary slice the
/// winner is the highest-priority source (lowest rank) that has an interval sample overlapping the
/// slice. Consecutive slices with the same winner are merged into one segment. Instantaneous
/// samples take no part in building the timeline (they cover no time).
struct PriorityTimeline {
    /// Segment starts, strictly increasing; segments are disjoint and half-open.
    private(set) var segmentStarts: [Double] = []
    /// Segment ends.
    private(set) var segmentEnds: [Double] = []
    /// The winning rank of each segment.
    private(set) var segmentRanks: [Int] = []
    /// Segment indices per winning rank, in time order.
    private var segmentsByRank: [Int: [Int]] = [:]

    /// Builds the timeline from interval samples given as parallel arrays (already clipped to the
    /// range of interest; every `starts[i] < ends[i]`).
    init(starts: [Double], ends: [Double], ranks: [Int]) {
        let count = starts.count
        guard count > 0 else { return }
        let denseRanks = DenseRanks(ranks)
        let rankCount = denseRanks.distinct.count
        let startOrder = Self.sortedOrder(of: starts)
        if rankCount == 1 {
            // One source: it wins wherever it has data; the segments are the union of its samples.
            for i in startOrder { appendSlice(start: starts[i], end: ends[i], rank: ranks[0], joiningOverlaps: true) }
            segmentsByRank[ranks[0]] = Array(segmentStarts.indices)
            return
        }

        // Sweep over starts and ends, each in time order; all events at one instant are applied
        // before the next slice begins, so their relative order does not matter.
        let endOrder = Self.sortedOrder(of: ends)
        var activeCount = [Int](repeating: 0, count: rankCount)
        var winner = rankCount  // == no source active
        var nextStart = 0
        var nextEnd = 0
        var sliceStart = starts[startOrder[0]]
        while nextEnd < count {
            let earliestEnd = ends[endOrder[nextEnd]]
            let time = nextStart < count ? min(starts[startOrder[nextStart]], earliestEnd) : earliestEnd
            if winner < rankCount, sliceStart < time {
                appendSlice(start: sliceStart, end: time, rank: denseRanks.distinct[winner], joiningOverlaps: false)
            }
            while nextStart < count, starts[startOrder[nextStart]] == time {
                let dense = denseRanks.index(of: ranks[startOrder[nextStart]])
                activeCount[dense] += 1
                if dense < winner { winner = dense }
                nextStart += 1
            }
            while nextEnd < count, ends[endOrder[nextEnd]] == time {
                activeCount[denseRanks.index(of: ranks[endOrder[nextEnd]])] -= 1
                nextEnd += 1
            }
            while winner < rankCount, activeCount[winner] == 0 { winner += 1 }
            sliceStart = time
        }
        for (index, rank) in segmentRanks.enumerated() { segmentsByRank[rank, default: []].append(index) }
    }

    /// The indices of `times` in ascending order of their values; no sort when already sorted.
    private static func sortedOrder(of times: [Double]) -> [Int] {
        var order = Array(times.indices)
        var isSorted = true
        for i in times.indices.dropFirst() where times[i - 1] > times[i] {
            isSorted = false
            break
        }
        if !isSorted { order.sort { times[$0] < times[$1] } }
        return order
    }

    /// Appends a slice, extending the last segment when it has the same rank and touches the
    /// slice (or, with `joiningOverlaps`, reaches into it).
    private mutating func appendSlice(start: Double, end: Double, rank: Int, joiningOverlaps: Bool) {
        if let lastEnd = segmentEnds.last, segmentRanks[segmentRanks.count - 1] == rank,
           lastEnd == start || (joiningOverlaps && lastEnd >= start) {
            segmentEnds[segmentEnds.count - 1] = max(lastEnd, end)
        } else {
            segmentStarts.append(start)
            segmentEnds.append(end)
            segmentRanks.append(rank)
        }
    }

    /// The winning rank at instant `t` (segments are half-open), or nil where no interval
    /// sample covers `t`.
    func winningRank(at t: Double) -> Int? {
        let index = CalendarBuckets.countOfBoundaries(atOrBefore: t, in: segmentStarts) - 1
        guard index >= 0, t < segmentEnds[index] else { return nil }
        return segmentRanks[index]
    }

    /// Calls `body` with each part of `[start, end)` where `rank` wins, in time order.
    func forEachWinningPart(of rank: Int, from start: Double, to end: Double, _ body: (Double, Double) -> Void) {
        guard let indices = segmentsByRank[rank] else { return }
        // First segment of this rank whose end lies after `start`.
        var low = 0
        var high = indices.count
        while low < high {
            let middle = (low + high) / 2
            if segmentEnds[indices[middle]] <= start { low = middle + 1 } else { high = middle }
        }
        var position = low
        while position < indices.count {
            let segment = indices[position]
            let partStart = max(start, segmentStarts[segment])
            guard partStart < end else { break }
            let partEnd = min(end, segmentEnds[segment])
            if partStart < partEnd { body(partStart, partEnd) }
            position += 1
        }
    }
}

/// Source ranks mapped to dense indices 0..<k in priority order.
struct DenseRanks {
    /// The distinct ranks, ascending (highest priority first).
    let distinct: [Int]
    private let lowest: Int
    /// Dense index by `rank - lowest`, when the ranks span a small range.
    private let table: [Int]
    /// Dense index by rank otherwise.
    private let dictionary: [Int: Int]

    init(_ ranks: [Int]) {
        var lowest = Int.max
        var highest = Int.min
        for rank in ranks {
            lowest = min(lowest, rank)
            highest = max(highest, rank)
        }
        self.lowest = lowest
        // `highest - lowest` overflows for extreme ranks; those use the dictionary.
        let (span, overflow) = highest.subtractingReportingOverflow(lowest)
        if !ranks.isEmpty, !overflow, span < 4096 {
            var table = [Int](repeating: -1, count: span + 1)
            for rank in ranks { table[rank - lowest] = 0 }
            var distinct: [Int] = []
            for offset in 0...span where table[offset] == 0 {
                table[offset] = distinct.count
                distinct.append(lowest + offset)
            }
            self.distinct = distinct
            self.table = table
            self.dictionary = [:]
        } else {
            let distinct = Array(Set(ranks)).sorted()
            var dictionary: [Int: Int] = [:]
            for (index, rank) in distinct.enumerated() { dictionary[rank] = index }
            self.distinct = distinct
            self.table = []
            self.dictionary = dictionary
        }
    }

    /// The dense index of a rank that was among those given at initialisation.
    func index(of rank: Int) -> Int {
        table.isEmpty ? dictionary[rank] ?? 0 : table[rank - lowest]
    }
}
