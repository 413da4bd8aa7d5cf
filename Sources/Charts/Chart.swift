import Foundation

/// A chart's data: a title, axis labels, one or more series over time, and optional horizontal
/// bands (e.g. blood-pressure categories) drawn behind the data.
public struct Chart: Sendable, Equatable {
    /// How a series is drawn.
    public enum Style: Sendable, Equatable {
        /// Points joined by a line (gaps where a value is missing).
        case line
        /// One bar per point from zero.
        case bar
        /// Points only.
        case points
    }

    /// One named row of values, a value (or none) per point in time.
    public struct Series: Sendable, Equatable {
        public var name: String
        public var style: Style
        public var points: [Point]
        public init(name: String, style: Style, points: [Point]) {
            self.name = name
            self.style = style
            self.points = points
        }
    }

    /// One value at one time; nil draws nothing (and shows "-" in the table).
    public struct Point: Sendable, Equatable {
        public var date: Date
        public var value: Double?
        public init(date: Date, value: Double?) {
            self.date = date
            self.value = value
        }
    }

    /// A horizontal range of the value axis with a name (drawn as a tinted strip).
    public struct Band: Sendable, Equatable {
        public var label: String
        public var lower: Double
        public var upper: Double
        /// A CSS class suffix: the band is drawn with class `band-<tone>`.
        public var tone: String
        public init(label: String, lower: Double, upper: Double, tone: String) {
            self.label = label
            self.lower = lower
            self.upper = upper
            self.tone = tone
        }
    }

    /// An id unique on the page (used for the table's caption link and the SVG's title).
    public var id: String
    public var title: String
    /// The value axis' label, with its unit (e.g. "Weight (kg)").
    public var valueLabel: String
    /// The time axis' label (e.g. "Day").
    public var timeLabel: String
    public var series: [Series]
    public var bands: [Band]
    /// Decimal places of the values in the table and the axis ticks.
    public var decimals: Int

    public init(id: String, title: String, valueLabel: String, timeLabel: String, series: [Series], bands: [Band] = [],
                decimals: Int = 0) {
        self.id = id
        self.title = title
        self.valueLabel = valueLabel
        self.timeLabel = timeLabel
        self.series = series
        self.bands = bands
        self.decimals = decimals
    }

    /// Whether any series has at least one value.
    public var hasValues: Bool { series.contains { $0.points.contains { $0.value != nil } } }
}
