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

    @Test func aDamagedExportStopsWithItsOffsetAndKeepsWhatWasCommitted() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var zip = try Array(Data(contentsOf: URL(fileURLWithPath: Self.export)))
        for index in (zip.count / 2)..<(zip.count / 2 + 64) { zip[index] ^= 0x5A }
        let damaged = directory.appendingPathComponent("export.zip").path
        try Data(zip).write(to: URL(fileURLWithPath: damaged))
        let output = try ingestd(["import", damaged, "--grant", "--batch-size", "100"])
        #expect(output.status == 65)
        #expect(output.stderr.contains("error: \(damaged): "))
        #expect(output.stderr.contains(" at byte "))
        let kept = try ingestd(["samples", "heartRate", "--json"])
        #expect(kept.lines.count > 100)
        let missing = try ingestd(["import", directory.appendingPathComponent("nothing.zip").path])
        #expect(missing.status == 66)
    }
}
