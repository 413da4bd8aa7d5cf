import Foundation

/// How a chart's times and values are written: the time zone of its labels, day or date-and-time
/// labels.
public struct ChartFormat: Sendable {
    public var zone: TimeZone
    /// Whether table rows show the time of day as well as the date.
    public var showsTime: Bool

    public init(zone: TimeZone, showsTime: Bool = false) {
        self.zone = zone
        self.showsTime = showsTime
    }

    /// `date` as `YYYY-MM-DD` (and ` HH:MM` with `showsTime`) in the zone.
    public func dateText(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        var text = String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
        if showsTime { text += String(format: " %02d:%02d", c.hour ?? 0, c.minute ?? 0) }
        return text
    }

    /// `date` as a short axis tick (`MM-DD`).
    func tickText(_ date: Date) -> String { String(dateText(date).dropFirst(5).prefix(5)) }

    /// `value` with exactly `decimals` places (no exponent, no conversion noise).
    public static func number(_ value: Double, decimals: Int) -> String {
        String(format: "%.\(max(0, min(decimals, 6)))f", value)
    }
}

/// Draws a `Chart` as a self-contained SVG element (no script, no external reference) and its data
/// as an HTML table, the same for the dashboard and the printed report.
public struct ChartRenderer: Sendable {
    public var format: ChartFormat
    /// The SVG's coordinate space (it scales to its container's width).
    public var width = 640.0
    public var height = 240.0

    /// Whether the data table starts unfolded (the printed report) or folded under its chart (the dashboard).
    public var tableOpen: Bool

    public init(format: ChartFormat, tableOpen: Bool = false) {
        self.format = format
        self.tableOpen = tableOpen
    }

    private let left = 64.0, right = 16.0, top = 16.0, bottom = 44.0

    /// The chart and its table in a `<figure>`: the SVG, then the table for screen readers and copying.
    public func figure(_ chart: Chart) -> String {
        "<figure class=\"chart\" id=\"\(HTMLText.escaped(chart.id))\">\n<figcaption>\(HTMLText.escaped(chart.title))</figcaption>\n"
            + svg(chart) + "\n<details class=\"table\"\(tableOpen ? " open" : "")><summary>Data table</summary>" + table(chart)
            + "</details>\n</figure>\n"
    }

