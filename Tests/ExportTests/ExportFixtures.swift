import Export
import Foundation
import HealthModel
import Pipeline
import SQLiteStore
import Testing

typealias HKUnit = HealthModel.Unit

/// A store in its own temporary directory, removed at the end.
final class ExportStore {
    let directory: URL
    let path: String
    let store: HealthStore

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("health.sqlite").path
        store = try HealthStore(path: path)
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every record the export cursor yields, in order.
    func records(types: [QuantityType]? = nil, from: Date? = nil, to: Date? = nil) throws -> [HealthRecord] {
        var records: [HealthRecord] = []
        try store.forEachRecord(types: types, from: from, to: to) { records.append($0) }
        return records
    }
}

/// Fixed uuids, so tests can name the records they expect.
enum FixtureID {
    static func uuid(_ n: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n)) ?? UUID()
    }
    static let steps = uuid(1)
    static let weight = uuid(2)
    static let fat = uuid(3)
    static let bmi = uuid(4)
    static let heartRate = uuid(5)
    static let pressure = uuid(6)
    static let systolic = uuid(7)
    static let diastolic = uuid(8)
    static let flights = uuid(9)
    static let temperature = uuid(10)
    static let oxygen = uuid(11)
    static let otherWeight = uuid(12)
    static let height = uuid(13)
    static let glucose = uuid(14)
}

let scale = Device(name: "MI SCALE2", manufacturer: "Xiaomi", model: "XMTZC05HM", localIdentifier: "C8:47:8C:00:11:22")
let cuff = Device(name: "BLESmart_0000021F", manufacturer: "Omron", model: "HEM-7322T", localIdentifier: "28:FF:B2:00:00:01")
let pedometer = Device(name: "HJ-720IT", manufacturer: "Omron", model: "HJ-720IT")

func date(_ text: String) throws -> Date { try #require(ISO8601DateTime.date(from: text)) }

func quantitySample(_ uuid: UUID, _ type: QuantityType, _ value: Double, _ unit: String, start: String, end: String? = nil,
                    source: String, device: Device? = nil) throws -> QuantitySample {
    QuantitySample(uuid: uuid, type: type, quantity: Quantity(value: value, unit: try HKUnit(from: unit)),
                   start: try date(start), end: try date(end ?? start), source: source, device: device)
}

/// The mixed store of the export tests: steps (an interval) from a pedometer, a weighing (weight,
/// body fat, BMI at one instant) from a scale, a second scale's weight, a blood pressure
/// correlation from a cuff, heart rate, temperature, SpO2, height, glucose and flights climbed
/// (a type without a LOINC code) from a watch. Written through the pipeline.
func mixedRecords() throws -> [HealthRecord] {
    let systolic = try quantitySample(FixtureID.systolic, .bloodPressureSystolic, 128, "mmHg",
                                      start: "2026-11-29T07:30:00Z", source: "gatt-blood-pressure", device: cuff)
    let diastolic = try quantitySample(FixtureID.diastolic, .bloodPressureDiastolic, 84, "mmHg",
                                       start: "2026-11-29T07:30:00Z", source: "gatt-blood-pressure", device: cuff)
    return [
        .sample(try quantitySample(FixtureID.steps, .stepCount, 4312, "count", start: "2026-11-29T06:00:00Z",
                                   end: "2026-11-29T07:00:00Z", source: "omron-pedometer", device: pedometer)),
        .correlation(Correlation(uuid: FixtureID.pressure, type: .bloodPressure, start: try date("2026-11-29T07:30:00Z"),
                                 end: try date("2026-11-29T07:30:00Z"), objects: [systolic, diastolic],
                                 source: "gatt-blood-pressure", device: cuff)),
        .sample(try quantitySample(FixtureID.weight, .bodyMass, 72.35, "kg", start: "2026-11-29T08:00:00Z",
                                   source: "xiaomi-scale", device: scale)),
        .sample(try quantitySample(FixtureID.fat, .bodyFatPercentage, 0.215, "%", start: "2026-11-29T08:00:00Z",
                                   source: "xiaomi-scale", device: scale)),
        .sample(try quantitySample(FixtureID.bmi, .bodyMassIndex, 23.1, "count", start: "2026-11-29T08:00:00Z",
                                   source: "xiaomi-scale", device: scale)),
        .sample(try quantitySample(FixtureID.otherWeight, .bodyMass, 160, "lb", start: "2026-11-29T08:05:00Z",
                                   source: "gatt-weight-scale")),
        .sample(try quantitySample(FixtureID.heartRate, .heartRate, 61, "count/min", start: "2026-11-29T09:00:00Z",
                                   source: "watch")),
        .sample(try quantitySample(FixtureID.temperature, .bodyTemperature, 98.6, "degF", start: "2026-11-29T09:01:00Z",
                                   source: "watch")),
        .sample(try quantitySample(FixtureID.oxygen, .oxygenSaturation, 0.97, "%", start: "2026-11-29T09:02:00Z",
                                   source: "watch")),
        .sample(try quantitySample(FixtureID.height, .height, 1.78, "m", start: "2026-11-29T09:03:00Z", source: "watch")),
        .sample(try quantitySample(FixtureID.glucose, .bloodGlucose, 5.5, "mmol<180.15588000005408>/L",
                                   start: "2026-11-29T09:04:00Z", source: "watch")),
        .sample(try quantitySample(FixtureID.flights, .flightsClimbed, 3, "count", start: "2026-11-29T09:10:00Z",
                                   end: "2026-11-29T09:20:00Z", source: "watch")),
    ]
}

/// A store holding `mixedRecords()`, every source granted.
func mixedStore() throws -> ExportStore {
    let temp = try ExportStore()
    for source in ["omron-pedometer", "gatt-blood-pressure", "xiaomi-scale", "gatt-weight-scale", "watch"] {
        try temp.store.grant(source: source, types: [], all: true)
    }
    let pipeline = try Pipeline(store: temp.store, now: { ISO8601DateTime.date(from: "2026-11-30T00:00:00Z") ?? Date() })
    let report = try pipeline.ingest(try mixedRecords())
    #expect(report.totals.written == 13, "every fixture sample is stored")
    return temp
}

/// Runs a writer over records into one string.
func render(_ records: [HealthRecord], with writer: inout some ExportWriter) -> String {
    var output = ""
    writer.writeHeader(to: &output)
    for record in records { writer.write(record, to: &output) }
    writer.writeFooter(to: &output)
    return output
}

/// RFC 4180 reader for the tests: quoted fields, doubled quotes, CRLF or LF rows.
func parseCSV(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var quoted = false
    var characters = Array(text)[...]
    while let character = characters.popFirst() {
        if quoted {
            if character == "\"" {
                if characters.first == "\"" { field.append("\""); characters.removeFirst() } else { quoted = false }
            } else {
                field.append(character)
            }
        } else if character == "\"" {
            quoted = true
        } else if character == "," {
            row.append(field); field = ""
        } else if character == "\r\n" || character == "\n" {
            row.append(field); field = ""
            rows.append(row); row = []
        } else {
            field.append(character)
        }
    }
    if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
    return rows
}
