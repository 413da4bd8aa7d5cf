import Foundation

/// Ordered, contiguous buckets `[b₀, b₁), [b₁, b₂), …` aligned to calendar periods in a time zone,
/// as `HKStatisticsCollectionQuery` forms them from an anchor and interval components.
///
/// Periods come from Foundation's Gregorian calendar in the given zone, so a day across a DST
/// change lasts 23 or 25 hours, a month is a calendar month, a week starts on `firstWeekday`
/// (default Monday, as in ISO 8601), and around a fall-back change the repeated clock hour yields
/// two distinct real hours.
public struct CalendarBuckets: Hashable, Sendable {
    /// Monday, in Foundation's weekday numbering (1 = Sunday … 7 = Saturday).
    public static let monday = 2
    /// The largest number of buckets built unless the caller asks for more.
    public static let defaultMaximumBucketCount = 1_000_000

    /// Bucket boundaries, strictly increasing: bucket `i` is `[boundaries[i], boundaries[i+1])`.
    /// Empty when there are no buckets.
    public let boundaries: [Date]
    /// The calendar period of each bucket; nil for buckets given explicitly or as one interval.
    public let granularity: BucketGranularity?
    /// The zone the periods are aligned in; nil for buckets given explicitly or as one interval.
    public let timeZone: TimeZone?

    /// The boundaries as seconds since the reference date, for the engine's arithmetic.
    let boundarySeconds: [Double]

    /// Buckets of `granularity` in `timeZone` covering `[from, to)`.
    ///
    /// The first bucket is the period containing `from`; buckets follow until one ends at or after
    /// `to` (`to` is exclusive: when it falls exactly on a period boundary, the period starting
    /// there is not included). When `from == to` the result is the single period containing
    /// `from`. With `clippedToRange`, the first bucket starts at `from` and the last ends at `to`
    /// instead of at the period edges (and `from == to` gives no buckets).
    public init(
        from: Date,
        to: Date,
        granularity: BucketGranularity,
        timeZone: TimeZone,
        firstWeekday: Int = CalendarBuckets.monday,
        clippedToRange: Bool = false,
        maximumBucketCount: Int = CalendarBuckets.defaultMaximumBucketCount
    ) throws(StatisticsError) {
        var bounds = try Self.alignedBoundaries(
            from: from, to: to, includingTo: false, granularity: granularity, timeZone: timeZone,
            firstWeekday: firstWeekday, maximumBucketCount: maximumBucketCount)
        if clippedToRange {
            if from == to {
                bounds = []
            } else {
                bounds[0] = max(bounds[0], from)
                bounds[bounds.count - 1] = min(bounds[bounds.count - 1], to)
            }
        }
        self.init(validBoundaries: bounds, granularity: granularity, timeZone: timeZone)
    }

    /// Buckets of `granularity` in `timeZone` covering every sample, for a query without `--from`
    /// and `--to`: from the period containing the earliest start through the period containing
    /// the latest end. A sample ending exactly on a period boundary does not open a new bucket
    /// unless it is an instantaneous reading at that boundary. No samples give no buckets.
    public init(
        covering samples: [StatisticsSample],
        granularity: BucketGranularity,
        timeZone: TimeZone,
        firstWeekday: Int = CalendarBuckets.monday,
        maximumBucketCount: Int = CalendarBuckets.defaultMaximumBucketCount
    ) throws(StatisticsError) {
        guard var earliest = samples.first?.start, var latestEnd = samples.first?.end else {
            self.init(validBoundaries: [], granularity: granularity, timeZone: timeZone)
            return
        }
        var pointAtLatestEnd = false
        for (index, sample) in samples.enumerated() {
            guard sample.start <= sample.end,
                  sample.start.timeIntervalSinceReferenceDate.isFinite,
                  sample.end.timeIntervalSinceReferenceDate.isFinite
            else { throw .invalidSampleInterval(index: index, start: sample.start, end: sample.end) }
            earliest = min(earliest, sample.start)
            if sample.end > latestEnd {
                latestEnd = sample.end
                pointAtLatestEnd = sample.isInstantaneous
            } else if sample.end == latestEnd, sample.isInstantaneous {
                pointAtLatestEnd = true
            }
        }
        let bounds = try Self.alignedBoundaries(
            from: earliest, to: latestEnd, includingTo: pointAtLatestEnd, granularity: granularity,
            timeZone: timeZone, firstWeekday: firstWeekday, maximumBucketCount: maximumBucketCount)
        self.init(validBoundaries: bounds, granularity: granularity, timeZone: timeZone)
    }

