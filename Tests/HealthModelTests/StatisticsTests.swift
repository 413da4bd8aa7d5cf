import Foundation
import HealthModel
import Testing

/// Parses an ISO 8601 timestamp with an explicit offset, e.g. `2026-03-29T00:00:00+01:00`.
private func instant(_ text: String) throws -> Date {
    try Date(text, strategy: .iso8601)
}

private func zone(_ identifier: String) throws -> TimeZone {
    try #require(TimeZone(identifier: identifier))
}

/// A sample between two ISO 8601 timestamps.
private func sample(_ start: String, _ end: String, _ value: Double, rank: Int = 0) throws -> StatisticsSample {
    StatisticsSample(start: try instant(start), end: try instant(end), value: value, sourceRank: rank)
}

/// An instantaneous reading at an ISO 8601 timestamp.
private func reading(_ at: String, _ value: Double, rank: Int = 0) throws -> StatisticsSample {
    StatisticsSample(at: try instant(at), value: value, sourceRank: rank)
}

private func utcHours(_ from: String, _ to: String) throws -> CalendarBuckets {
    try CalendarBuckets(from: try instant(from), to: try instant(to), granularity: .hour, timeZone: try zone("UTC"))
}

/// Whether two optional values agree to within floating-point noise.
private func close(_ actual: Double?, _ expected: Double?, tolerance: Double = 1e-9) -> Bool {
    switch (actual, expected) {
    case (nil, nil): true
    case let (a?, e?): abs(a - e) <= tolerance * max(1, abs(e))
    default: false
    }
}

private func values(_ buckets: [StatisticsBucket]) -> [Double?] { buckets.map(\.value) }

private func closeAll(_ actual: [Double?], _ expected: [Double?]) -> Bool {
    actual.count == expected.count && zip(actual, expected).allSatisfy { close($0, $1) }
}

/// One sample per minute worth `value`, from `from` to `to`.
private func minuteStream(from: Date, to: Date, value: Double = 1, rank: Int = 0) -> [StatisticsSample] {
    var samples: [StatisticsSample] = []
    var start = from
    while start < to {
        let end = start.addingTimeInterval(60)
        samples.append(StatisticsSample(start: start, end: end, value: value, sourceRank: rank))
        start = end
    }
    return samples
}

struct StatisticsTests {
    let engine = StatisticsEngine()

    // MARK: Sum and the priority merge

