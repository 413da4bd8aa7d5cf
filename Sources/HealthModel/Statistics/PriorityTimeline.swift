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

    private struct Event {
        var time: Double
        var denseRank: Int32
        var delta: Int32
    }

    /// Builds the timeline from interval samples given as parallel arrays (already clipped to the
    /// range of interest; every `starts[i] < ends[i]`).
    init(starts: [Double], ends: [Double], ranks: [Int]) {
        let count = starts.count
        guard count > 0 else { return }
        // Dense rank indices keep the winner scan short when ranks are sparse (0 and 1000).
        let distinctRanks = Array(Set(ranks)).sorted()
        var denseIndexOf: [Int: Int32] = [:]
        for (index, rank) in distinctRanks.enumerated() { denseIndexOf[rank] = Int32(index) }

        var events: [Event] = []
        events.reserveCapacity(2 * count)
        for i in 0..<count {
            let dense = denseIndexOf[ranks[i]] ?? 0
            events.append(Event(time: starts[i], denseRank: dense, delta: 1))
            events.append(Event(time: ends[i], denseRank: dense, delta: -1))
        }
        events.sort { $0.time < $1.time }

        var activeCount = [Int](repeating: 0, count: distinctRanks.count)
        var winner = distinctRanks.count  // == none active
        var eventIndex = 0
        var sliceStart = events[0].time
        while eventIndex < events.count {
            let time = events[eventIndex].time
            if winner < distinctRanks.count, sliceStart < time {
                appendSlice(start: sliceStart, end: time, rank: distinctRanks[winner])
            }
            // Apply every event at this instant before the next slice begins.
            while eventIndex < events.count, events[eventIndex].time == time {
                let event = events[eventIndex]
                let dense = Int(event.denseRank)
                activeCount[dense] += Int(event.delta)
                if event.delta > 0, dense < winner { winner = dense }
                eventIndex += 1
            }
            while winner < distinctRanks.count, activeCount[winner] == 0 { winner += 1 }
            sliceStart = time
        }
        for (index, rank) in segmentRanks.enumerated() { segmentsByRank[rank, default: []].append(index) }
    }

    private mutating func appendSlice(start: Double, end: Double, rank: Int) {
        if let lastEnd = segmentEnds.last, lastEnd == start, segmentRanks[segmentRanks.count - 1] == rank {
            segmentEnds[segmentEnds.count - 1] = end
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
