import Foundation
import Testing
import TestSupport

/// Issue 23 (findings 2, 4, 13, 14, 18, 19 and the smaller ones: durations, `--store DIR`,
/// the unknown-person list), driven through the built binary as a user would.
@Suite(.serialized, .offCooperativePool) struct HostileOutputTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
    }

    private var store: String { directory.appendingPathComponent("health.sqlite").path }

    private func ingestd(_ arguments: [String], limit: TimeInterval = 60) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", store], limit: limit)
    }

    /// `count` granted step samples of source `pod`, one a minute.
    private func storeSteps(_ count: Int) throws {
        let formatter = ISO8601DateFormatter()
        let lines = (0..<count).map { minute -> String in
            let start = formatter.string(from: Date(timeIntervalSince1970: 1_793_520_000 + Double(minute) * 60))
            let end = formatter.string(from: Date(timeIntervalSince1970: 1_793_520_030 + Double(minute) * 60))
            return #"{"type":"stepCount","value":\#(minute % 90 + 1),"unit":"count","start":"\#(start)","end":"\#(end)","source":"pod"}"#
        }
        let path = directory.appendingPathComponent("steps.jsonl").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try #require(try ingestd(["auth", "grant", "pod", "stepCount"]).status == 0)
        let replay = try ingestd(["replay", path])
        try #require(replay.status == 0, "\(replay.stderr)")
    }

    /// Runs the binary with stdout on `/dev/full` (every write fails with ENOSPC).
    private func runToFullDisk(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try IngestdProcess.path())
        process.arguments = arguments + ["--store", store]
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        process.standardOutput = full
        let err = Pipe()
        process.standardError = err
        try process.run()
        let stderr = PipeReader(err.fileHandleForReading)
        waitBounded(process)
        return (process.terminationStatus, stderr.text())
    }

    // MARK: Finding 2: counts that allocate by their value

    @Test func aHugeBatchSizeIsAUsageErrorWithTheRange() throws {
        let input = directory.appendingPathComponent("one.jsonl").path
        try "\n".write(toFile: input, atomically: true, encoding: .utf8)
        for value in ["100000000", "2147483648", "0"] {
            for command in [["replay", input], ["import", input]] {
                let result = try ingestd(command + ["--batch-size", value])
                #expect(result.status == 64, "\(command[0]) \(value): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("invalid value '\(value)' for --batch-size: must be 1...100000"), "\(result.stderr)")
            }
        }
    }

    // MARK: Finding 4

    @Test func runOnceWithoutAnyBackendExits() throws {
        let result = try ingestd(["run", "--once", "--no-usb", "--no-ble", "--listen", "1"], limit: 30)
        #expect(!result.timedOut)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("stopped: 0 written"), "\(result.stderr)")
    }

    // MARK: Finding 13: a full stdout

    @Test func commandsWritingToAFullDiskFailAndSaySo() throws {
        try storeSteps(2000)
        for arguments in [["export", "--format", "jsonl"], ["export", "--format", "csv"], ["samples", "stepCount"],
                          ["samples", "stepCount", "--json"], ["changes", "--json"], ["sources"], ["status"]] {
            let result = try runToFullDisk(arguments)
            #expect(result.status == 1, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("error: cannot write to standard output: No space left on device"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("exported"), "\(arguments): \(result.stderr)")
        }
    }

    // MARK: Finding 14: --out onto something that is not a regular file

    @Test func exportOutRefusesAFIFOAndASymlinkToADevice() throws {
        try storeSteps(3)
        let fifo = directory.appendingPathComponent("out.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let null = directory.appendingPathComponent("null").path
        try FileManager.default.createSymbolicLink(atPath: null, withDestinationPath: "/dev/null")
        let cases = [(fifo, "is a FIFO, not a regular file"), (null, "is a symbolic link to a character device, not a regular file"),
                     (directory.path, "is a directory, not a regular file")]
        for (target, reason) in cases {
            let result = try ingestd(["export", "--format", "jsonl", "--out", target], limit: 20)
            #expect(result.status == 64, "\(target): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("invalid value '\(target)' for --out: \(reason)"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target + ".partial"))
        }
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        #expect(lstat(null, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the symlink is still a symlink")
        // A regular file is replaced as before.
        let file = directory.appendingPathComponent("export.jsonl").path
        try "old\n".write(toFile: file, atomically: true, encoding: .utf8)
        let replaced = try ingestd(["export", "--format", "jsonl", "--out", file])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").count == 3)
    }

    // MARK: Smaller findings

    @Test func hexAndOddDurationsAreRefused() throws {
        for arguments in [["sinks", "deliver", "--backoff", "0x10"], ["sinks", "deliver", "--backoff", "1e1"],
                          ["run", "--once", "--no-usb", "--no-ble", "--listen", "0x10"], ["run", "--once", "--listen", "inf"]] {
            let result = try ingestd(arguments, limit: 20)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("not a duration such as 30, 0.5, 30s, 15m, 1h or 1d"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func aDirectoryAsTheStoreIsAMissingInput() throws {
        for arguments in [["samples", "stepCount"], ["status"], ["auth", "grant", "pod", "stepCount"]] {
            let result = try IngestdProcess.runBlocking(arguments + ["--store", directory.path])
            #expect(result.status == 66, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("error: cannot open '\(directory.path)': is a directory, not a store file"), "\(result.stderr)")
        }
    }

    @Test func anUnknownPersonListsAFewPeopleAndTheirCount() throws {
        for index in 1...7 {
            let added = try ingestd(["people", "add", "person\(index)"])
            try #require(added.status == 0, "\(added.stderr)")
        }
        let everybody = try ingestd(["people", "list", "--json"]).lines.count
        try #require(everybody == 8, "me and the seven")
        for arguments in [["samples", "stepCount", "--person", "nobody"], ["samples", "stepCount"]] {
            let result = try ingestd(arguments)
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("and 3 more; 'ingestd people list' shows all 8"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").allSatisfy { $0.count < 300 })
        }
    }
}