    @Test func higherPrioritySourceWinsWhereSourcesOverlap() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 0),
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:30:00Z", 600, rank: 1),
        ]
        let total = try engine.total(
            .sum, of: samples, from: try instant("2026-05-04T00:00:00Z"), to: try instant("2026-05-05T00:00:00Z"))
        #expect(total.value == 1300)
        #expect(total.sampleCount == 2)
    }

    @Test func reversedPriorityGives1100() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 1),
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:30:00Z", 600, rank: 0),
        ]
        let total = try engine.total(
            .sum, of: samples, from: try instant("2026-05-04T00:00:00Z"), to: try instant("2026-05-05T00:00:00Z"))
        // A keeps 08:00–08:30 (500), B counts whole (600).
        #expect(total.value == 1100)
    }

    @Test func threeSourcesPerHour() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 600, rank: 0),   // 10/min
            try sample("2026-05-04T07:30:00Z", "2026-05-04T08:30:00Z", 300, rank: 1),   // 5/min
            try sample("2026-05-04T07:00:00Z", "2026-05-04T10:00:00Z", 1800, rank: 2),  // 10/min
        ]
        let buckets = try utcHours("2026-05-04T06:00:00Z", "2026-05-04T11:00:00Z")
        let result = try engine.sum(of: samples, in: buckets)
        // 07:00–07:30 C 300, 07:30–08:00 B 150, 08:00–09:00 A 600, 09:00–10:00 C 600.
        #expect(values(result) == [nil, 450, 600, 600, nil])
        #expect(result.map(\.sampleCount) == [0, 2, 1, 1, 0])
        let total = try engine.total(
            .sum, of: samples, from: try instant("2026-05-04T00:00:00Z"), to: try instant("2026-05-05T00:00:00Z"))
        #expect(total.value == 1650)
    }

    @Test func sameSourceOverlapsAreAllCounted() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 100, rank: 0),
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:00:00Z", 50, rank: 0),
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 400, rank: 1),
        ]
        let total = try engine.total(
            .sum, of: samples, from: try instant("2026-05-04T08:00:00Z"), to: try instant("2026-05-04T09:00:00Z"))
        #expect(total.value == 150)
        #expect(total.sampleCount == 2)
    }

    @Test func sampleSpanningMidnightIsSplitByTime() throws {
        let berlin = try zone("Europe/Berlin")
        let samples = [try sample("2026-05-04T23:00:00+02:00", "2026-05-05T01:00:00+02:00", 120)]
        let buckets = try CalendarBuckets(
            from: try instant("2026-05-04T00:00:00+02:00"), to: try instant("2026-05-06T00:00:00+02:00"),
            granularity: .day, timeZone: berlin)
        let result = try engine.sum(of: samples, in: buckets)
        #expect(values(result) == [60, 60])
        #expect(result.map(\.sampleCount) == [1, 1])
    }

    @Test func sampleSpanningThreeHoursIsProrated() throws {
        let samples = [try sample("2026-05-04T08:30:00Z", "2026-05-04T10:30:00Z", 300)]
        let result = try engine.sum(of: samples, in: try utcHours("2026-05-04T08:00:00Z", "2026-05-04T11:00:00Z"))
        #expect(values(result) == [75, 150, 75])
    }

    @Test func onlyThePartInsideTheBucketsCounts() throws {
        let samples = [try sample("2026-05-04T07:00:00Z", "2026-05-04T09:00:00Z", 100)]
        let result = try engine.sum(of: samples, in: try utcHours("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z"))
        #expect(values(result) == [50])
    }

    @Test func steadyStreamSumsTo1380And1500OnDSTDays() throws {
        let berlin = try zone("Europe/Berlin")
        for (day, next, expected) in [
            ("2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00", 1380.0),
            ("2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00", 1500.0),
        ] {
            let start = try instant(day)
            let end = try instant(next)
            // A day before and after, so the neighbours show 1440.
            let samples = minuteStream(from: start.addingTimeInterval(-86400), to: end.addingTimeInterval(86400))
            let buckets = try CalendarBuckets(covering: samples, granularity: .day, timeZone: berlin)
            #expect(buckets.count == 3)
            #expect(buckets[1].duration == expected * 60)
            let result = try engine.sum(of: samples, in: buckets)
            #expect(values(result) == [1440, expected, 1440])
        }
    }

    @Test func aYearOfMinutesFromTwoSourcesByDay() throws {
        let berlin = try zone("Europe/Berlin")
        let start = try instant("2026-01-01T00:00:00+01:00")
        let end = try instant("2027-01-01T00:00:00+01:00")
        // The phone (rank 1) counted 2 per minute all year; the watch (rank 0) 1 per minute.
        let samples = minuteStream(from: start, to: end, value: 1, rank: 0)
            + minuteStream(from: start, to: end, value: 2, rank: 1)
        #expect(samples.count == 2 * 525_600)
        let buckets = try CalendarBuckets(from: start, to: end, granularity: .day, timeZone: berlin)
        let result = try engine.sum(of: samples, in: buckets)
        #expect(result.count == 365)
        let dailyTotals = values(result).compactMap { $0 }
        #expect(dailyTotals.reduce(0, +) == 525_600)
        #expect(dailyTotals.filter { $0 == 1440 }.count == 363)
        #expect(dailyTotals.contains(1380) && dailyTotals.contains(1500))
        #expect(result.allSatisfy { $0.sampleCount == Int($0.duration / 60) })
    }

    @Test func pointSamplesInSums() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 0),
            try reading("2026-05-04T08:30:00Z", 7, rank: 1),   // covered by rank 0: dropped
            try reading("2026-05-04T09:00:00Z", 5, rank: 1),   // at rank 0's exclusive end: counts
            try sample("2026-05-04T10:00:00Z", "2026-05-04T11:00:00Z", 300, rank: 1),
            try reading("2026-05-04T10:15:00Z", 20, rank: 0),  // higher priority: counts, displaces nothing
            try reading("2026-05-04T10:15:00Z", 3, rank: 2),   // covered by rank 1: dropped
        ]
        let result = try engine.sum(of: samples, in: try utcHours("2026-05-04T08:00:00Z", "2026-05-04T11:00:00Z"))
        #expect(values(result) == [1000, 5, 320])
        #expect(result.map(\.sampleCount) == [1, 1, 2])
    }

    @Test func emptyBucketsHaveNoValueAndZeroIsAValue() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T08:10:00Z", 10),
            try sample("2026-05-04T10:00:00Z", "2026-05-04T10:10:00Z", 0),
        ]
        let result = try engine.sum(of: samples, in: try utcHours("2026-05-04T08:00:00Z", "2026-05-04T11:00:00Z"))
        #expect(values(result) == [10, nil, 0])
        #expect(result.map(\.sampleCount) == [1, 0, 1])
        #expect(try engine.sum(of: [], in: try utcHours("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z")).first?.value == nil)
    }

    @Test func newYorkMonthlySums() throws {
        let newYork = try zone("America/New_York")
        // One sample per day at noon, 10 steps each, across 2026.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = newYork
        var samples: [StatisticsSample] = []
        var day = try instant("2026-01-01T12:00:00-05:00")
        while day < (try instant("2027-01-01T00:00:00-05:00")) {
            samples.append(StatisticsSample(start: day, end: day.addingTimeInterval(600), value: 10))
            day = try #require(calendar.date(byAdding: .day, value: 1, to: day))
        }
        let buckets = try CalendarBuckets(covering: samples, granularity: .month, timeZone: newYork)
        let result = try engine.sum(of: samples, in: buckets)
        #expect(values(result) == [310, 280, 310, 300, 310, 300, 310, 310, 300, 310, 300, 310])
    }

    // MARK: Averages

    @Test func temporalAverageWeighsByHoldTime() throws {
        // 60 bpm held 9 minutes, then 120 bpm held 1 minute (until the next reading at 08:10).
        let samples = [
            try reading("2026-05-04T08:00:00Z", 60),
            try reading("2026-05-04T08:09:00Z", 120),
            try reading("2026-05-04T08:10:00Z", 60),
        ]
        let from = try instant("2026-05-04T08:00:00Z")
        let to = try instant("2026-05-04T08:10:00Z")
        let weighted = try engine.total(.average(.temporal), of: samples, from: from, to: to)
        let arithmetic = try engine.total(.average(.arithmetic), of: samples, from: from, to: to)
        #expect(close(weighted.value, 66))
        #expect(arithmetic.value == 90)
        #expect(weighted.sampleCount == 2)
        #expect(arithmetic.sampleCount == 2)
    }

    @Test func holdIsCappedAtTheMaximumGap() throws {
        let samples = [
            try reading("2026-05-04T08:00:00Z", 60),   // holds 5 min, until the next reading
            try reading("2026-05-04T08:05:00Z", 80),   // gap of 35 min: holds the 10-min cap
            try reading("2026-05-04T08:40:00Z", 120),  // last reading: holds the 10-min cap
        ]
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z")
        let capped = try engine.average(of: samples, weighting: .temporal, in: buckets)
        let cappedExpected: Double = (60 * 5 + 80 * 10 + 120 * 10) / 25
        #expect(close(capped[0].value, cappedExpected))
        // With a one-hour cap the 80 holds 35 minutes and the 120 holds to the end of the bucket.
        let long = try StatisticsEngine(maxHoldGap: 3600).average(of: samples, weighting: .temporal, in: buckets)
        let longExpected: Double = (60 * 5 + 80 * 35 + 120 * 20) / 60
        #expect(close(long[0].value, longExpected))
        // With no hold at all the weights vanish and the arithmetic mean is used.
        let none = try StatisticsEngine(maxHoldGap: 0).average(of: samples, weighting: .temporal, in: buckets)
        let arithmeticExpected: Double = (60 + 80 + 120) / 3
        #expect(none[0].value == arithmeticExpected)
    }

    @Test func holdReachesIntoTheNextBucket() throws {
        let samples = [try reading("2026-05-04T08:55:00Z", 100)]
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T11:00:00Z")
        let result = try engine.average(of: samples, weighting: .temporal, in: buckets)
        #expect(values(result) == [100, 100, nil])
        #expect(result.map(\.sampleCount) == [1, 1, 0])
        let arithmetic = try engine.average(of: samples, weighting: .arithmetic, in: buckets)
        #expect(values(arithmetic) == [100, nil, nil])
    }

    @Test func eachSourceHoldsItsOwnReadings() throws {
        // Chained per source: rank 0's 60 holds the full cap, not just until rank 1's reading.
        let samples = [
            try reading("2026-05-04T08:00:00Z", 60, rank: 0),
            try reading("2026-05-04T08:05:00Z", 90, rank: 1),
        ]
        let total = try engine.total(
            .average(.temporal), of: samples,
            from: try instant("2026-05-04T08:00:00Z"), to: try instant("2026-05-04T09:00:00Z"))
        #expect(close(total.value, 75))
    }

    @Test func intervalSamplesHoldOverTheirInterval() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T08:45:00Z", 60),
            try sample("2026-05-04T08:45:00Z", "2026-05-04T09:00:00Z", 120),
        ]
        let from = try instant("2026-05-04T08:00:00Z")
        let to = try instant("2026-05-04T09:00:00Z")
        #expect(close(try engine.total(.average(.temporal), of: samples, from: from, to: to).value, 75))
        #expect(try engine.total(.average(.arithmetic), of: samples, from: from, to: to).value == 90)
    }

    @Test func equivalentContinuousLevelCombinesEnergy() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T08:30:00Z", 80),
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:00:00Z", 90),
        ]
        let total = try engine.total(
            .average(.equivalentContinuousLevel), of: samples,
            from: try instant("2026-05-04T08:00:00Z"), to: try instant("2026-05-04T09:00:00Z"))
        // 10·log10((10^8 + 10^9) / 2) = 10·log10(5.5e8)
        #expect(close(total.value, 87.40362689494244))
    }

    @Test func discreteSampleIsAssignedToEveryBucketItOverlaps() throws {
        let samples = [
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:30:00Z", 50),
            try reading("2026-05-04T08:10:00Z", 70),
            try reading("2026-05-04T09:00:00Z", 30),
        ]
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T10:00:00Z")
        #expect(values(try engine.average(of: samples, weighting: .arithmetic, in: buckets)) == [60, 40])
        #expect(values(try engine.maximum(of: samples, in: buckets)) == [70, 50])
        #expect(values(try engine.minimum(of: samples, in: buckets)) == [50, 30])
        #expect(try engine.minimum(of: samples, in: buckets).map(\.sampleCount) == [2, 2])
    }

    // MARK: Min, max, latest

    @Test func minimumMaximumAndLatestCountAllSources() throws {
        let samples = [
            try reading("2026-05-04T08:10:00Z", 70, rank: 0),
            try reading("2026-05-04T08:40:00Z", 90, rank: 0),
            try reading("2026-05-04T08:20:00Z", 50, rank: 3),
        ]
        let from = try instant("2026-05-04T08:00:00Z")
        let to = try instant("2026-05-04T09:00:00Z")
        #expect(try engine.total(.minimum, of: samples, from: from, to: to).value == 50)
        #expect(try engine.total(.maximum, of: samples, from: from, to: to).value == 90)
        let latest = try engine.total(.latest, of: samples, from: from, to: to)
        #expect(latest.value == 90)
        let at = try instant("2026-05-04T08:40:00Z")
        #expect(latest.latestInterval == DateInterval(start: at, end: at))
        #expect(latest.sampleCount == 3)
    }

    @Test func latestPrefersLaterEndThenLaterStart() throws {
        let samples = [
            try sample("2026-05-04T08:30:00Z", "2026-05-04T08:50:00Z", 80),
            try reading("2026-05-04T08:50:00Z", 85),
            try sample("2026-05-04T08:00:00Z", "2026-05-04T08:45:00Z", 99),
        ]
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T10:00:00Z")
        let result = try engine.latest(of: samples, in: buckets)
        #expect(result[0].value == 85)
        let at = try instant("2026-05-04T08:50:00Z")
        #expect(result[0].latestInterval == DateInterval(start: at, end: at))
        #expect(result[1].value == nil)
        #expect(result[1].latestInterval == nil)
    }

    @Test func operationDispatchMatchesTheMethods() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 0),
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:30:00Z", 600, rank: 1),
        ]
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T10:00:00Z")
        #expect(try engine.statistics(.sum, of: samples, in: buckets) == (try engine.sum(of: samples, in: buckets)))
        #expect(values(try engine.statistics(.sum, of: samples, in: buckets)) == [1000, 300])
        #expect(values(try engine.statistics(.maximum, of: samples, in: buckets)) == [1000, 600])
    }

    // MARK: Cross-checks against a direct reading of the rules

    @Test(arguments: 1...8, [1, 4]) func prioritySumMatchesElementarySlices(seed: UInt64, sources: Int) throws {
        var random = SplitMix(seed: seed)
        let origin = try instant("2026-05-04T00:00:00Z")
        let samples = randomSamples(&random, origin: origin, count: 150, sources: sources)
        let buckets = try utcHours("2026-05-04T01:00:00Z", "2026-05-04T07:00:00Z")
        let result = try engine.sum(of: samples, in: buckets)
        let expected = bruteForceSums(samples, buckets)
        #expect(closeAll(values(result), expected.values))
        #expect(result.map(\.sampleCount) == expected.counts)
    }

    @Test(arguments: 1...8) func temporalAverageMatchesHoldRule(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let origin = try instant("2026-05-04T00:00:00Z")
        let samples = randomSamples(&random, origin: origin, count: 150, sources: 4)
        let buckets = try utcHours("2026-05-04T01:00:00Z", "2026-05-04T07:00:00Z")
        let result = try engine.average(of: samples, weighting: .temporal, in: buckets)
        #expect(closeAll(values(result), bruteForceTemporalAverages(samples, buckets, maxHoldGap: 600)))
    }

    // MARK: Errors

    @Test func rejectsBadSamples() throws {
        let early = try instant("2026-05-04T08:00:00Z")
        let late = try instant("2026-05-04T09:00:00Z")
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T10:00:00Z")
        let backwards = [StatisticsSample(at: early, value: 1), StatisticsSample(start: late, end: early, value: 1)]
        #expect(throws: StatisticsError.invalidSampleInterval(index: 1, start: late, end: early)) {
            try engine.sum(of: backwards, in: buckets)
        }
        #expect(throws: StatisticsError.invalidSampleInterval(index: 1, start: late, end: early)) {
            try streamed(backwards, buckets)
        }
        #expect(throws: StatisticsError.nonFiniteSampleValue(index: 0, value: .infinity)) {
            try streamed([StatisticsSample(at: early, value: .infinity)], buckets)
        }
        #expect(throws: StatisticsError.nonFiniteSampleValue(index: 0, value: .nan)) {
            try engine.maximum(of: [StatisticsSample(at: early, value: .nan)], in: buckets)
        }
        #expect(throws: StatisticsError.invalidMaxHoldGap(-1)) {
            try StatisticsEngine(maxHoldGap: -1).average(
                of: [StatisticsSample(at: early, value: 60)], weighting: .temporal, in: buckets)
        }
        #expect(throws: StatisticsError.invalidRange(from: late, to: early)) {
            try engine.total(.sum, of: [], from: late, to: early)
        }
    }
}