    /// One bucket `[from, to)`, for an un-bucketed total such as today's steps.
    public init(single from: Date, to: Date) throws(StatisticsError) {
        guard from < to, from.timeIntervalSinceReferenceDate.isFinite, to.timeIntervalSinceReferenceDate.isFinite
        else { throw .invalidRange(from: from, to: to) }
        self.init(validBoundaries: [from, to], granularity: nil, timeZone: nil)
    }

    /// Buckets with explicit boundaries, which must be finite and strictly increasing.
    /// Fewer than two boundaries give no buckets.
    public init(boundaries: [Date]) throws(StatisticsError) {
        for (index, boundary) in boundaries.enumerated() {
            guard boundary.timeIntervalSinceReferenceDate.isFinite, index == 0 || boundaries[index - 1] < boundary
            else { throw .boundariesNotIncreasing(index: index, boundary: boundary) }
        }
        self.init(validBoundaries: boundaries.count < 2 ? [] : boundaries, granularity: nil, timeZone: nil)
    }

    private init(validBoundaries: [Date], granularity: BucketGranularity?, timeZone: TimeZone?) {
        self.boundaries = validBoundaries
        self.boundarySeconds = validBoundaries.map(\.timeIntervalSinceReferenceDate)
        self.granularity = granularity
        self.timeZone = timeZone
    }

    /// The calendar period of `granularity` containing `date` in `timeZone`, e.g. today for
    /// `ingestd today` (a DST day lasts 23 or 25 hours).
    public static func period(
        containing date: Date,
        granularity: BucketGranularity,
        timeZone: TimeZone,
        firstWeekday: Int = CalendarBuckets.monday
    ) throws(StatisticsError) -> DateInterval {
        let buckets = try CalendarBuckets(
            from: date, to: date, granularity: granularity, timeZone: timeZone, firstWeekday: firstWeekday)
        return buckets[0]
    }

    /// The number of buckets.
    public var count: Int { max(boundaries.count - 1, 0) }

    /// Whether there are no buckets.
    public var isEmpty: Bool { boundaries.count < 2 }

    /// Bucket `index` as an interval; `index` must be in `0..<count`.
    public subscript(index: Int) -> DateInterval {
        DateInterval(start: boundaries[index], end: boundaries[index + 1])
    }

    /// Every bucket as an interval, in order.
    public var intervals: [DateInterval] { (0..<count).map { self[$0] } }

    /// The index of the bucket containing `date` (bucket starts are inclusive, ends exclusive),
    /// or nil when `date` lies outside all buckets. O(log n).
    public func bucketIndex(for date: Date) -> Int? {
        bucketIndex(seconds: date.timeIntervalSinceReferenceDate)
    }

    /// The index of the bucket containing the instant `t` (seconds since the reference date).
    func bucketIndex(seconds t: Double) -> Int? {
        let index = Self.countOfBoundaries(atOrBefore: t, in: boundarySeconds) - 1
        return index >= 0 && index < count ? index : nil
    }

    /// How many leading entries of the sorted `bounds` are `<= t` (binary search).
    static func countOfBoundaries(atOrBefore t: Double, in bounds: [Double]) -> Int {
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if bounds[middle] <= t { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Period boundaries from the start of the period containing `from` up to the first boundary
    /// after `to` (or at `to` when `to` is exclusive), walking with Foundation's calendar.
    private static func alignedBoundaries(
        from: Date,
        to: Date,
        includingTo: Bool,
        granularity: BucketGranularity,
        timeZone: TimeZone,
        firstWeekday: Int,
        maximumBucketCount: Int
    ) throws(StatisticsError) -> [Date] {
        guard from <= to, from.timeIntervalSinceReferenceDate.isFinite, to.timeIntervalSinceReferenceDate.isFinite
        else { throw .invalidRange(from: from, to: to) }
        guard (1...7).contains(firstWeekday) else { throw .invalidFirstWeekday(firstWeekday) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = firstWeekday
        let component = granularity.calendarComponent
        let cannotAlign = { (date: Date) in
            StatisticsError.calendarCannotAlign(date: date, granularity: granularity, timeZone: timeZone.identifier)
        }
        guard let first = calendar.dateInterval(of: component, for: from), first.start <= from, from < first.end
        else { throw cannotAlign(from) }
        var bounds = [first.start, first.end]
        var last = first.end
        while last < to || (includingTo && last == to) {
            guard bounds.count <= maximumBucketCount else { throw .tooManyBuckets(limit: maximumBucketCount) }
            // Only the end is used: around some transitions (Lord Howe's half-hour change) Foundation
            // reports a period starting before the previous end; its end is still the next edge.
            guard let period = calendar.dateInterval(of: component, for: last), period.end > last
            else { throw cannotAlign(last) }
            bounds.append(period.end)
            last = period.end
        }
        guard bounds.count - 1 <= maximumBucketCount else { throw .tooManyBuckets(limit: maximumBucketCount) }
        return bounds
    }
}
