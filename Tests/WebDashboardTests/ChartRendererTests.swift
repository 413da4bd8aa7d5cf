import Charts
import Foundation
import Testing
import WebDashboard

/// The SVG renderer on known data: labelled axes, a mark per value, a table row per time, markup escaped.
struct ChartRendererTests {
    let utc = TimeZone(identifier: "UTC") ?? .current
    let day0 = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    @Test func aChartDrawsEveryValueAndItsTableListsThem() {
        let points = [Chart.Point(date: day0, value: 70.04), Chart.Point(date: day0.addingTimeInterval(86_400), value: nil),
                      Chart.Point(date: day0.addingTimeInterval(2 * 86_400), value: 69.51)]
        let chart = Chart(id: "weight", title: "Weight", valueLabel: "Weight (kg)", timeLabel: "Day",
                          series: [Chart.Series(name: "Weight (kg)", style: .line, points: points)], decimals: 1)
        let renderer = ChartRenderer(format: ChartFormat(zone: utc))
        let svg = renderer.svg(chart)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains(">Weight (kg)</text>"))
        #expect(svg.contains(">Day</text>"))
        #expect(svg.components(separatedBy: "<circle").count - 1 == 2, "one mark per value, none for the gap")
        #expect(svg.contains("2026-01-01: 70.0") || svg.contains("2026-01-01: 70.0</title>"))
        let table = renderer.table(chart)
        #expect(table.contains("<tr><th scope=\"row\">2026-01-01</th><td>70.0</td></tr>"))
        #expect(table.contains("<tr><th scope=\"row\">2026-01-02</th><td>-</td></tr>"))
        #expect(table.contains("<tr><th scope=\"row\">2026-01-03</th><td>69.5</td></tr>"))
    }

    @Test func anEmptyChartKeepsItsAxesAndSaysSo() {
        let chart = Chart(id: "hr", title: "Heart rate", valueLabel: "Heart rate (bpm)", timeLabel: "Day",
                          series: [Chart.Series(name: "Average", style: .line, points: [Chart.Point(date: day0, value: nil)])])
        let renderer = ChartRenderer(format: ChartFormat(zone: utc))
        #expect(renderer.svg(chart).contains("No data in this range"))
        #expect(renderer.svg(chart).contains(">Heart rate (bpm)</text>"))
        #expect(renderer.table(chart).contains("No data in this range"))
    }

    @Test func namesFromDevicesAreEscaped() {
        let hostile = "<script>alert(1)</script>\"'&"
        let chart = Chart(id: "x\"y", title: hostile, valueLabel: hostile, timeLabel: "Day",
                          series: [Chart.Series(name: hostile, style: .bar, points: [Chart.Point(date: day0, value: 1)])])
        let figure = ChartRenderer(format: ChartFormat(zone: utc)).figure(chart)
        #expect(!figure.contains("<script"))
        #expect(figure.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"))
        #expect(!figure.contains("x\"y"))
    }

    @Test func bloodPressureCategoriesFollowTheHigherClass() {
        #expect(BloodPressureCategory(systolic: 118, diastolic: 76) == .normal)
        #expect(BloodPressureCategory(systolic: 124, diastolic: 78) == .elevated)
        #expect(BloodPressureCategory(systolic: 118, diastolic: 84) == .stage1)
        #expect(BloodPressureCategory(systolic: 142, diastolic: 70) == .stage2)
        #expect(BloodPressureCategory(systolic: 185, diastolic: 100) == .crisis)
        #expect(BloodPressureCategory(systolic: 150, diastolic: 125) == .crisis)
    }

    @Test func listenAddressesAreParsedAndLoopbackIsRecognised() throws {
        #expect(try ListenAddress("127.0.0.1:8080").isLoopback)
        #expect(try ListenAddress("[::1]:8080").isLoopback)
        #expect(try ListenAddress("localhost:1").isLoopback)
        #expect(try !ListenAddress("0.0.0.0:8080").isLoopback)
        #expect(try !ListenAddress("192.168.1.2:80").isLoopback)
        #expect(throws: ListenAddressError.malformed("example.com:80")) { try ListenAddress("example.com:80") }
        #expect(throws: ListenAddressError.malformed("127.0.0.1:99999")) { try ListenAddress("127.0.0.1:99999") }
        #expect(throws: ListenAddressError.malformed("127.0.0.1")) { try ListenAddress("127.0.0.1") }
    }
}
