import Charts
import Foundation
import HealthModel
import Pipeline

/// The units and precision the pages print (a small local table until the shared display units
/// land: heart rate in bpm, body fat in percent, mass in kg with 0.1, distance in km).
enum PageUnits {
    static let beatsPerMinute = try? HealthModel.Unit(from: "count/min")

    /// A heart-rate value from the store's unit into beats per minute.
    static func bpm(_ value: Double, type: QuantityType = .heartRate) -> Double {
        guard let target = beatsPerMinute else { return value }
        return (try? type.canonicalUnit.convert(value, to: target)) ?? value
    }

    /// A stored fraction (0…1) as percent.
    static func percent(_ fraction: Double) -> Double { fraction * 100 }
}

/// The blood-pressure categories of the 2017 ACC/AHA guideline, by the higher of the two readings' classes.
public enum BloodPressureCategory: String, Sendable, CaseIterable {
    case normal = "Normal"
    case elevated = "Elevated"
    case stage1 = "Hypertension stage 1"
    case stage2 = "Hypertension stage 2"
    case crisis = "Hypertensive crisis"

    /// The category of a reading in mmHg.
    public init(systolic: Double, diastolic: Double) {
        if systolic > 180 || diastolic > 120 {
            self = .crisis
        } else if systolic >= 140 || diastolic >= 90 {
            self = .stage2
        } else if systolic >= 130 || diastolic >= 80 {
            self = .stage1
        } else if systolic >= 120 {
            self = .elevated
        } else {
            self = .normal
        }
    }

    /// The systolic bands drawn behind the chart.
    static let systolicBands = [
        Chart.Band(label: "Normal", lower: 0, upper: 120, tone: "normal"),
        Chart.Band(label: "Elevated", lower: 120, upper: 130, tone: "elevated"),
        Chart.Band(label: "Stage 1", lower: 130, upper: 140, tone: "stage1"),
        Chart.Band(label: "Stage 2", lower: 140, upper: 180, tone: "stage2"),
        Chart.Band(label: "Crisis", lower: 180, upper: 300, tone: "crisis"),
    ]
}

/// One blood-pressure reading: the systolic and diastolic samples of the same time.
public struct BloodPressureReading: Sendable, Equatable {
    public var date: Date
    public var systolic: Double
    public var diastolic: Double
    public var category: BloodPressureCategory { BloodPressureCategory(systolic: systolic, diastolic: diastolic) }
}

/// Why a page could not be made from the store.
public enum DashboardError: Error, Equatable, CustomStringConvertible {
    case unknownPerson(String, known: [String])
    case invalidParameter(name: String, value: String, expected: String)
    case badRange(String)
    /// Parameters that cannot be given together (`latest` with `newest`), and why.
    case conflictingParameters(String)

    public var description: String {
        switch self {
        case .unknownPerson(let name, let known):
            "no person named '\(PrintableText.escaped(name))'" + (known.isEmpty ? "" : "; known: " + known.joined(separator: ", "))
        case .invalidParameter(let name, let value, let expected):
            "query parameter '\(PrintableText.escaped(name))' is '\(PrintableText.escaped(value))', expected \(expected)"
        case .badRange(let reason), .conflictingParameters(let reason): reason
        }
    }
}

/// Builds the health sections (charts, tables, numbers) of one person over a range from the query
/// port's statistics queries: never the raw minute samples (only blood pressure, a handful of
/// readings a day at most, is read as samples, bounded).
public struct HealthSections {
    public let store: any QueryStore
    public let scope: QueryScope
    public let zone: TimeZone
    /// The measurement system of the person in `scope` (`people set P --units`), else metric.
    public let units: UnitSystem
    var calendar: Calendar

    /// At most this many blood-pressure readings are read for a range.
    public static let bloodPressureLimit = 1000

