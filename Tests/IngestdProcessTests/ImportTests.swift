import Foundation
import Testing
import TestSupport

/// `ingestd import` with the built binary on a generated Apple Health export
/// (Tests/AppleHealthImportTests/Fixtures/export.zip: 2,505 records, 7 blood-pressure readings
/// listed inside their correlations and again at top level, 16 weigh-ins of which 4 re-write a
/// sync identifier with version 2, steps from an iPhone and an Apple Watch).
@Suite(.serialized, .offCooperativePool) struct ImportTests {
    let directory: URL
    let store: String
    static let export = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AppleHealthImportTests/Fixtures/export.zip").path

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = directory.appendingPathComponent("health.sqlite").path
    }

    private func ingestd(_ arguments: [String]) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", store])
    }

    /// The `--json` summary as type → (written, duplicate, replaced, held).
    private func counts(_ output: IngestdProcess.Output) throws -> [String: [Int]] {
        var counts: [String: [Int]] = [:]
        for line in output.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let type = try #require(object["type"] as? String)
            counts[type] = ["written", "duplicate", "replaced", "held"].map { object[$0] as? Int ?? -1 }
        }
        return counts
    }

    @Test func anExportImportsOnceWithGrantAndASecondImportAddsNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try ingestd(["import", Self.export, "--grant", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        let imported = try counts(first)
        #expect(imported["HKQuantityTypeIdentifierBloodPressureSystolic"] == [7, 0, 0, 0])
        #expect(imported["HKQuantityTypeIdentifierBloodPressureDiastolic"] == [7, 0, 0, 0])
        #expect(imported["HKQuantityTypeIdentifierBodyMass"] == [12, 0, 4, 0])
        #expect(imported["HKQuantityTypeIdentifierHeartRate"] == [1881, 0, 0, 0])
        #expect(first.stderr.contains("note: 2505 records read: 2505 samples, 7 correlations (14 repeated correlation members left out)"))
        // Phone and watch steps are kept apart, for the priority merge.
        let steps = try ingestd(["samples", "stepCount", "--json"])
        let sources = steps.lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["source"] as? String
        }
        #expect(sources.count == 204)
        #expect(Set(sources) == ["Jana\u{2019}s iPhone", "Jana\u{2019}s Apple\u{A0}Watch"])
        // The latest version of each re-written weigh-in only.
        let weights = try ingestd(["samples", "bodyMass", "--json"])
        #expect(weights.lines.count == 12)
        #expect(weights.lines.filter { $0.contains("\"HKMetadataKeySyncVersion\":2") }.count == 4)

        let second = try ingestd(["import", Self.export, "--grant", "--json"])
        #expect(second.status == 0, "\(second.stderr)")
        let again = try counts(second)
        #expect(again.values.allSatisfy { $0[0] == 0 && $0[2] == 0 })
        #expect(again.values.map { $0[1] }.reduce(0, +) == 2505)
    }

    @Test func withoutGrantTheSamplesAreHeldWithTheGrantCommand() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try ingestd(["import", Self.export, "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try counts(output)["HKQuantityTypeIdentifierStepCount"] == [0, 0, 0, 204])
        #expect(output.stderr.contains("allow with: ingestd auth grant 'Jana\u{2019}s iPhone' distanceWalkingRunning stepCount"))
    }

    @Test func aDamagedArchiveIsRefusedBeforeAnythingIsStored() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var zip = try Array(Data(contentsOf: URL(fileURLWithPath: Self.export)))
        for index in (zip.count / 2)..<(zip.count / 2 + 64) { zip[index] ^= 0x5A }
        let damaged = directory.appendingPathComponent("export.zip").path
        try Data(zip).write(to: URL(fileURLWithPath: damaged))
        let output = try ingestd(["import", damaged, "--grant", "--batch-size", "100"])
        #expect(output.status == 65)
        #expect(output.stderr.contains("error: \(damaged): apple_health_export/export.xml: "))
        // The archive is checked whole before the first batch: nothing of it is stored.
        let kept = try ingestd(["samples", "heartRate", "--json"])
        #expect(kept.lines.isEmpty)
        let missing = try ingestd(["import", directory.appendingPathComponent("nothing.zip").path])
        #expect(missing.status == 66)
    }

    /// Issue 23 item 7: a bit flipped in a stored entry (value 100 read as 900, CRC-32 unchanged)
    /// was found after its records were committed; importing the intact export then stored 100
    /// beside 900.
    @Test func aBitFlippedEntryStoresNothingAndTheIntactExportThenStoresTheRightValueAlone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" "#
            + #"startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:20:04 +0200" value="100"/>"#
        // Heart-rate records after it: an entry longer than the 64 KiB the opener sniffs.
        let filler = String(repeating: #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" "#
            + #"startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:19:04 +0200" value="60"/>"# + "\n", count: 1_000)
        let intact = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n\(record)\n\(filler)</HealthData>\n".utf8)
        #expect(intact.count > 128 << 10)
        var flipped = intact
        flipped[try #require(intact.firstRange(of: Array("value=\"100\"".utf8))).lowerBound + 7] ^= 0x08
        let name = "apple_health_export/export.xml"
        let damaged = directory.appendingPathComponent("damaged.zip").path
        let good = directory.appendingPathComponent("export.zip").path
        try Data(StoredZip.bytes([.init(name: name, content: flipped, listedCRC: StoredZip.crc32(intact))])).write(to: URL(fileURLWithPath: damaged))
        try Data(StoredZip.bytes([.init(name: name, content: intact)])).write(to: URL(fileURLWithPath: good))
        let refused = try ingestd(["import", damaged, "--grant"])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("\(name): CRC-32 is 0x"))
        #expect(try ingestd(["samples", "stepCount", "--json"]).lines.isEmpty)
        let imported = try ingestd(["import", good, "--grant"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let values = try ingestd(["samples", "stepCount", "--json"]).lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["value"] as? Double
        }
        #expect(values == [100])
    }

    /// Issue 23 item 8: without --grant, records past the per-source bound were dropped while the
    /// summary counted them held. Now the import stops before the batch that would go past it,
    /// drops nothing, says what to do, and a second import with a higher bound completes.
    @Test func heldHistoryIsNeverDroppedThePendingBoundStopsTheImportWithAdvice() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let stopped = try ingestd(["import", Self.export, "--pending-max-records", "500", "--batch-size", "200"])
        #expect(stopped.status == 1)
        #expect(stopped.stderr.contains("would hold more than 500 records in the pending area"))
        #expect(stopped.stderr.contains("import with --grant"))
        #expect(stopped.stderr.contains("--pending-max-records N"))
        #expect(!stopped.stderr.contains("dropped"))
        let pendingAfterStop = try ingestd(["auth", "pending", "--json"])
        #expect(!pendingAfterStop.stdout.contains("\"dropped\":1") && !pendingAfterStop.stdout.contains("\"dropped\":2"))
        let completed = try ingestd(["import", Self.export, "--pending-max-records", "5000", "--json"])
        #expect(completed.status == 0, "\(completed.stderr)")
        #expect(!completed.stderr.contains("dropped"))
        #expect(try counts(completed)["HKQuantityTypeIdentifierStepCount"]?[3] == 204)
        let usage = try ingestd(["import", Self.export, "--pending-max-records", "0"])
        #expect(usage.status == 64)
    }
}
