import Foundation
import HealthModel
import Pipeline
import Testing
import TestSupport
@testable import SQLiteStore

/// Issue 23, item 6: correlations are identified by their own identity, never by their dates.
/// Two blood pressures of one cuff in the same minute (the cuff's clock has minute resolution)
/// stay two correlations in the store, in `samples`, in the JSON-lines export and in FHIR (two
/// panels of two components each); they were merged into one correlation of four members.
@Suite(.offCooperativePool) struct CorrelationIdentityTests {
    static let minute = "2026-11-29T08:00:00Z"

    /// A blood pressure of the cuff at `minute`; `record` names the cuff's record number in the
    /// sync identifiers (nil: none at all, identity by content).
    static func pressure(_ systolic: Double, _ diastolic: Double, record: Int?) throws -> HealthRecord {
        let time = try date(minute)
        let device = Device(name: "BP cuff", localIdentifier: "C8:47:8C:00:11:06")
        let metadata = record.map { Metadata(syncIdentifier: "cuff/\($0)", syncVersion: 1) } ?? Metadata()
        func member(_ type: QuantityType, _ value: Double) -> QuantitySample {
            QuantitySample(type: type, quantity: Quantity(value: value, unit: .millimeterOfMercury), start: time, end: time,
                           source: "cuff", device: device, metadata: metadata)
        }
        return .correlation(Correlation(type: .bloodPressure, start: time, end: time,
                                        objects: [member(.bloodPressureSystolic, systolic), member(.bloodPressureDiastolic, diastolic)],
                                        source: "cuff", device: device, metadata: metadata))
    }

    func expectTwoReadings(in path: String) throws {
        let samples = try IngestdProcess.runBlocking(["samples", "bloodPressureSystolic", "--json", "--store", path])
        #expect(samples.status == 0, "\(samples.stderr)")
        #expect(samples.lines.count == 2, "\(samples.stdout)")

        let jsonl = try IngestdProcess.runBlocking(["export", "--format", "jsonl", "--types", "bloodPressure", "--store", path])
        #expect(jsonl.status == 0, "\(jsonl.stderr)")
        let correlations = jsonl.lines.filter { $0.hasPrefix("{\"correlation\":\"HKCorrelationTypeIdentifierBloodPressure\"") }
        #expect(correlations.count == 2, "\(jsonl.stdout)")
        let pairs = try correlations.map { line -> [Double] in
            guard case .correlation(let correlation) = try HealthRecordDecoder(defaultSource: "cuff").decodeLine(line) else { return [] }
            return correlation.objects.sorted { $0.type.identifier > $1.type.identifier }.map(\.quantity.value)
        }
        // Each keeps its own pairing (systolic, diastolic).
        #expect(Set(pairs) == [[128, 82], [121, 79]], "\(pairs)")

        let fhir = try IngestdProcess.runBlocking(["export", "--format", "fhir", "--types", "bloodPressure", "--store", path])
        #expect(fhir.status == 0, "\(fhir.stderr)")
        let bundle = try #require(try JSONSerialization.jsonObject(with: Data(fhir.stdout.utf8)) as? [String: Any])
        let resources = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        let panels = resources.filter { resource in
            ((resource["code"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []).contains { $0["code"] as? String == "85354-9" }
        }
        #expect(panels.count == 2, "\(fhir.stdout)")
        #expect(panels.allSatisfy { ($0["component"] as? [Any])?.count == 2 }, "\(panels)")
        let validation = try FHIRValidator.validate(fhir.stdout)
        #expect(validation.valid, "\(validation.complaint)")
    }

    @Test(arguments: [true, false])
    func twoReadingsInOneMinuteStayTwoCorrelations(withRecordNumbers: Bool) throws {
        let temp = try ExportStore()
        try temp.store.grant(source: "cuff", types: [], all: true)
        let pipeline = try Pipeline(store: temp.store, now: { ISO8601DateTime.date(from: "2026-11-30T00:00:00Z") ?? Date() })
        let first = try Self.pressure(128, 82, record: withRecordNumbers ? 1 : nil)
        let second = try Self.pressure(121, 79, record: withRecordNumbers ? 2 : nil)
        #expect(try pipeline.ingest([first, second]).totals.written == 4)
        // Read again (a device re-read, a replay): idempotent.
        #expect(try pipeline.ingest([first, second]).totals.written == 0)
        let rows = try temp.store.db.prepare("SELECT COUNT(*) FROM correlations").firstRow { $0.int(at: 0) }
        #expect(rows == 2)
        try expectTwoReadings(in: temp.path)
    }

    /// A store of schema 6 holding such a merged correlation (one row, four members) is split
    /// again when opened: the n-th systolic with the n-th diastolic, in the order stored.
    @Test func aMergedCorrelationIsSplitByTheMigration() throws {
        let temp = try ExportStore()
        temp.store.close()
        try FileManager.default.removeItem(atPath: temp.path)
        let schema6 = Migrator(applicationID: HealthStore.applicationID, migrations: Array(HealthStore.migrator.migrations.prefix(6)))
        let db = try schema6.openDatabase(path: temp.path)
        let time = try date(Self.minute).timeIntervalSince1970
        try db.execute(sql: """
            INSERT INTO sources(id, name, created_at) VALUES (1, 'cuff', 0);
            INSERT INTO grants(source, type, granted_at) VALUES ('cuff', '*', 0);
            INSERT INTO types(id, identifier) VALUES (1, 'HKQuantityTypeIdentifierBloodPressureSystolic'),
                (2, 'HKQuantityTypeIdentifierBloodPressureDiastolic');
            INSERT INTO correlations(id, uuid, type, start_time, end_time, source)
                VALUES (1, randomblob(16), 'HKCorrelationTypeIdentifierBloodPressure', \(time), \(time), 1);
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, sync_id, sync_version, correlation, person) VALUES
                (randomblob(16), 1, 128, \(time), \(time), 1, 'cuff/1', 1, 1, (SELECT id FROM people)),
                (randomblob(16), 2, 82, \(time), \(time), 1, 'cuff/1', 1, 1, (SELECT id FROM people)),
                (randomblob(16), 1, 121, \(time), \(time), 1, 'cuff/2', 1, 1, (SELECT id FROM people)),
                (randomblob(16), 2, 79, \(time), \(time), 1, 'cuff/2', 1, 1, (SELECT id FROM people));
            """)
        db.close()
        let migrated = try HealthStore(path: temp.path)
        let rows = try migrated.db.prepare("SELECT COUNT(*) FROM correlations").firstRow { $0.int(at: 0) }
        #expect(rows == 2)
        migrated.close()
        try expectTwoReadings(in: temp.path)
    }
}
