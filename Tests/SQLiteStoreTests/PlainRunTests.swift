import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// A run of plain samples goes into the store by one `INSERT ... SELECT` from
/// `ingestd_sample_rows` (issue 31): the same batches written that way and one statement per
/// sample store the same rows, count them the same, and say the same of every sample, also where
/// a run holds re-sent samples, reused uuids and the same reading twice; uuids that do not ascend
/// go row by row.
@Suite struct PlainRunTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)
    static let watch = Device(name: "Watch", manufacturer: "Acme", model: "W1", localIdentifier: "AA:BB:CC:00:00:01")
    static let phone = Device(name: "Phone", manufacturer: "Acme", model: "P1")

    static func uuid(_ n: UInt8) -> UUID {
        UUID(uuid: (0x01, 0x8F, 0x00, 0x00, 0x00, 0x00, 0x70, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, n))
    }

    static func steps(_ n: UInt8, value: Double, minute: Int, source: String = "band",
                      device: Device? = watch, metadata: Metadata = Metadata()) -> QuantitySample {
        QuantitySample(uuid: uuid(n), type: .stepCount, quantity: Quantity(value: value, unit: .count),
                       start: start.addingTimeInterval(Double(minute) * 60),
                       end: start.addingTimeInterval(Double(minute + 1) * 60), source: source, device: device,
                       metadata: metadata)
    }

    /// The first batch: 40 plain samples of two sources and devices, metadata or none, half of
    /// them for a person.
    static func firstBatch(person: Int64) -> (records: [NormalizedRecord], people: [Int64?]) {
        let tagged = Metadata(timeZone: "Europe/Zürich", entries: ["sourceVersion": .string("10.5")])
        var records: [NormalizedRecord] = []
        var people: [Int64?] = []
        for n in 0..<40 {
            let sample = n % 3 == 0
                ? steps(UInt8(n), value: Double(n), minute: n, source: "phone", device: phone)
                : steps(UInt8(n), value: Double(n), minute: n, metadata: n % 2 == 0 ? tagged : Metadata())
            records.append(.sample(sample))
            people.append(n % 2 == 0 ? person : nil)
        }
        return (records, people)
    }

    /// The second batch, with what each of its samples must become.
    static func secondBatch() -> (records: [NormalizedRecord], expected: [[WriteOutcome]]) {
        let pressure = Correlation(
            uuid: uuid(200), type: .bloodPressure, start: start, end: start,
            objects: [QuantitySample(uuid: uuid(201), type: .bloodPressureSystolic, quantity: Quantity(value: 120, unit: .millimeterOfMercury),
                                     start: start, end: start, source: "cuff"),
                      QuantitySample(uuid: uuid(202), type: .bloodPressureDiastolic, quantity: Quantity(value: 80, unit: .millimeterOfMercury),
                                     start: start, end: start, source: "cuff")],
            source: "cuff")
        let synced = QuantitySample(uuid: uuid(210), type: .stepCount, quantity: Quantity(value: 7, unit: .count), start: start,
                                    end: start.addingTimeInterval(60), source: "band",
                                    metadata: Metadata(syncIdentifier: "day-1", syncVersion: 1))
        var rows: [(NormalizedRecord, [WriteOutcome])] = []
        // A run (ascending uuids): what a re-sent reading or a reused uuid becomes inside it.
        rows.append((.sample(steps(1, value: 1, minute: 1)), [.duplicate]))                // re-sent as it was
        rows.append((.sample(steps(2, value: 999, minute: 2)), [.uuidConflict]))           // a stored uuid, other content
        rows.append((.sample(steps(100, value: 1000, minute: 100)), [.written]))
        rows.append((.sample(steps(101, value: 4, minute: 4)), [.duplicate]))              // a stored identity, a new uuid
        rows.append((.sample(steps(102, value: 1002, minute: 102)), [.written]))
        rows.append((.sample(steps(103, value: 1002, minute: 102)), [.duplicate]))         // the one before, a new uuid
        rows.append((.sample(steps(105, value: 7, minute: 7)), [.duplicate]))              // as 101; the next differs
        let otherWatch = Device(name: "Watch", localIdentifier: "AA:BB:CC:00:00:02")        // only in its device
        rows.append((.sample(steps(106, value: 7, minute: 7, device: otherWatch)), [.written]))
        // A uuid not above the one before starts the next run: 102 again, as stored in the first.
        rows.append((.sample(steps(102, value: 1002, minute: 102)), [.duplicate]))
        rows.append((.sample(steps(104, value: 1004, minute: 104)), [.written]))
        // Descending uuids: row by row.
        rows.append((.sample(steps(99, value: 1099, minute: 99)), [.written]))
        rows.append((.sample(steps(98, value: 1098, minute: 98)), [.written]))
        rows.append((.sample(steps(97, value: 1097, minute: 97)), [.written]))
        rows.append((.sample(synced), [.written]))                                         // a sync identifier: alone
        rows.append((.sample(steps(130, value: 1030, minute: 130)), [.written]))
        rows.append((.correlation(pressure), [.written, .written]))                         // a correlation: alone
        for n in 0..<12 {
            let sample = steps(UInt8(140 + n), value: 2000 + Double(n), minute: 140 + n,
                               source: n % 2 == 0 ? "band" : "phone", device: n % 2 == 0 ? watch : nil)
            rows.append((.sample(sample), [.written]))
        }
        rows.append((.sample(steps(30, value: 30, minute: 30, source: "phone", device: phone)), [.duplicate]))
        return (rows.map(\.0), rows.map(\.1))
    }

    /// Everything the store holds of its samples, without the ids (a statement that ignores a
    /// row may or may not use up an id).
    static func contents(_ store: HealthStore) throws -> [String] {
        try store.db.prepare("""
            SELECT hex(x.uuid), t.identifier, x.value, x.start_time, x.end_time, s.name, d.identity, x.device_local_id,
                   x.sync_id, x.sync_version, x.metadata, hex(c.uuid), x.person
            FROM samples x JOIN types t ON t.id = x.type JOIN sources s ON s.id = x.source
            LEFT JOIN devices d ON d.id = x.device LEFT JOIN correlations c ON c.id = x.correlation
            ORDER BY x.uuid
            """).mapRows { row in (0..<13).map { "\(row.value(at: $0))" }.joined(separator: "|") }
        + store.db.prepare("""
            SELECT s.name, t.identifier, sc.person, d.identity, sc.count, sc.last_end, sc.longest FROM sample_counts sc
            JOIN sources s ON s.id = sc.source JOIN types t ON t.id = sc.type LEFT JOIN devices d ON d.id = sc.device
            ORDER BY 1, 2, 3, 4
            """).mapRows { row in (0..<7).map { "\(row.value(at: $0))" }.joined(separator: "|") }
    }

    static func write(_ store: HealthStore, _ records: [NormalizedRecord], people: [Int64?] = []) throws -> CommitReceipt {
        try store.write(records, people: people, held: [], releasing: [], rejections: [:])
    }

    @Test("a run in one statement stores, counts and answers as one statement per sample")
    func runMatchesRowByRow() throws {
        let directory = try TemporaryDirectory()
        let rowByRow = try HealthStore(path: directory.path("rows.sqlite"))
        rowByRow.plainRunMinimum = .max
        let inRuns = try HealthStore(path: directory.path("runs.sqlite"))
        inRuns.plainRunMinimum = 2
        final class Seen: @unchecked Sendable { var statements: [String] = [] }
        let seen = Seen()
        inRuns.db.traceStatements { seen.statements.append($0) }

        var receipts: [[CommitReceipt]] = [[], []]
        for (arm, store) in [rowByRow, inRuns].enumerated() {
            let person = try store.addPerson(name: "Ada").id
            let first = Self.firstBatch(person: person)
            receipts[arm].append(try Self.write(store, first.records, people: first.people))
            receipts[arm].append(try Self.write(store, Self.secondBatch().records))
            // All of the first batch again: every sample a duplicate, and no row changes.
            receipts[arm].append(try Self.write(store, first.records, people: first.people))
        }
        inRuns.db.traceStatements(nil)

        let expectedSecond = Self.secondBatch().expected
        #expect(receipts[0][1].outcomes == expectedSecond)
        #expect(receipts[1][1].outcomes == expectedSecond)
        #expect(receipts[0][0].outcomes == Array(repeating: [.written], count: 40))
        for (rows, runs) in zip(receipts[0], receipts[1]) {
            #expect(runs.outcomes == rows.outcomes)
            #expect(runs.events.map { "\($0.source) \($0.type) \($0.count) \($0.person ?? "-")" }
                    == rows.events.map { "\($0.source) \($0.type) \($0.count) \($0.person ?? "-")" })
        }
        #expect(receipts[1][2].outcomes == Array(repeating: [.duplicate], count: 40))
        let stored = try Self.contents(rowByRow)
        #expect(stored.count > 60)
        #expect(try Self.contents(inRuns) == stored)
        try CountsTests.expectCountsMatchScan(inRuns, "after the runs")

        // The plain samples went in as runs; the sample with a sync identifier and the
        // correlation's members one by one.
        let runStatements = seen.statements.filter { $0.contains("ingestd_sample_rows") }
        let rowStatements = seen.statements.filter {
            $0.hasPrefix("INSERT OR IGNORE INTO samples") && !$0.contains("ingestd_sample_rows")
        }
        #expect(runStatements.count == 5, "runs: the first batch, three in the second, the first again")
        #expect(rowStatements.count == 8, "alone: three descending, the synced, the one after it, two members, the last")
    }

    @Test("ingestd_sample_rows reads nothing without its bound batch, and no view or trigger may use it")
    func sampleRowsOnlyReadsABoundBatch() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore(path: directory.path("store.sqlite"))
        #expect(try store.db.scalarInt64("SELECT count(*) FROM ingestd_sample_rows('not a batch')") == 0)
        #expect(try store.db.scalarInt64("SELECT count(*) FROM ingestd_sample_rows(x'00112233')") == 0)
        #expect(throws: SQLiteError.self) { try store.db.scalarInt64("SELECT count(*) FROM ingestd_sample_rows") }
        // A view in the store file (as a hostile copy of it could carry) may not read it.
        try store.db.execute(sql: "CREATE VIEW batch_rows AS SELECT * FROM ingestd_sample_rows(NULL)")
        let refused = #expect(throws: SQLiteError.self) { try store.db.scalarInt64("SELECT count(*) FROM batch_rows") }
        #expect(refused?.message.contains("unsafe use of virtual table") == true, "\(String(describing: refused))")
    }
}