    public init(store: any QueryStore, scope: QueryScope, zone: TimeZone) {
        self.store = store
        self.scope = scope
        self.zone = zone
        units = (try? store.queryUnitSystem(for: scope)) ?? .metric
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    /// The start of the day holding `date` in the zone.
    public func startOfDay(_ date: Date) -> Date { calendar.startOfDay(for: date) }

    /// `days` days after `date` (calendar days in the zone).
    public func adding(days: Int, to date: Date) -> Date { calendar.date(byAdding: .day, value: days, to: date) ?? date }

    /// The sum of a cumulative type over `[from, to)` (0 without data), as `ingestd today` computes it.
    public func sum(_ type: QuantityType, from: Date, to: Date) throws -> Double {
        try store.statistics(.sum, type: type, from: from, to: to, granularity: nil, zone: zone, scope: scope).first?.value ?? 0
    }

    func buckets(_ operation: StatisticsOperation, _ type: QuantityType, from: Date, to: Date, by: BucketGranularity)
        throws -> [StatisticsBucket] {
        try store.statistics(operation, type: type, from: from, to: to, granularity: by, zone: zone, scope: scope)
    }

    /// Sums of a cumulative type per day over `[from, to)`.
    public func dailySums(_ type: QuantityType, from: Date, to: Date) throws -> [StatisticsBucket] {
        try buckets(.sum, type, from: from, to: to, by: .day)
    }

    /// Steps per day (or week) as bars (from `buckets` when the caller has them already).
    public func stepsChart(from: Date, to: Date, by: BucketGranularity, id: String = "steps",
                           buckets given: [StatisticsBucket]? = nil) throws -> Chart {
        let buckets = try given ?? buckets(.sum, .stepCount, from: from, to: to, by: by)
        let title = by == .week ? "Steps per week" : "Steps per day"
        return Chart(id: id, title: title, valueLabel: "Steps", timeLabel: by == .week ? "Week starting" : "Day",
                     series: [Chart.Series(name: "Steps", style: .bar,
                                           points: buckets.map { Chart.Point(date: $0.start, value: $0.value.map { $0.rounded() }) })])
    }

    /// Daily average weight (kg or, for a person reading US units, lb; 0.1) as a line.
    public func weightChart(from: Date, to: Date) throws -> Chart {
        let buckets = try buckets(.average(.arithmetic), .bodyMass, from: from, to: to, by: .day).filter { $0.value != nil }
        let display = DisplayUnits.displayUnit(for: .bodyMass, system: units)
        let label = "Weight (\(display.symbol))"
        return Chart(id: "weight", title: "Weight", valueLabel: label, timeLabel: "Day",
                     series: [Chart.Series(name: label, style: .line, points: buckets.map { bucket in
                         Chart.Point(date: bucket.start, value: bucket.value.map { DisplayUnits.converted($0, of: .bodyMass, system: units) })
                     })],
                     decimals: display.fractionDigits)
    }

    /// Daily average body fat (%, 0.1), or nil when the range has none.
    public func bodyFatChart(from: Date, to: Date) throws -> Chart? {
        let buckets = try buckets(.average(.arithmetic), .bodyFatPercentage, from: from, to: to, by: .day).filter { $0.value != nil }
        guard !buckets.isEmpty else { return nil }
        return Chart(id: "body-fat", title: "Body fat", valueLabel: "Body fat (%)", timeLabel: "Day",
                     series: [Chart.Series(name: "Body fat (%)", style: .line,
                                           points: buckets.map { Chart.Point(date: $0.start, value: $0.value.map(PageUnits.percent)) })],
                     decimals: 1)
    }

    /// Heart rate per day: minimum, time-weighted average and maximum (bpm; one read of the samples), and resting
    /// heart rate when present.
    public func heartRateChart(from: Date, to: Date) throws -> Chart {
        func series(_ name: String, _ buckets: [StatisticsBucket], _ type: QuantityType) -> Chart.Series {
            Chart.Series(name: name, style: .line, points: buckets.map {
                Chart.Point(date: $0.start, value: $0.value.map { PageUnits.bpm($0, type: type).rounded() })
            })
        }
        let daily = try store.statistics([.minimum, .average(.temporal), .maximum], type: .heartRate, from: from, to: to,
                                         granularity: .day, zone: zone, scope: scope)
        var all = zip(["Minimum", "Average", "Maximum"], daily).map { series($0, $1, .heartRate) }
        let resting = series("Resting", try buckets(.average(.arithmetic), .restingHeartRate, from: from, to: to, by: .day),
                             .restingHeartRate)
        if resting.points.contains(where: { $0.value != nil }) { all.append(resting) }
        return Chart(id: "heart-rate", title: "Heart rate per day", valueLabel: "Heart rate (bpm)", timeLabel: "Day", series: all)
    }

    /// The blood-pressure readings of the range (systolic and diastolic of the same start), oldest first.
    public func bloodPressureReadings(from: Date, to: Date) throws -> [BloodPressureReading] {
        let systolic = try store.samples(type: .bloodPressureSystolic, from: from, to: to, source: nil, scope: scope,
                                         limit: Self.bloodPressureLimit)
        let diastolic = try store.samples(type: .bloodPressureDiastolic, from: from, to: to, source: nil, scope: scope,
                                          limit: Self.bloodPressureLimit)
        let byStart = Dictionary(diastolic.map { ($0.start, $0.quantity.value) }, uniquingKeysWith: { first, _ in first })
        return systolic.compactMap { sample in
            byStart[sample.start].map { BloodPressureReading(date: sample.start, systolic: sample.quantity.value, diastolic: $0) }
        }
    }

    /// The readings as a chart with the category bands.
    public func bloodPressureChart(_ readings: [BloodPressureReading]) -> Chart {
        Chart(id: "blood-pressure", title: "Blood pressure", valueLabel: "Pressure (mmHg)", timeLabel: "Measured",
              series: [
                  Chart.Series(name: "Systolic", style: .line, points: readings.map { Chart.Point(date: $0.date, value: $0.systolic.rounded()) }),
                  Chart.Series(name: "Diastolic", style: .line, points: readings.map { Chart.Point(date: $0.date, value: $0.diastolic.rounded()) }),
              ],
              bands: BloodPressureCategory.systolicBands)
    }

    /// The blood-pressure log as a table with each reading's category.
    public func bloodPressureLog(_ readings: [BloodPressureReading], format: ChartFormat) -> String {
        var out = "<table class=\"log\" id=\"blood-pressure-log\"><caption>Blood-pressure log</caption><thead><tr>"
        out += "<th scope=\"col\">Measured</th><th scope=\"col\">Systolic (mmHg)</th><th scope=\"col\">Diastolic (mmHg)</th><th scope=\"col\">Category</th></tr></thead><tbody>"
        for reading in readings {
            out += "<tr class=\"bp-\(reading.category)\"><th scope=\"row\">\(format.dateText(reading.date))</th>"
            out += "<td>\(ChartFormat.number(reading.systolic, decimals: 0))</td><td>\(ChartFormat.number(reading.diastolic, decimals: 0))</td>"
            out += "<td>\(HTMLText.escaped(reading.category.rawValue))</td></tr>"
        }
        if readings.isEmpty { out += "<tr><td colspan=\"4\">No readings in this range</td></tr>" }
        return out + "</tbody></table>"
    }
}