/// A small deterministic generator for the cross-checks.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// Samples on a whole-minute grid over eight hours (so boundaries often coincide), from
/// `sources` sources, about a quarter of them instantaneous.
private func randomSamples(_ random: inout SplitMix, origin: Date, count: Int, sources: Int) -> [StatisticsSample] {
    (0..<count).map { _ in
        let startMinute = random.below(8 * 60)
        let length = random.below(4) == 0 ? 0 : 1 + random.below(90)
        let start = origin.addingTimeInterval(Double(startMinute * 60))
        return StatisticsSample(
            start: start, end: start.addingTimeInterval(Double(length * 60)),
            value: Double(random.below(1000)), sourceRank: random.below(sources))
    }
}

/// The priority-merged sum, read straight from the rule: cut at every edge, let the best source
/// with an interval sample overlapping each slice contribute, prorate by time.
private func bruteForceSums(_ samples: [StatisticsSample], _ buckets: CalendarBuckets) -> (values: [Double?], counts: [Int]) {
    var edges = Set(buckets.boundaries)
    for sample in samples { edges.insert(sample.start); edges.insert(sample.end) }
    let cuts = edges.sorted()
    var totals = [Double](repeating: 0, count: buckets.count)
    var contributors = [Set<Int>](repeating: [], count: buckets.count)
    let intervals = samples.indices.filter { !samples[$0].isInstantaneous }
    for (a, b) in zip(cuts, cuts.dropFirst()) {
        guard let bucket = buckets.bucketIndex(for: a) else { continue }
        let active = intervals.filter { samples[$0].start < b && samples[$0].end > a }
        guard let best = active.map({ samples[$0].sourceRank }).min() else { continue }
        for i in active where samples[i].sourceRank == best {
            totals[bucket] += samples[i].value * b.timeIntervalSince(a) / samples[i].end.timeIntervalSince(samples[i].start)
            contributors[bucket].insert(i)
        }
    }
    for i in samples.indices where samples[i].isInstantaneous {
        let t = samples[i].start
        guard let bucket = buckets.bucketIndex(for: t) else { continue }
        let shadowed = intervals.contains {
            samples[$0].sourceRank < samples[i].sourceRank && samples[$0].start <= t && t < samples[$0].end
        }
        if !shadowed {
            totals[bucket] += samples[i].value
            contributors[bucket].insert(i)
        }
    }
    return (
        (0..<buckets.count).map { contributors[$0].isEmpty ? nil : totals[$0] },
        contributors.map(\.count)
    )
}

