import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A run of the built `ingestd` whose output goes to files and whose peak resident set (VmHWM in
/// /proc/PID/status) is sampled while it runs; a run longer than `limit` seconds is killed.
struct MeasuredRun {
    var status: Int32
    var stdout: String
    var stderr: String
    /// The largest VmHWM seen, in KiB.
    var peakKiB: Int
    var timedOut: Bool

    static func run(_ arguments: [String], in directory: URL, limit: TimeInterval = 120,
                    environment: [String: String] = [:]) throws -> MeasuredRun {
        let binary = URL(fileURLWithPath: try IngestdProcess.path())
        let outURL = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let errURL = directory.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let pid = process.processIdentifier
        let deadline = Date().addingTimeInterval(limit)
        var peak = 0
        var timedOut = false
        while process.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                peak = max(peak, kib)
            }
            if Date() > deadline {
                timedOut = true
                kill(pid, SIGKILL)
                break
            }
            usleep(20_000)
        }
        process.waitUntilExit()
        return MeasuredRun(status: process.terminationStatus,
                           stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                           stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "",
                           peakKiB: peak, timedOut: timedOut)
    }
}

/// Issue 10: untrusted input must neither crash ingestd nor make it buffer without bound. Each test runs the
/// real binary; memory is the peak resident set read from /proc, compared with a small replay's.
@Suite(.serialized, .offCooperativePool) struct HostileInputTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var store: String { directory.appendingPathComponent("health.sqlite").path }

    static func stepLine(_ minute: Int) -> String {
        let start = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(1_764_000_000 + minute * 60)))
        let end = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(1_764_000_000 + minute * 60 + 60)))
        return #"{"type":"stepCount","value":\#(minute + 1),"unit":"count","start":"\#(start)","end":"\#(end)","source":"pod"}"#
    }

    /// The peak resident set of a replay of two good lines: what any replay needs.
    func baselinePeakKiB() throws -> Int {
        let path = directory.appendingPathComponent("baseline.jsonl").path
        try (Self.stepLine(0) + "\n" + Self.stepLine(1) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let run = try MeasuredRun.run(["replay", path, "--store", directory.appendingPathComponent("baseline.sqlite").path],
                                      in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        return run.peakKiB
    }

    /// Finding 5: a 32 MB line was buffered whole (and scanned quadratically); now it is skipped in bounded memory,
    /// reported with its line number and length, and the good lines around it are stored.
    @Test func aHugeLineIsSkippedInBoundedMemoryAndTheGoodLinesAreStored() throws {
        let baseline = try baselinePeakKiB()
        let path = directory.appendingPathComponent("huge.jsonl").path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.write(contentsOf: Data((Self.stepLine(0) + "\n").utf8))
        let block = Data(repeating: 0x61, count: 1 << 20)
        try file.write(contentsOf: Data(#"{"type":"stepCount","note":""#.utf8))
        for _ in 0..<32 { try file.write(contentsOf: block) }
        try file.write(contentsOf: Data("\"}\n".utf8))
        for minute in 1...3 { try file.write(contentsOf: Data((Self.stepLine(minute) + "\n").utf8)) }
        try file.close()
        let hugeLength = 28 + 32 * (1 << 20) + 2

        let grant = try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store])
        #expect(grant.status == 0)
        let run = try MeasuredRun.run(["replay", path, "--store", store], in: directory)
        #expect(!run.timedOut)
        #expect(run.status == 65)
        #expect(run.stderr.contains("error: \(path):2: line of \(hugeLength) bytes is longer than the limit of 1048576 bytes; skipped"),
                "\(run.stderr)")
        let samples = try IngestdProcess.runBlocking(["samples", "stepCount", "--json", "--store", store])
        #expect(samples.stdout.split(separator: "\n").count == 4, "the good lines before and after it are stored")
        #expect(run.peakKiB - baseline < 16 * 1024, "peak \(run.peakKiB) KiB, a small replay \(baseline) KiB")
    }

    /// Finding 5: `ingestd replay /dev/zero` never ended; now it gives up with a clear error in bounded memory.
    @Test func replayOfAnEndlessLineEndsWithAnError() throws {
        let baseline = try baselinePeakKiB()
        let run = try MeasuredRun.run(["replay", "/dev/zero", "--store", store], in: directory, limit: 300)
        #expect(!run.timedOut)
        #expect(run.status == 65)
        #expect(run.stderr.contains("error: /dev/zero:1: no newline in 1073741824 bytes (the line limit is 1048576 bytes); the rest of the file is not read"),
                "\(run.stderr)")
        #expect(run.peakKiB - baseline < 16 * 1024, "peak \(run.peakKiB) KiB, a small replay \(baseline) KiB")
    }

    /// Findings 1 and 2 through the command line and through a replayed line: a typed error, never a crash.
    @Test func hostileUnitsAreRejectedNotFatal() throws {
        let minimum = try IngestdProcess.runBlocking(["units", "convert", "1", "m^-9223372036854775808", "m"])
        #expect(minimum.status == 65, "\(minimum.stderr)")
        #expect(minimum.stderr.contains("exponent \"-9223372036854775808\" is out of range (-64...64)"), "\(minimum.stderr)")
        let deep = String(repeating: "(", count: 20_000) + "m" + String(repeating: ")", count: 20_000)
        let nested = try IngestdProcess.runBlocking(["units", "convert", "1", deep, "m"])
        #expect(nested.status == 65, "\(nested.stderr)")
        #expect(nested.stderr.contains("parentheses nested deeper than 32 levels at position 33"), "\(nested.stderr)")

        let path = directory.appendingPathComponent("units.jsonl").path
        let lines = [
            Self.stepLine(0),
            Self.stepLine(1).replacingOccurrences(of: #""unit":"count""#, with: #""unit":"count^-9223372036854775808""#),
            Self.stepLine(2).replacingOccurrences(of: #""unit":"count""#, with: "\"unit\":\"\(deep)\""),
            Self.stepLine(3),
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        _ = try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store])
        let replay = try IngestdProcess.runBlocking(["replay", path, "--store", store])
        #expect(replay.status == 65, "\(replay.stderr)")
        let samples = try IngestdProcess.runBlocking(["samples", "stepCount", "--json", "--store", store])
        #expect(samples.stdout.split(separator: "\n").count == 2, "\(replay.stderr)")
    }

    /// Finding 6: everything a plugin printed after its input ended was held until it exited (a flood grew ingestd
    /// to ~190 MB); now it is committed in batches while the plugin waits on back-pressure. What it printed is
    /// stored and the peak resident set stays near a small replay's.
    @Test func aFloodingPluginIsCommittedInBatchesInBoundedMemory() throws {
        let baseline = try baselinePeakKiB()
        let plugins = directory.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        // The flooding plugin of the external-adapter tests: distinct step samples as fast as it can.
        let plugin = plugins.appendingPathComponent("ingestd-adapter-flood-samples").path
        try ExecutableFile.copy(Fixtures.path("ExternalAdaptersTests/Plugins/sample-flood.py"), to: plugin)
        let capture = Fixtures.path("AdapterTests/Captures/xiaomi-scale/mi-scale-v1.btsnoop")
        #expect(try IngestdProcess.runBlocking(["auth", "grant", "flood-samples", "stepCount", "--store", store]).status == 0)

        let run = try MeasuredRun.run(["replay", capture, "--plugins", plugins.path, "--adapter", "flood-samples",
                                       "--store", store], in: directory, limit: 600,
                                      environment: ["SAMPLE_FLOOD_COUNT": "100000"])
        #expect(!run.timedOut)
        #expect(run.status == 0, "\(run.stderr)")
        // A debug build may not take all 100,000 before the plugin's time to exit runs out (it is then killed, with a
        // warning); every sample ingestd accepted from it is stored.
        let accepted = try #require(run.stderr.split(separator: "\n").first { $0.hasPrefix("  samples stepCount: ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }, "\(run.stderr)")
        #expect(accepted >= 5000, "\(run.stderr)")
        let stats = try IngestdProcess.runBlocking(["stats", "stepCount", "--sum", "--store", store, "--json"])
        let expectedSum = (0..<accepted).reduce(0) { $0 + $1 % 100 + 1 }
        #expect(stats.stdout.contains("\"value\":\(expectedSum),"), "\(accepted) samples: \(stats.stdout) \(run.stderr)")
        #expect(run.peakKiB - baseline < 24 * 1024, "peak \(run.peakKiB) KiB, a small replay \(baseline) KiB")
    }
}

/// Files of the tests.
enum Fixtures {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/<folder>/...`.
    static func path(_ relative: String) -> String { tests.appendingPathComponent(relative).path }
}
