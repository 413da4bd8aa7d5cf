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

private func hours(_ buckets: CalendarBuckets) -> [Double] {
    buckets.intervals.map { $0.duration / 3600 }
}

/// The local wall-clock hour of each bucket start in `timeZone`.
private func localStartHours(_ buckets: CalendarBuckets, _ timeZone: TimeZone) -> [Int] {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    return buckets.intervals.map { calendar.component(.hour, from: $0.start) }
}

struct CalendarBucketsTests {
    @Test func berlinSpringForwardDayHas23Hours() throws {
        let berlin = try zone("Europe/Berlin")
        let buckets = try CalendarBuckets(
            from: try instant("2026-03-27T10:00:00+01:00"), to: try instant("2026-03-30T12:00:00+02:00"),
            granularity: .day, timeZone: berlin)
        #expect(hours(buckets) == [24, 24, 23, 24])
        #expect(buckets[2].start == (try instant("2026-03-29T00:00:00+01:00")))
        #expect(buckets[2].end == (try instant("2026-03-30T00:00:00+02:00")))
        #expect(buckets.granularity == .day)
        #expect(buckets.timeZone == berlin)
    }

    @Test func berlinFallBackDayHas25Hours() throws {
        let buckets = try CalendarBuckets(
            from: try instant("2026-10-25T00:00:00+02:00"), to: try instant("2026-10-26T00:00:00+01:00"),
            granularity: .day, timeZone: try zone("Europe/Berlin"))
        #expect(hours(buckets) == [25])
        #expect(buckets.boundaries == [try instant("2026-10-24T22:00:00Z"), try instant("2026-10-25T23:00:00Z")])
    }

    @Test func fallBackHoursAreTwoDistinctOneOClocks() throws {
        let newYork = try zone("America/New_York")
        let buckets = try CalendarBuckets(
            from: try instant("2026-11-01T00:00:00-04:00"), to: try instant("2026-11-01T03:00:00-05:00"),
            granularity: .hour, timeZone: newYork)
        #expect(hours(buckets) == [1, 1, 1, 1])
        #expect(localStartHours(buckets, newYork) == [0, 1, 1, 2])
        #expect(buckets[1].start == (try instant("2026-11-01T05:00:00Z")))
        #expect(buckets[2].start == (try instant("2026-11-01T06:00:00Z")))
    }

    @Test func springForwardHoursSkipTheMissingHour() throws {
        let berlin = try zone("Europe/Berlin")
        let buckets = try CalendarBuckets(
            from: try instant("2026-03-29T00:00:00+01:00"), to: try instant("2026-03-29T04:00:00+02:00"),
            granularity: .hour, timeZone: berlin)
        #expect(localStartHours(buckets, berlin) == [0, 1, 3])
        #expect(hours(buckets) == [1, 1, 1])
    }

    @Test func newYorkMonthsFollowTheCalendarAndDST() throws {
        let newYork = try zone("America/New_York")
        let buckets = try CalendarBuckets(
            from: try instant("2026-01-15T12:00:00-05:00"), to: try instant("2026-12-31T23:00:00-05:00"),
            granularity: .month, timeZone: newYork)
        // March loses the spring-forward hour, November gains the fall-back hour.
        #expect(hours(buckets) == [744, 672, 743, 720, 744, 720, 744, 744, 720, 744, 721, 744])
        #expect(buckets.boundaries.first == (try instant("2026-01-01T00:00:00-05:00")))
        #expect(buckets[3].start == (try instant("2026-04-01T00:00:00-04:00")))
        #expect(buckets.boundaries.last == (try instant("2027-01-01T00:00:00-05:00")))
    }