/// The temporally weighted average, read straight from the hold rule.
private func bruteForceTemporalAverages(_ samples: [StatisticsSample], _ buckets: CalendarBuckets, maxHoldGap: Double) -> [Double?] {
    var weighted = [Double](repeating: 0, count: buckets.count)
    var weights = [Double](repeating: 0, count: buckets.count)
    for sample in samples {
        var heldEnd = sample.end
        if sample.isInstantaneous {
            let next = samples.filter { $0.sourceRank == sample.sourceRank && $0.start > sample.start }.map(\.start).min()
            let gap = next.map { $0.timeIntervalSince(sample.start) } ?? .infinity
            heldEnd = sample.start.addingTimeInterval(min(gap, maxHoldGap))
        }
        for (index, bucket) in buckets.intervals.enumerated() {
            let overlap = min(heldEnd, bucket.end).timeIntervalSince(max(sample.start, bucket.start))
            if overlap > 0 {
                weighted[index] += sample.value * overlap
                weights[index] += overlap
            }
        }
    }
    return (0..<buckets.count).map { weights[$0] > 0 ? weighted[$0] / weights[$0] : nil }
}

/// `samples` fed in order to a `StreamingSum`; nil when it refused one.
private func streamed(_ samples: [StatisticsSample], _ buckets: CalendarBuckets) throws -> [StatisticsBucket]? {
    var sum = StreamingSum(buckets: buckets)
    for sample in samples {
        guard try sum.add(start: sample.start, end: sample.end, value: sample.value, sourceRank: sample.sourceRank)
        else { return nil }
    }
    return sum.result()
}