    /// The chart as an `<svg>` element with labelled axes; "No data in this range" when it has no value.
    public func svg(_ chart: Chart) -> String {
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart-svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-labelledby=\"\(HTMLText.escaped(chart.id))-title\">"
        out += "<title id=\"\(HTMLText.escaped(chart.id))-title\">\(HTMLText.escaped(chart.title))</title>"
        let dates = chart.series.flatMap { $0.points.map(\.date) }
        let values = chart.series.flatMap { $0.points.compactMap(\.value) }
        // Axis labels are there even without data, so that the reader knows what the empty chart is.
        out += "<text class=\"axis-label y-label\" x=\"14\" y=\"\(fmt(top + plotHeight / 2))\" transform=\"rotate(-90 14 \(fmt(top + plotHeight / 2)))\" text-anchor=\"middle\">\(HTMLText.escaped(chart.valueLabel))</text>"
        out += "<text class=\"axis-label x-label\" x=\"\(fmt(left + plotWidth / 2))\" y=\"\(fmt(height - 4))\" text-anchor=\"middle\">\(HTMLText.escaped(chart.timeLabel))</text>"
        guard let firstDate = dates.min(), let lastDate = dates.max(), var low = values.min(), var high = values.max() else {
            out += "<text class=\"empty\" x=\"\(fmt(left + plotWidth / 2))\" y=\"\(fmt(top + plotHeight / 2))\" text-anchor=\"middle\">No data in this range</text></svg>"
            return out
        }
        if chart.series.contains(where: { $0.style == .bar }) { low = min(low, 0) }
        if high == low { low -= 1; high += 1 }
        let ticks = Self.ticks(low: low, high: high, count: 5)
        low = min(low, ticks.first ?? low)
        high = max(high, ticks.last ?? high)
        let span = firstDate == lastDate ? 1 : lastDate.timeIntervalSince(firstDate)
        let barWidth = max(1, min(24, plotWidth / Double(max(1, Set(dates).count)) * 0.7))
        func x(_ date: Date) -> Double {
            firstDate == lastDate ? left + plotWidth / 2
                : left + barWidth / 2 + (plotWidth - barWidth) * date.timeIntervalSince(firstDate) / span
        }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - (value - low) / (high - low)) }
        for band in chart.bands {
            let lower = max(low, band.lower), upper = min(high, band.upper)
            guard upper > lower else { continue }
            out += "<rect class=\"band band-\(HTMLText.escaped(band.tone))\" x=\"\(fmt(left))\" y=\"\(fmt(y(upper)))\" width=\"\(fmt(plotWidth))\" height=\"\(fmt(y(lower) - y(upper)))\"><title>\(HTMLText.escaped(band.label))</title></rect>"
            out += "<text class=\"band-label\" x=\"\(fmt(left + plotWidth - 4))\" y=\"\(fmt(y(upper) + 11))\" text-anchor=\"end\">\(HTMLText.escaped(band.label))</text>"
        }
        // Axes, ticks and grid.
        out += "<line class=\"axis\" x1=\"\(fmt(left))\" y1=\"\(fmt(top))\" x2=\"\(fmt(left))\" y2=\"\(fmt(top + plotHeight))\"/>"
        out += "<line class=\"axis\" x1=\"\(fmt(left))\" y1=\"\(fmt(top + plotHeight))\" x2=\"\(fmt(left + plotWidth))\" y2=\"\(fmt(top + plotHeight))\"/>"
        for tick in ticks {
            out += "<line class=\"grid\" x1=\"\(fmt(left))\" y1=\"\(fmt(y(tick)))\" x2=\"\(fmt(left + plotWidth))\" y2=\"\(fmt(y(tick)))\"/>"
            out += "<text class=\"tick y-tick\" x=\"\(fmt(left - 6))\" y=\"\(fmt(y(tick) + 4))\" text-anchor=\"end\">\(ChartFormat.number(tick, decimals: Self.tickDecimals(ticks)))</text>"
        }
        let timeTickCount = min(5, Set(dates).count)
        for index in 0..<timeTickCount {
            let date = timeTickCount == 1 ? firstDate
                : firstDate.addingTimeInterval(span * Double(index) / Double(timeTickCount - 1))
            out += "<text class=\"tick x-tick\" x=\"\(fmt(x(date)))\" y=\"\(fmt(top + plotHeight + 16))\" text-anchor=\"middle\">\(format.tickText(date))</text>"
        }
        for (index, series) in chart.series.enumerated() {
            let seriesClass = "series series-\(index)"
            switch series.style {
            case .bar:
                for point in series.points {
                    guard let value = point.value else { continue }
                    let top = y(max(value, 0)), base = y(max(low, 0))
                    out += "<rect class=\"\(seriesClass) bar\" x=\"\(fmt(x(point.date) - barWidth / 2))\" y=\"\(fmt(top))\" width=\"\(fmt(barWidth))\" height=\"\(fmt(max(0.5, base - top)))\"><title>\(HTMLText.escaped(format.dateText(point.date))): \(ChartFormat.number(value, decimals: chart.decimals))</title></rect>"
                }
            case .line, .points:
                if series.style == .line {
                    var path = "", pen = false
                    for point in series.points {
                        guard let value = point.value else { pen = false; continue }
                        path += (pen ? "L" : "M") + "\(fmt(x(point.date))),\(fmt(y(value)))"
                        pen = true
                    }
                    if !path.isEmpty { out += "<path class=\"\(seriesClass) line\" d=\"\(path)\"/>" }
                }
                for point in series.points {
                    guard let value = point.value else { continue }
                    out += "<circle class=\"\(seriesClass) point\" cx=\"\(fmt(x(point.date)))\" cy=\"\(fmt(y(value)))\" r=\"2.5\"><title>\(HTMLText.escaped(series.name)) \(HTMLText.escaped(format.dateText(point.date))): \(ChartFormat.number(value, decimals: chart.decimals))</title></circle>"
                }
            }
        }
        if chart.series.count > 1 {
            for (index, series) in chart.series.enumerated() {
                let lx = left + 8 + Double(index) * 110
                out += "<rect class=\"series series-\(index) legend\" x=\"\(fmt(lx))\" y=\"\(fmt(top - 12))\" width=\"10\" height=\"10\"/>"
                out += "<text class=\"legend-label\" x=\"\(fmt(lx + 14))\" y=\"\(fmt(top - 3))\">\(HTMLText.escaped(series.name))</text>"
            }
        }
        return out + "</svg>"
    }

    /// The chart's data as a table: a row per time, a column per series; "-" for no value.
    public func table(_ chart: Chart) -> String {
        var out = "<table class=\"data\" data-chart=\"\(HTMLText.escaped(chart.id))\"><caption>\(HTMLText.escaped(chart.title))</caption>"
        out += "<thead><tr><th scope=\"col\">\(HTMLText.escaped(chart.timeLabel))</th>"
        for series in chart.series { out += "<th scope=\"col\">\(HTMLText.escaped(series.name))</th>" }
        out += "</tr></thead><tbody>"
        let dates = Array(Set(chart.series.flatMap { $0.points.map(\.date) })).sorted()
        let lookup = chart.series.map { series in
            Dictionary(series.points.map { ($0.date, $0.value) }, uniquingKeysWith: { first, _ in first })
        }
        for date in dates where chart.hasValues {
            out += "<tr><th scope=\"row\">\(format.dateText(date))</th>"
            for values in lookup {
                let text = (values[date] ?? nil).map { ChartFormat.number($0, decimals: chart.decimals) } ?? "-"
                out += "<td>\(text)</td>"
            }
            out += "</tr>"
        }
        if !chart.hasValues {
            out += "<tr><td colspan=\"\(chart.series.count + 1)\">No data in this range</td></tr>"
        }
        return out + "</tbody></table>"
    }

    /// About `count` round tick values covering `[low, high]` (steps of 1, 2 or 5 times a power of ten).
    static func ticks(low: Double, high: Double, count: Int) -> [Double] {
        let raw = (high - low) / Double(max(1, count - 1))
        guard raw.isFinite, raw > 0 else { return [low] }
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
        var ticks: [Double] = []
        var tick = floor(low / step) * step
        while tick <= high + step * 0.5, ticks.count < 20 {
            ticks.append(tick)
            tick += step
        }
        return ticks
    }

    static func tickDecimals(_ ticks: [Double]) -> Int {
        guard ticks.count > 1 else { return 0 }
        let step = ticks[1] - ticks[0]
        return step >= 1 ? 0 : min(3, Int(ceil(-log10(step))))
    }

    private func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}