    @Test func weeksStartOnMondayByDefault() throws {
        let berlin = try zone("Europe/Berlin")
        // Wednesday 25 March 2026.
        let wednesday = try instant("2026-03-25T12:00:00+01:00")
        let buckets = try CalendarBuckets(
            from: wednesday, to: try instant("2026-04-08T00:00:00+02:00"), granularity: .week, timeZone: berlin)
        #expect(buckets.boundaries == [
            try instant("2026-03-23T00:00:00+01:00"),
            try instant("2026-03-30T00:00:00+02:00"),
            try instant("2026-04-06T00:00:00+02:00"),
            try instant("2026-04-13T00:00:00+02:00"),
        ])
        #expect(hours(buckets) == [167, 168, 168])
    }

    @Test func weeksCanStartOnSunday() throws {
        let buckets = try CalendarBuckets(
            from: try instant("2026-03-25T12:00:00+01:00"), to: try instant("2026-03-26T00:00:00+01:00"),
            granularity: .week, timeZone: try zone("Europe/Berlin"), firstWeekday: 1)
        #expect(buckets.boundaries == [try instant("2026-03-22T00:00:00+01:00"), try instant("2026-03-29T00:00:00+01:00")])
    }

    @Test func dayWithoutMidnightStartsAtOneAM() throws {
        // Brazil's last DST start: clocks jumped from 00:00 to 01:00 on 4 November 2018.
        let buckets = try CalendarBuckets(
            from: try instant("2018-11-04T12:00:00-02:00"), to: try instant("2018-11-04T13:00:00-02:00"),
            granularity: .day, timeZone: try zone("America/Sao_Paulo"))
        #expect(buckets.boundaries == [try instant("2018-11-04T01:00:00-02:00"), try instant("2018-11-05T00:00:00-02:00")])
    }

    @Test func toIsExclusiveAndFromEqualToGivesOnePeriod() throws {
        let utc = try zone("UTC")
        let midnight = try instant("2026-01-01T00:00:00Z")
        let twoDaysLater = try instant("2026-01-03T00:00:00Z")
        let exclusive = try CalendarBuckets(from: midnight, to: twoDaysLater, granularity: .day, timeZone: utc)
        #expect(exclusive.count == 2)
        let single = try CalendarBuckets(from: twoDaysLater, to: twoDaysLater, granularity: .day, timeZone: utc)
        #expect(single.boundaries == [twoDaysLater, try instant("2026-01-04T00:00:00Z")])
    }

    @Test func clippedBucketsStartAtFromAndEndAtTo() throws {
        let from = try instant("2026-01-01T10:30:00Z")
        let to = try instant("2026-01-02T12:00:00Z")
        let buckets = try CalendarBuckets(
            from: from, to: to, granularity: .day, timeZone: try zone("UTC"), clippedToRange: true)
        #expect(buckets.boundaries == [from, try instant("2026-01-02T00:00:00Z"), to])
        let empty = try CalendarBuckets(from: from, to: from, granularity: .day, timeZone: try zone("UTC"), clippedToRange: true)
        #expect(empty.isEmpty)
    }

    @Test func bucketIndexUsesHalfOpenBuckets() throws {
        let buckets = try CalendarBuckets(
            from: try instant("2026-01-01T00:00:00Z"), to: try instant("2026-01-01T03:00:00Z"),
            granularity: .hour, timeZone: try zone("UTC"))
        #expect(buckets.count == 3)
        #expect(buckets.bucketIndex(for: try instant("2026-01-01T00:00:00Z")) == 0)
        #expect(buckets.bucketIndex(for: try instant("2026-01-01T00:59:59Z")) == 0)
        #expect(buckets.bucketIndex(for: try instant("2026-01-01T01:00:00Z")) == 1)
        #expect(buckets.bucketIndex(for: try instant("2026-01-01T02:30:00Z")) == 2)
        #expect(buckets.bucketIndex(for: try instant("2026-01-01T03:00:00Z")) == nil)
        #expect(buckets.bucketIndex(for: try instant("2025-12-31T23:59:59Z")) == nil)
    }

    @Test func bucketIndexOverAYearOfHours() throws {
        let berlin = try zone("Europe/Berlin")
        let buckets = try CalendarBuckets(
            from: try instant("2026-01-01T00:00:00+01:00"), to: try instant("2027-01-01T00:00:00+01:00"),
            granularity: .hour, timeZone: berlin)
        #expect(buckets.count == 8760)
        // 2026-10-25 01:30 UTC is in the second 02:00–03:00 hour of the fall-back night.
        let index = try #require(buckets.bucketIndex(for: try instant("2026-10-25T01:30:00Z")))
        #expect(buckets[index].start == (try instant("2026-10-25T01:00:00Z")))
        #expect(localStartHours(try CalendarBuckets(boundaries: Array(buckets.boundaries[(index - 1)...(index + 1)])), berlin) == [2, 2])
    }

    @Test func coveringSamplesIncludesAPointOnTheLastBoundary() throws {
        let utc = try zone("UTC")
        let morning = try instant("2026-01-01T08:00:00Z")
        let midnight = try instant("2026-01-02T00:00:00Z")
        let interval = StatisticsSample(start: morning, end: midnight, value: 1)
        let endingOnBoundary = try CalendarBuckets(covering: [interval], granularity: .day, timeZone: utc)
        #expect(endingOnBoundary.boundaries == [try instant("2026-01-01T00:00:00Z"), midnight])
        let point = StatisticsSample(at: midnight, value: 1)
        let withPoint = try CalendarBuckets(covering: [interval, point], granularity: .day, timeZone: utc)
        #expect(withPoint.boundaries == [try instant("2026-01-01T00:00:00Z"), midnight, try instant("2026-01-03T00:00:00Z")])
        #expect(try CalendarBuckets(covering: [], granularity: .day, timeZone: utc).isEmpty)
    }

    @Test func rejectsBadInput() throws {
        let utc = try zone("UTC")
        let early = try instant("2026-01-01T00:00:00Z")
        let late = try instant("2026-01-02T00:00:00Z")
        #expect(throws: StatisticsError.invalidRange(from: late, to: early)) {
            try CalendarBuckets(from: late, to: early, granularity: .day, timeZone: utc)
        }
        #expect(throws: StatisticsError.invalidFirstWeekday(0)) {
            try CalendarBuckets(from: early, to: late, granularity: .week, timeZone: utc, firstWeekday: 0)
        }
        #expect(throws: StatisticsError.tooManyBuckets(limit: 10)) {
            try CalendarBuckets(from: early, to: late, granularity: .hour, timeZone: utc, maximumBucketCount: 10)
        }
        #expect(throws: StatisticsError.boundariesNotIncreasing(index: 1, boundary: early)) {
            try CalendarBuckets(boundaries: [early, early])
        }
        #expect(throws: StatisticsError.invalidRange(from: early, to: early)) {
            try CalendarBuckets(single: early, to: early)
        }
        let backwards = StatisticsSample(start: late, end: early, value: 1)
        #expect(throws: StatisticsError.invalidSampleInterval(index: 0, start: late, end: early)) {
            try CalendarBuckets(covering: [backwards], granularity: .day, timeZone: utc)
        }
    }

    @Test func exactlyTheMaximumBucketCountIsAllowed() throws {
        let buckets = try CalendarBuckets(
            from: try instant("2026-01-01T00:00:00Z"), to: try instant("2026-01-02T00:00:00Z"),
            granularity: .hour, timeZone: try zone("UTC"), maximumBucketCount: 24)
        #expect(buckets.count == 24)
    }

    @Test func periodContainingAnInstantIsTheLocalDay() throws {
        let today = try CalendarBuckets.period(
            containing: try instant("2026-10-25T15:00:00+01:00"), granularity: .day, timeZone: try zone("Europe/Berlin"))
        #expect(today == DateInterval(start: try instant("2026-10-25T00:00:00+02:00"), end: try instant("2026-10-26T00:00:00+01:00")))
        #expect(today.duration == 25 * 3600)
    }
}