/// `StreamingSum` (issue 31): the engine's sum bit for bit wherever the priority merge drops
/// nothing, and a refusal wherever it would drop something.
struct StreamingSumTests {
    let engine = StatisticsEngine()

    /// The same buckets, counts and values to the last bit.
    private func identical(_ a: [StatisticsBucket], _ b: [StatisticsBucket]) -> Bool {
        a == b && a.map { $0.value?.bitPattern } == b.map { $0.value?.bitPattern }
    }

    @Test(arguments: 1...8) func oneSourceGivesTheEnginesSum(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let origin = try instant("2026-05-04T00:00:00Z")
        let samples = randomSamples(&random, origin: origin, count: 300, sources: 1).sorted { $0.start < $1.start }
        // Samples reach over both ends of the range: only their parts inside count.
        let buckets = try utcHours("2026-05-04T01:00:00Z", "2026-05-04T07:00:00Z")
        let result = try #require(try streamed(samples, buckets))
        #expect(identical(result, try engine.sum(of: samples, in: buckets)))
        #expect(result.contains { $0.value != nil })
    }

    @Test(arguments: 1...8) func sourcesTakingTurnsGiveTheEnginesSum(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        var samples: [StatisticsSample] = []
        var blockStart = try instant("2026-03-28T20:00:00Z")
        for _ in 0..<60 {
            // One source's block of (possibly overlapping) samples, then the next source's,
            // touching it or after a gap; a reading of a higher-priority source inside a block.
            let rank = random.below(4)
            let minutes = 1 + random.below(120)
            let blockEnd = blockStart.addingTimeInterval(Double(minutes * 60))
            for _ in 0..<(1 + random.below(5)) {
                let start = blockStart.addingTimeInterval(Double(random.below(minutes) * 60))
                let end = min(start.addingTimeInterval(Double((1 + random.below(40)) * 60)), blockEnd)
                samples.append(StatisticsSample(start: start, end: end, value: Double(1 + random.below(999)), sourceRank: rank))
            }
            samples.append(StatisticsSample(
                at: blockStart.addingTimeInterval(Double(random.below(minutes) * 60)), value: Double(random.below(50)),
                sourceRank: random.below(rank + 1)))
            blockStart = blockEnd.addingTimeInterval(Double(random.below(3) * 60))
        }
        samples.sort { $0.start < $1.start }
        // Hours in Berlin across the night summer time begins (a 23-hour day).
        let buckets = try CalendarBuckets(from: try instant("2026-03-28T21:00:00Z"), to: try instant("2026-03-30T00:00:00Z"),
                                          granularity: .hour, timeZone: try zone("Europe/Berlin"))
        let result = try #require(try streamed(samples, buckets))
        #expect(identical(result, try engine.sum(of: samples, in: buckets)))
        #expect(closeAll(values(result), bruteForceSums(samples, buckets).values))
    }

