import Foundation
import Testing
import TestSupport

/// Issue 10 (findings 3, 4, 7, 9, 10), driven through the built binary as a user would.
@Suite(.serialized, .offCooperativePool) struct HostileCLITests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
    }

    private var store: String { directory.appendingPathComponent("health.sqlite").path }

    private func file(_ name: String, _ lines: [String]) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A step sample line; `extra` is appended inside the object (e.g. `,"uuid":"…"`).
    private func steps(_ value: Int, minute: Int, source: String = "pod", extra: String = "") -> String {
        let base = 1_793_520_000.0  // 2026-11-01T08:00:00Z
        let formatter = ISO8601DateFormatter()
        let start = formatter.string(from: Date(timeIntervalSince1970: base + Double(minute) * 60))
        let end = formatter.string(from: Date(timeIntervalSince1970: base + Double(minute) * 60 + 30))
        return #"{"type":"stepCount","value":\#(value),"unit":"count","start":"\#(start)","end":"\#(end)","source":"\#(source)"\#(extra)}"#
    }

    private func grant() throws {
        let result = try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store])
        try #require(result.status == 0, "\(result.stderr)")
    }

    private func storedSamples() throws -> Int {
        let result = try IngestdProcess.runBlocking(["samples", "stepCount", "--json", "--store", store])
        return result.stdout.split(separator: "\n").count
    }

    private func errorLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.hasPrefix("error:") }
    }

    // MARK: Finding 3: SIGPIPE

    @Test func replayWithItsOutputClosedStoresEveryGoodLine() throws {
        try grant()
        let lines = ["not json"] + (0..<2500).map { steps($0 % 100 + 1, minute: $0) }
        let path = try file("steps.jsonl", lines)
        let binary = URL(fileURLWithPath: try IngestdProcess.path())
        let process = Process()
        process.executableURL = binary
        process.arguments = ["replay", path, "--store", store]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // The reader goes away at once, like `| head -c 10` after ten bytes.
        try pipe.fileHandleForReading.close()
        waitBounded(process)
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 65)
        #expect(try storedSamples() == 2500)
    }

    @Test func daemonSurvivesAClosedStandardError() throws {
        let binary = URL(fileURLWithPath: try IngestdProcess.path())
        let process = Process()
        process.executableURL = binary
        process.arguments = ["run", "--no-ble", "--store", store]
        let pipe = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = pipe
        try pipe.fileHandleForReading.close()
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // The lock file names the daemon once it has opened the store and is about to log "started".
        let lock = store + ".lock"
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, (try? String(contentsOfFile: lock, encoding: .utf8))?.contains("\(process.processIdentifier)") != true {
            Thread.sleep(forTimeInterval: 0.05)
        }
        Thread.sleep(forTimeInterval: 0.3)
        kill(process.processIdentifier, SIGHUP)  // logs a line: the daemon must keep running
        Thread.sleep(forTimeInterval: 0.3)
        #expect(process.isRunning, "the daemon died on a log line")
        kill(process.processIdentifier, SIGTERM)
        waitBounded(process)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test func watchEndsWhenItsReaderGoes() throws {
        try grant()
        let binary = URL(fileURLWithPath: try IngestdProcess.path())
        let process = Process()
        process.executableURL = binary
        process.arguments = ["watch", "--interval", "50", "--store", store]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try pipe.fileHandleForReading.close()
        // Commits until watch has something to print, and finds nobody reading it.
        var minute = 0
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline {
            _ = try IngestdProcess.runBlocking(["replay", try file("w\(minute).jsonl", [steps(5, minute: minute)]), "--store", store])
            minute += 1
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(!process.isRunning, "watch kept running with nobody reading its output")
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        waitBounded(process)
        #expect(process.terminationReason == .exit)
    }

    // MARK: Finding 4: silent drops

    @Test func emptySyncIdentifierIsRejectedWithItsLine() throws {
        try grant()
        let empty = #","metadata":{"HKMetadataKeySyncIdentifier":""}"#
        let path = try file("empty-sync.jsonl", [steps(10, minute: 1, extra: empty), steps(20, minute: 2, extra: empty)])
        let result = try IngestdProcess.runBlocking(["replay", path, "--store", store])
        #expect(result.status == 65)
        #expect(errorLines(result.stderr).count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("empty-sync.jsonl:1:"))
        #expect(result.stderr.contains("empty-sync.jsonl:2:"))
        #expect(result.stderr.contains("HKMetadataKeySyncIdentifier"))
        #expect(try storedSamples() == 0)
    }

    @Test func uuidReusedForDifferentContentIsAConflictNotADuplicate() throws {
        try grant()
        let uuid = #","uuid":"4E8A5E8E-5F7C-4C4F-9C3B-7C3A2B1D0E9F""#
        let path = try file("uuids.jsonl", [steps(10, minute: 1, extra: uuid), steps(11, minute: 1, extra: uuid),
                                            steps(10, minute: 1, extra: uuid)])
        let result = try IngestdProcess.runBlocking(["replay", path, "--store", store, "--json"])
        #expect(result.status == 65)
        #expect(result.stdout.contains(#""written":1,"duplicate":1,"replaced":0,"denied":0,"invalid":1"#), "\(result.stdout)")
        let errors = errorLines(result.stderr)
        #expect(errors.count == 1, "\(result.stderr)")
        #expect(errors.first?.contains("uuids.jsonl:2: uuid 4E8A5E8E-5F7C-4C4F-9C3B-7C3A2B1D0E9F") == true)

        // The same uuid with the same content is a plain duplicate: exit 0.
        let again = try IngestdProcess.runBlocking(["replay", try file("same.jsonl", [steps(10, minute: 1, extra: uuid)]), "--store", store])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try storedSamples() == 1)
    }

    // MARK: Finding 10: exit codes and messages

    @Test func anyRejectedLineExitsSixtyFiveAndTheGoodLinesAreStored() throws {
        try grant()
        let path = try file("mixed.jsonl", [steps(10, minute: 1), steps(99_999_999, minute: 2), steps(12, minute: 3)])
        let result = try IngestdProcess.runBlocking(["replay", path, "--store", store])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("out-of-range"))
        #expect(try storedSamples() == 2)
    }

    @Test func aMalformedLineGivesExactlyOneErrorLine() throws {
        try grant()
        let path = try file("one-bad.jsonl", [steps(10, minute: 1), "{", steps(12, minute: 3)])
        let result = try IngestdProcess.runBlocking(["replay", path, "--store", store])
        #expect(result.status == 65)
        #expect(errorLines(result.stderr).count == 1, "\(result.stderr)")
        #expect(try storedSamples() == 2)
    }

    @Test func optionsThatMakeNoSenseAreUsageErrors() throws {
        try grant()
        let cases: [[String]] = [
            ["stats", "stepCount", "--sum", "--by", "day", "--from", "0001-01-01", "--to", "9999-12-31"],
            ["watch", "--count", "-1"],
            ["watch", "--since", "-1"],
            ["auth", "grant", "", "stepCount"],
            ["auth", "grant", "a\tb", "stepCount"],
            ["priority", "stepCount", ""],
            ["profile", "set", "--date-of-birth", "9999-01-01"],
            ["capture", "--out", ""],
        ]
        for arguments in cases {
            let result = try IngestdProcess.runBlocking(arguments + (arguments[0] == "capture" ? [] : ["--store", store]))
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            #expect(errorLines(result.stderr).count == 1, "\(arguments): \(result.stderr)")
        }
    }

    @Test func decodeOfADirectoryIsAMissingInputLikeReplay() throws {
        let decode = try IngestdProcess.runBlocking(["decode", directory.path])
        let replay = try IngestdProcess.runBlocking(["replay", directory.path, "--store", store])
        #expect(decode.status == 66, "\(decode.stderr)")
        #expect(replay.status == 66, "\(replay.stderr)")
        #expect(decode.stderr.contains("is a directory"))
    }

    @Test func decodeReadsAFIFOAsAStream() throws {
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CaptureFormatsTests/Captures/dsd6_btsnoop_hci.log").path
        let direct = try IngestdProcess.runBlocking(["decode", capture])
        try #require(direct.status == 0, "\(direct.stderr)")
        let fifo = directory.appendingPathComponent("capture.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: capture))
        let writer = Thread {
            if let handle = FileHandle(forWritingAtPath: fifo) {
                try? handle.write(contentsOf: bytes)
                try? handle.close()
            }
        }
        writer.start()
        let streamed = try IngestdProcess.runBlocking(["decode", fifo])
        #expect(streamed.status == 0, "\(streamed.stderr)")
        #expect(streamed.stderr.contains("571 records"), "\(streamed.stderr)")
        #expect(streamed.stdout == direct.stdout)
    }

    @Test func syncVersionInt64MaxIsKeptExactly() throws {
        try grant()
        let metadata = #","metadata":{"HKMetadataKeySyncIdentifier":"reading-1","HKMetadataKeySyncVersion":9223372036854775807}"#
        let path = try file("max.jsonl", [steps(10, minute: 1, extra: metadata)])
        let result = try IngestdProcess.runBlocking(["replay", path, "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        let samples = try IngestdProcess.runBlocking(["samples", "stepCount", "--json", "--store", store])
        #expect(samples.stdout.contains(#""HKMetadataKeySyncVersion":9223372036854775807"#), "\(samples.stdout)")
    }

    @Test func aSourceWithAControlCharacterIsRejected() throws {
        try grant()
        let path = try file("nul.jsonl", [steps(10, minute: 1, source: #"po\u0000d"#), steps(11, minute: 2)])
        let result = try IngestdProcess.runBlocking(["replay", path, "--store", store])
        #expect(result.status == 65)
        #expect(result.stderr.contains("nul.jsonl:1: source contains the control character U+0000"), "\(result.stderr)")
        #expect(!result.stderr.contains("allow with"))
        #expect(try storedSamples() == 1)
    }

    // MARK: Finding 9: one daemon per store

    @Test func aSecondDaemonOnTheSameStoreNamesTheFirstAndExits() throws {
        let first = try IngestdProcess.start(["run", "--no-ble", "--store", store])
        defer {
            kill(first.process.processIdentifier, SIGTERM)
            waitBounded(first.process)
        }
        let handle = first.err.fileHandleForReading
        var log = ""
        let deadline = Date().addingTimeInterval(10)
        while !log.contains("started"), Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            log += String(decoding: chunk, as: UTF8.self)
        }
        let second = try IngestdProcess.runBlocking(["run", "--no-ble", "--once", "--listen", "0.2", "--store", store])
        #expect(second.status == 1)
        #expect(second.stderr.contains("PID \(first.process.processIdentifier)"), "\(second.stderr)")
        #expect(first.process.isRunning)
    }
}

/// Issue 10 findings 7 and 10: store files and the user's access to them. Runs the binary as
/// `nobody` when the tests run as root (root ignores file modes).
@Suite(.serialized, .offCooperativePool) struct StoreAccessTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
    }

    /// Runs the binary as an unprivileged user: `nobody` through setpriv when we are root.
    private func runUnprivileged(_ arguments: [String]) throws -> IngestdProcess.Output {
        guard getuid() == 0 else { return try IngestdProcess.runBlocking(arguments) }
        let binary = URL(fileURLWithPath: try IngestdProcess.path())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        waitBounded(process)
        return IngestdProcess.Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                                    stderr: String(decoding: stderr, as: UTF8.self))
    }

    private func mode(_ path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test func aStoreTheUserMayNotOpenSaysPermissionDenied() throws {
        let store = directory.appendingPathComponent("health.sqlite").path
        #expect(try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store]).status == 0)
        if getuid() != 0 { try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: store) }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store) }
        let result = try runUnprivileged(["sources", "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr.contains("permission denied"), "\(result.stderr)")
    }

    @Test func readOnlyQueriesWorkInAReadOnlyDirectory() throws {
        let storeDirectory = directory.appendingPathComponent("ro")
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let store = storeDirectory.appendingPathComponent("health.sqlite").path
        #expect(try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store]).status == 0)
        let line = #"{"type":"stepCount","value":42,"unit":"count","start":"2026-11-01T10:00:00Z","end":"2026-11-01T10:01:00Z","source":"pod"}"#
        let input = directory.appendingPathComponent("one.jsonl").path
        try (line + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        #expect(try IngestdProcess.runBlocking(["replay", input, "--store", store]).status == 0)
        if getuid() == 0 {
            // The store belongs to the user, the directory (root's, 0755) does not.
            #expect(chown(store, 65534, 65534) == 0)
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: storeDirectory.path)
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: storeDirectory.path) }
        let result = try runUnprivileged(["samples", "stepCount", "--json", "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""value":42"#), "\(result.stdout)")
    }

    @Test func aLooseStoreTheUserOwnsIsTightenedWithItsJournalFiles() throws {
        let store = directory.appendingPathComponent("health.sqlite").path
        #expect(try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: store)
        let line = #"{"type":"stepCount","value":42,"unit":"count","start":"2026-11-01T10:00:00Z","end":"2026-11-01T10:01:00Z","source":"pod"}"#
        let input = directory.appendingPathComponent("one.jsonl").path
        try (line + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        // A daemon keeps the -wal and -shm while it runs: hold them open with a watch.
        let watcher = try IngestdProcess.start(["watch", "--store", store])
        defer {
            kill(watcher.process.processIdentifier, SIGTERM)
            waitBounded(watcher.process)
        }
        #expect(try IngestdProcess.runBlocking(["replay", input, "--store", store]).status == 0)
        #expect(try mode(store) == 0o600)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: store + suffix) {
            #expect(try mode(store + suffix) == 0o600, "\(suffix)")
        }
    }
}

/// Waits for `process` to end, killing it after `limit` seconds: a hang fails the test instead
/// of sticking the run.
func waitBounded(_ process: Process, limit: TimeInterval = 60) {
    DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    process.waitUntilExit()
}
