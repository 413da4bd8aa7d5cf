import Foundation
import SQLiteStore
import Testing
import TestSupport

/// `ingestd export` as a process: options, files, and a large export in bounded memory.
@Suite(.offCooperativePool) struct ExportProcessTests {
    @Test func openScaleExportToAFile() throws {
        let temp = try mixedStore()
        let out = temp.directory.appendingPathComponent("scale.csv").path
        let run = try IngestdProcess.runBlocking(["export", "--format", "csv", "--layout", "openscale", "--tz", "UTC",
                                                  "--types", "bodyMass,bodyFatPercentage", "--out", out, "--store", temp.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("exported 2 rows as csv to \(out)"))
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(parseCSV(text) == [
            ["dateTime", "weight", "fat", "water", "muscle", "lbm", "bone", "visceralFat", "waist", "comment"],
            ["29.11.2026 08:00", "72.35", "21.5", "", "", "", "", "", "", "ingestd xiaomi-scale"],
            ["29.11.2026 08:05", "72.57", "", "", "", "", "", "", "", "ingestd gatt-weight-scale"],
        ])
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600, "health data is written 0600")
        #expect(!FileManager.default.fileExists(atPath: out + ".partial"))
    }

    @Test func fhirOnStdoutListsTheSkippedTypes() throws {
        let temp = try mixedStore()
        let run = try IngestdProcess.runBlocking(["export", "--format", "fhir", "--from", "2026-11-29T09:00:00Z",
                                                  "--store", temp.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("{\"resourceType\":\"Bundle\",\"type\":\"transaction\",\"entry\":["))
        #expect(run.stderr.contains("exported 5 records as fhir"))
        #expect(run.stderr.contains("skipped 1 sample (no LOINC code): HKQuantityTypeIdentifierFlightsClimbed 1"))
        let result = try FHIRValidator.validate(run.stdout)
        #expect(result.valid, "\(result.complaint)")
    }

    @Test func bloodPressureInTypesSelectsTheCorrelation() throws {
        let temp = try mixedStore()
        let run = try IngestdProcess.runBlocking(["export", "--format", "jsonl", "--types", "bloodPressure", "--store", temp.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 1)
        #expect(run.stdout.hasPrefix("{\"correlation\":\"HKCorrelationTypeIdentifierBloodPressure\",\"uuid\":\"\(FixtureID.pressure.uuidString)\""))
    }

    @Test(arguments: [
        (["--format", "xml"], "--format"),
        (["--format", "fhir", "--layout", "openscale"], "--layout is for --format csv only"),
        (["--format", "jsonl", "--types", "stepCount,nosuchType"], "unknown quantity type \"nosuchType\""),
        (["--format", "jsonl", "--from", "2026-11-30", "--to", "2026-11-29"], "--from must be before --to"),
    ])
    func badOptionsAreUsageErrors(arguments: [String], message: String) throws {
        let temp = try mixedStore()
        let run = try IngestdProcess.runBlocking(["export"] + arguments + ["--store", temp.path])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func anUnwritableOutputFailsAndLeavesNothingBehind() throws {
        let temp = try mixedStore()
        let out = temp.directory.appendingPathComponent("no-such-directory/export.jsonl").path
        let run = try IngestdProcess.runBlocking(["export", "--format", "jsonl", "--out", out, "--store", temp.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("error: cannot write '\(out).partial': No such file or directory"), "\(run.stderr)")
    }

    /// Peak resident set (VmHWM, kB) of `ingestd export --format FORMAT` on a store with `extra`
    /// heart-rate samples added to the mixed ones, output to /dev/null; and the export's summary line.
    func peakKilobytes(format: String, extra: Int) throws -> (kilobytes: Int, stderr: String) {
        let temp = try mixedStore()
        let connection = try Connection(path: temp.path, mode: .readWrite)
        try connection.execute(sql: """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(extra))
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id, person)
            SELECT randomblob(16), (SELECT id FROM types WHERE identifier = 'HKQuantityTypeIdentifierHeartRate'),
                   1 + (i % 100) / 100.0, 1.6e9 + i * 60.0, 1.6e9 + i * 60.0,
                   (SELECT id FROM sources WHERE name = 'watch'), (SELECT MIN(id) FROM devices), '',
                   (SELECT MIN(id) FROM people)
            FROM n
            """)
        connection.close()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try IngestdProcess.path())
        process.arguments = ["export", "--format", format, "--store", temp.path]
        process.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        process.standardError = err
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        let stderr = PipeReader(err.fileHandleForReading)
        let statusPath = "/proc/\(process.processIdentifier)/status"
        var peak = 0
        let deadline = Date().addingTimeInterval(600)
        // VmHWM only grows: the last reading before the process ends is its peak (to within one poll).
        while finished.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if let status = try? String(contentsOfFile: statusPath, encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                peak = max(peak, kilobytes)
            }
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("export of \(extra) samples did not finish in 600 s")
                break
            }
        }
        _ = finished.wait(timeout: .now() + 5)
        #expect(process.terminationStatus == 0)
        return (peak, stderr.text())
    }

    @Test func aLargeExportRunsInBoundedMemory() throws {
        // 300,000 samples (about 200 MB of FHIR JSON) against 1,000: the peak may not grow with the size.
        let small = try peakKilobytes(format: "fhir", extra: 1_000)
        let large = try peakKilobytes(format: "fhir", extra: 300_000)
        #expect(small.stderr.contains("exported 1011 records as fhir"), "\(small.stderr)")
        #expect(large.stderr.contains("exported 300011 records as fhir"), "\(large.stderr)")
        print("export peak RSS: \(small.kilobytes) kB for 1,012 records, \(large.kilobytes) kB for 300,012")
        #expect(small.kilobytes > 0 && large.kilobytes > 0, "VmHWM was read from /proc")
        #expect(large.kilobytes - small.kilobytes < 16 * 1024, "peak grew by \(large.kilobytes - small.kilobytes) kB")
    }
}
