import Charts
import Foundation
import HealthModel
import Pipeline

/// A person's dashboard: today against the last 30 days, steps, weight and body fat, heart rate,
/// blood pressure and the devices, all from statistics queries.
struct PersonPage {
    let html: String

    init(store: any QueryStore, scope: QueryScope, zone: TimeZone, now: Date) throws {
        let sections = HealthSections(store: store, scope: scope, zone: zone)
        let renderer = ChartRenderer(format: ChartFormat(zone: zone))
        let today = sections.startOfDay(now)
        let tomorrow = sections.adding(days: 1, to: today)
        let monthAgo = sections.adding(days: -30, to: today)
        var out = "<section id=\"today\"><h2>Today, \(ChartFormat(zone: zone).dateText(today))</h2><div class=\"numbers\">"
        let items: [(String, QuantityType, String, (Double) -> String)] = [
            ("steps", .stepCount, "steps", { JSONNumber.format($0.rounded()) }),
            sections.units == .metric
                ? ("distance", .distanceWalkingRunning, "km", { JSONNumber.format((($0 / 1000) * 1000).rounded() / 1000) })
                : ("distance", .distanceWalkingRunning, DisplayUnits.displayUnit(for: .distanceWalkingRunning, system: .us).symbol, {
                    DisplayUnits.displayUnit(for: .distanceWalkingRunning, system: .us)
                        .number(DisplayUnits.converted($0, of: .distanceWalkingRunning, system: .us))
                }),
            ("energy", .activeEnergyBurned, "kcal active", { JSONNumber.format($0.rounded()) }),
        ]
        // One daily query per type gives today (the last day: the same day edges as 'ingestd today') and the 30 before.
        var dailySteps: [StatisticsBucket] = []
        for (id, type, unit, format) in items {
            let daily = try sections.dailySums(type, from: monthAgo, to: tomorrow)
            if type == .stepCount { dailySteps = daily }
            let value = daily.last { $0.start == today }?.value ?? 0
            let average = daily.filter { $0.start < today }.reduce(0) { $0 + ($1.value ?? 0) } / 30
            out += "<div class=\"number\"><div class=\"value\" id=\"today-\(id)\">\(format(value))</div>"
            out += "<div class=\"label\">\(unit)</div><div class=\"muted\">30-day average <span id=\"average-\(id)\">\(format(average))</span></div></div>"
        }
        out += "</div></section>"
        out += "<section id=\"activity\"><h2>Steps</h2>" + renderer.figure(try sections.stepsChart(from: monthAgo, to: tomorrow, by: .day, buckets: dailySteps)) + "</section>"
        let quarterAgo = sections.adding(days: -90, to: today)
        out += "<section id=\"body\"><h2>Weight and body composition</h2>" + renderer.figure(try sections.weightChart(from: quarterAgo, to: tomorrow))
        if let fat = try sections.bodyFatChart(from: quarterAgo, to: tomorrow) { out += renderer.figure(fat) }
        out += "</section>"
        out += "<section id=\"heart\"><h2>Heart rate</h2>" + renderer.figure(try sections.heartRateChart(from: monthAgo, to: tomorrow)) + "</section>"
        let readings = try sections.bloodPressureReadings(from: quarterAgo, to: tomorrow)
        let timed = ChartRenderer(format: ChartFormat(zone: zone, showsTime: true))
        out += "<section id=\"blood-pressure-section\"><h2>Blood pressure</h2>" + timed.figure(sections.bloodPressureChart(readings))
            + sections.bloodPressureLog(readings, format: timed.format) + "</section>"
        out += "<p class=\"muted\"><a href=\"/devices\">Sources and devices</a></p>"
        html = out
    }

    /// The sources with their devices and counts (a page of its own: it counts every sample).
    static func devices(store: any QueryStore, scope: QueryScope) throws -> String {
        let summaries = try store.sourceSummaries(scope: scope).sorted { $0.name < $1.name }
        guard !summaries.isEmpty else { return "<p>No device has written samples yet.</p>" }
        var out = "<table id=\"device-table\"><thead><tr><th>Source</th><th>Devices</th><th>Samples</th><th>Types</th></tr></thead><tbody>"
        for summary in summaries {
            let devices = summary.devices.map { device in
                [device.name, device.model, device.localIdentifier].compactMap { $0 }.joined(separator: " ")
            }.filter { !$0.isEmpty }
            out += "<tr><th scope=\"row\">\(HTMLText.escaped(summary.name))</th><td>\(HTMLText.escaped(devices.joined(separator: ", ")))</td>"
            out += "<td>\(summary.sampleCount)</td><td>\(HTMLText.escaped(summary.countsByType.keys.sorted().joined(separator: ", ")))</td></tr>"
        }
        return out + "</tbody></table>"
    }
}
