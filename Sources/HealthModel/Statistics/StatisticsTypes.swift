import Foundation

/// One sample as the statistics engine sees it: a time interval, a value already in the type's
/// canonical unit, and the rank of its source in the type's priority list.
///
/// An instantaneous reading has `start == end`. `sourceRank` 0 is the highest priority; larger
/// numbers are lower priorities. Two samples with the same rank are treated as coming from the
/// same source (the priority merge never drops one in favour of the other, and the temporal
/// weighting chains them as one series).
public struct StatisticsSample: Hashable, Sendable {
    /// Where the sample's interval begins.
    public var start: Date
    /// Where the sample's interval ends; equal to `start` for an instantaneous reading.
    public var end: Date
    /// The value in the quantity type's canonical unit.
    public var value: Double
    /// The source's position in the type's priority list; 0 is the highest priority.
    public var sourceRank: Int

    /// A sample over `[start, end]`.
    public init(start: Date, end: Date, value: Double, sourceRank: Int = 0) {
        self.start = start
        self.end = end
        self.value = value
        self.sourceRank = sourceRank
    }

    /// An instantaneous reading at `instant`.
    public init(at instant: Date, value: Double, sourceRank: Int = 0) {
        self.init(start: instant, end: instant, value: value, sourceRank: sourceRank)
    }

    /// Whether the sample is a single instant (`start == end`).
    public var isInstantaneous: Bool { start == end }
}

/// How the values inside a bucket are averaged; follows the quantity type's aggregation style.
public enum AverageWeighting: String, Hashable, Sendable, CaseIterable {
    /// A plain mean of the samples assigned to the bucket (HealthKit's `discreteArithmetic`).
    case arithmetic
    /// A mean weighted by how long each value was in effect inside the bucket
    /// (HealthKit's `discreteTemporallyWeighted`, e.g. heart rate): an interval sample over its
    /// interval, an instantaneous reading until the same source's next sample but at most
    /// ``StatisticsEngine/maxHoldGap``. The rule lives in `StatisticsEngine.heldEnd`.
    case temporal
    /// The equivalent continuous sound level Leq = 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ), with the
    /// same time weights as `temporal` (HealthKit's `discreteEquivalentContinuousLevel`).
    case equivalentContinuousLevel
}

/// The statistic computed per bucket, mirroring `HKStatisticsOptions`.
///
/// Which statistics are legal for a quantity type (sum only for cumulative types, the others only
/// for discrete ones) is decided by the type's aggregation style before calling the engine; the
/// engine computes whatever it is asked.
public enum StatisticsOperation: Hashable, Sendable {
    /// Sum of a cumulative type, merging overlapping sources by priority.
    case sum
    /// Average of a discrete type, weighted as given. All sources count.
    case average(AverageWeighting)
    /// Smallest value of a discrete type. All sources count.
    case minimum
    /// Largest value of a discrete type. All sources count.
    case maximum
    /// The value of the most recent sample (latest end, then latest start). All sources count.
    case latest
}

extension StatisticsOperation {
    /// The operation `statistic` names for `type` (`sum` for cumulative types; `average`, `min`,
    /// `max` or `latest` for discrete ones, averages weighted as the type's aggregation style says);
    /// nil when the name is unknown or does not apply to the type.
    public init?(statistic: String, for type: QuantityType) {
        let cumulative = type.aggregationStyle.isCumulative
        switch statistic {
        case "sum" where cumulative: self = .sum
        case "min" where !cumulative: self = .minimum
        case "max" where !cumulative: self = .maximum
        case "latest" where !cumulative: self = .latest
        case "average" where !cumulative:
            switch type.aggregationStyle {
            case .discreteTemporallyWeighted: self = .average(.temporal)
            case .discreteEquivalentContinuousLevel: self = .average(.equivalentContinuousLevel)
            default: self = .average(.arithmetic)
            }
        default: return nil
        }
    }
}

/// The result for one bucket `[start, end)`.
public struct StatisticsBucket: Hashable, Sendable {
    /// Where the bucket begins (inclusive).
    public var start: Date
    /// Where the bucket ends (exclusive).
    public var end: Date
    /// The statistic, or nil when no sample contributed to the bucket. Like HealthKit, the engine
    /// reports "no statistics" rather than 0 for an empty bucket; a CLI may print 0 for sums.
    public var value: Double?
    /// For `latest`: the interval of the sample whose value was reported; nil otherwise.
    public var latestInterval: DateInterval?
    /// How many samples contributed to this bucket. A sample spanning several buckets counts in
    /// each of them; for sums, a sample that lost the priority merge everywhere in the bucket does
    /// not count.
    public var sampleCount: Int

    /// A bucket result.
    public init(start: Date, end: Date, value: Double?, latestInterval: DateInterval? = nil, sampleCount: Int) {
        self.start = start
        self.end = end
        self.value = value
        self.latestInterval = latestInterval
        self.sampleCount = sampleCount
    }

    /// The bucket's length in seconds (23 or 25 hours for a day across a DST change).
    public var duration: TimeInterval { end.timeIntervalSince(start) }
}

/// Calendar periods a bucket can span.
public enum BucketGranularity: String, Hashable, Sendable, CaseIterable {
    case hour, day, week, month

    var calendarComponent: Calendar.Component {
        switch self {
        case .hour: .hour
        case .day: .day
        case .week: .weekOfYear
        case .month: .month
        }
    }
}

/// Why buckets could not be built or statistics could not be computed.
public enum StatisticsError: Error, Equatable, Sendable {
    /// The range ends before it starts, or one of its dates is not finite.
    case invalidRange(from: Date, to: Date)
    /// The first weekday must be 1 (Sunday) through 7 (Saturday).
    case invalidFirstWeekday(Int)
    /// The range would produce more than `limit` buckets.
    case tooManyBuckets(limit: Int)
    /// Foundation's calendar gave no usable period around `date` in the zone.
    case calendarCannotAlign(date: Date, granularity: BucketGranularity, timeZone: String)
    /// Explicit bucket boundaries must be finite and strictly increasing; `index` is the first
    /// boundary that is not.
    case boundariesNotIncreasing(index: Int, boundary: Date)
    /// A sample ends before it starts, or has a non-finite date.
    case invalidSampleInterval(index: Int, start: Date, end: Date)
    /// A sample's value is NaN or infinite.
    case nonFiniteSampleValue(index: Int, value: Double)
    /// The maximum hold gap for temporal weighting must be finite and not negative.
    case invalidMaxHoldGap(TimeInterval)

    public static func == (lhs: StatisticsError, rhs: StatisticsError) -> Bool {
        switch (lhs, rhs) {
        case let (.invalidRange(a, b), .invalidRange(c, d)): a == c && b == d
        case let (.invalidFirstWeekday(a), .invalidFirstWeekday(b)): a == b
        case let (.tooManyBuckets(a), .tooManyBuckets(b)): a == b
        case let (.calendarCannotAlign(a, b, c), .calendarCannotAlign(d, e, f)): a == d && b == e && c == f
        case let (.boundariesNotIncreasing(a, b), .boundariesNotIncreasing(c, d)): a == c && b == d
        case let (.invalidSampleInterval(a, b, c), .invalidSampleInterval(d, e, f)): a == d && b == e && c == f
        // Compare the bit patterns so that a NaN payload equals itself.
        case let (.nonFiniteSampleValue(a, b), .nonFiniteSampleValue(c, d)): a == c && b.bitPattern == d.bitPattern
        case let (.invalidMaxHoldGap(a), .invalidMaxHoldGap(b)): a.bitPattern == b.bitPattern
        default: false
        }
    }
}