    @Test func refusesWhereThePriorityMergeDropsSomething() throws {
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T10:00:00Z")
        let overlapping = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 0),
            try sample("2026-05-04T08:30:00Z", "2026-05-04T09:30:00Z", 600, rank: 1),
        ]
        #expect(try streamed(overlapping, buckets) == nil)
        #expect(try streamed([overlapping[0]], buckets) != nil)
        let covered = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 0),
            try reading("2026-05-04T08:30:00Z", 7, rank: 1),
        ]
        #expect(try streamed(covered, buckets) == nil)
        // A higher-priority interval beginning at a lower-priority reading's instant covers it.
        let coveredAtItsStart = [
            try reading("2026-05-04T08:00:00Z", 7, rank: 1),
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 0),
        ]
        #expect(try streamed(coveredAtItsStart, buckets) == nil)
        #expect(try streamed(coveredAtItsStart.reversed(), buckets) == nil)
        // The engine sorts; the streaming sum takes only samples in start order.
        #expect(try streamed([overlapping[0], try sample("2026-05-04T07:00:00Z", "2026-05-04T07:30:00Z", 1)].reversed(), buckets) != nil)
        #expect(try streamed([try sample("2026-05-04T08:10:00Z", "2026-05-04T08:20:00Z", 1), overlapping[0]], buckets) == nil)
    }

    @Test func takesWhatTheMergeKeeps() throws {
        let samples = [
            try sample("2026-05-04T08:00:00Z", "2026-05-04T09:00:00Z", 1000, rank: 1),
            try reading("2026-05-04T08:30:00Z", 7, rank: 0),   // higher priority: counts, displaces nothing
            try reading("2026-05-04T08:30:00Z", 3, rank: 1),   // the same source: counts
            try reading("2026-05-04T09:00:00Z", 5, rank: 2),   // at the interval's exclusive end: counts
            try sample("2026-05-04T09:00:00Z", "2026-05-04T09:30:00Z", 300, rank: 2),  // touches it
            try sample("2026-05-04T09:10:00Z", "2026-05-04T09:40:00Z", 30, rank: 2),   // the same source overlapping
        ]
        let buckets = try utcHours("2026-05-04T08:00:00Z", "2026-05-04T10:00:00Z")
        let result = try #require(try streamed(samples, buckets))
        #expect(values(result) == [1010, 335])
        #expect(result.map(\.sampleCount) == [3, 3])
        #expect(identical(result, try engine.sum(of: samples, in: buckets)))
    }
}
