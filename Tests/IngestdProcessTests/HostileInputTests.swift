import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A run of the built `ingestd` whose output goes to files and whose peak resident set (VmHWM in
/// /proc/PID/status) is sampled while it runs, every 5 ms for its first 200 ms, then every
/// 20 ms; a run longer than `limit` seconds is killed. (`wait4`'s `ru_maxrss` is no substitute:
/// posix_spawn starts the child in the spawning process's memory, and the kernel counts that
/// into the child's peak.) A run that ends before its first sample has `peakKiB` 0.
struct MeasuredRun {
    var status: Int32
    var stdout: String
    var stderr: String
    /// The largest VmHWM seen, in KiB.
    var peakKiB: Int
    var timedOut: Bool

    /// posix_spawn failed.
    struct SpawnError: Error { var errno: Int32 }

    static func run(_ arguments: [String], in directory: URL, limit: TimeInterval = 120,
                    environment: [String: String] = [:]) throws -> MeasuredRun {
        let binary = try IngestdProcess.path()
        let outURL = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let errURL = directory.appendingPathComponent("err-\(UUID().uuidString)")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary, &actions, nil, argv, envp)
        guard spawned == 0 else { throw SpawnError(errno: spawned) }

        let started = Date()
        let deadline = started.addingTimeInterval(limit)
        var peak = 0
        var timedOut = false
        var waitStatus: Int32 = 0
        while true {
            let reaped = waitpid(pid, &waitStatus, WNOHANG)
            if reaped == pid { break }
            if reaped < 0, errno != EINTR { break }
            if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                peak = max(peak, kib)
            }
            if !timedOut, Date() > deadline {
                timedOut = true
                kill(pid, SIGKILL)
            }
            usleep(Date().timeIntervalSince(started) < 0.2 ? 5_000 : 20_000)
        }
        // As Process reports it: the exit code, or the signal that ended the run.
        let signal = waitStatus & 0x7F
        let status = signal == 0 ? (waitStatus >> 8) & 0xFF : signal
        return MeasuredRun(status: status,
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
        // A replay this small may end before its first sample: it is run again (a fresh store
        // each time), up to five times, until one is sampled.
        var run: MeasuredRun?
        for attempt in 1...5 where (run?.peakKiB ?? 0) == 0 {
            let store = directory.appendingPathComponent("baseline-\(attempt).sqlite").path
            run = try MeasuredRun.run(["replay", path, "--store", store], in: directory)
            #expect(run?.status == 0, "\(run?.stderr ?? "")")
        }
        let peak = run?.peakKiB ?? 0
        #expect(peak > 1024, "the small replay's peak was not measured: \(peak) KiB")
        return peak
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
