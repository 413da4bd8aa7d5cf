import Charts
import Foundation
import HealthModel
import Pipeline

/// `ingestd report`: one self-contained HTML document (inline CSS and SVG, no script, no link out)
/// of a person's range for a doctor: the blood-pressure log, weight and body composition, weekly
/// steps and a heart-rate summary, with a print stylesheet.
public struct HealthReport {
    public let person: String
    public let from: Date
    /// The exclusive end of the range.
    public let to: Date
    let sections: HealthSections

    public init(store: any QueryStore, person: String, from: Date, to: Date, zone: TimeZone) {
        self.person = person
        self.from = from
        self.to = to
        sections = HealthSections(store: store, scope: QueryScope(people: .named(person)), zone: zone)
    }

    /// The document.
    public func html(generated: Date) throws -> String {
        let day = ChartFormat(zone: sections.zone)
        let renderer = ChartRenderer(format: day, tableOpen: true)
        let timed = ChartRenderer(format: ChartFormat(zone: sections.zone, showsTime: true), tableOpen: true)
        let lastDay = day.dateText(to.addingTimeInterval(-1))
        var body = "<h1>Health report: \(HTMLText.escaped(person))</h1>"
        body += "<p class=\"muted\">\(day.dateText(from)) to \(lastDay) (\(HTMLText.escaped(sections.zone.identifier))), made by ingestd on \(timed.format.dateText(generated)).</p>"
        let readings = try sections.bloodPressureReadings(from: from, to: to)
        body += "<section id=\"report-blood-pressure\"><h2>Blood pressure</h2>"
        if !readings.isEmpty {
            let systolic = readings.map(\.systolic), diastolic = readings.map(\.diastolic)
            body += "<p>\(readings.count) reading\(readings.count == 1 ? "" : "s"); average \(ChartFormat.number(systolic.reduce(0, +) / Double(systolic.count), decimals: 0))/\(ChartFormat.number(diastolic.reduce(0, +) / Double(diastolic.count), decimals: 0)) mmHg.</p>"
        }
        body += timed.figure(sections.bloodPressureChart(readings)) + sections.bloodPressureLog(readings, format: timed.format) + "</section>"
        body += "<section id=\"report-body\"><h2>Weight and body composition</h2>" + renderer.figure(try sections.weightChart(from: from, to: to))
        if let fat = try sections.bodyFatChart(from: from, to: to) { body += renderer.figure(fat) }
        body += "</section>"
        body += "<section id=\"report-steps\"><h2>Weekly steps</h2>" + renderer.figure(try sections.stepsChart(from: from, to: to, by: .week, id: "weekly-steps")) + "</section>"
        body += "<section id=\"report-heart\"><h2>Heart rate</h2>" + renderer.figure(try sections.heartRateChart(from: from, to: to)) + "</section>"
        return Dashboard.document(title: "Health report: \(person)", body: body, nav: false, inlineStyle: true)
            .replacingOccurrences(of: "<head>", with: "<head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">")
    }
}
