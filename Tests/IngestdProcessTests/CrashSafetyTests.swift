import Foundation
import Testing

/// Runs the built `ingestd` binary as a child process.
enum IngestdBinary {
    /// `ingestd` next to the test bundle (SwiftPM builds all products into the same directory).
    static var url: URL? {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for directory in candidates {
            let binary = directory.appendingPathComponent("ingestd")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return nil
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the binary to its end; one that is still running after `limit` seconds (a hang is a
    /// failure, not a stuck test run) is killed and its status shows it.
    static func run(_ arguments: [String], limit: TimeInterval = 120) throws -> Output {
        let process = try start(arguments)
        let watched = process.process
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
            if watched.isRunning { kill(watched.processIdentifier, SIGKILL) }
        }
        let out = process.standardOutputData()
        let err = process.standardErrorData()
        process.process.waitUntilExit()
        return Output(status: process.process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                      stderr: String(decoding: err, as: UTF8.self))
    }

    final class Running {
        let process: Process
        let out = Pipe()
        let err = Pipe()
        init(process: Process) { self.process = process }
        func standardOutputData() -> Data { out.fileHandleForReading.readDataToEndOfFile() }
        func standardErrorData() -> Data { err.fileHandleForReading.readDataToEndOfFile() }
    }

    static func start(_ arguments: [String]) throws -> Running {
        let binary = try #require(url, "the ingestd binary was not built next to the tests")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let running = Running(process: process)
        process.standardOutput = running.out
        process.standardError = running.err
        try process.run()
        return running
    }
}

@Suite(.serialized) struct CrashSafetyTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// 40,000 distinct step samples, every fifth with a sync identifier.
    private func writeReplayFile(count: Int) throws -> String {
        var text = ""
        text.reserveCapacity(count * 200)
        let base = 1_764_000_000
        for i in 0..<count {
            let start = base + i * 60
            let startText = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(start)))
            let endText = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(start + 60)))
            var line = #"{"type":"stepCount","value":\#(i % 120 + 1),"unit":"count","start":"\#(startText)","end":"\#(endText)","source":"pod""#
            if i % 5 == 0 {
                line += #","metadata":{"HKMetadataKeySyncIdentifier":"pod-\#(i)","HKMetadataKeySyncVersion":1}"#
            }
            text += line + "}\n"
        }
        let path = directory.appendingPathComponent("steps.jsonl").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func killedReplaysThenAFullReplayEndWithExactlyTheExpectedRows() throws {
        let count = 40_000
        let file = try writeReplayFile(count: count)
        let store = directory.appendingPathComponent("health.sqlite").path
        #expect(try IngestdBinary.run(["auth", "grant", "pod", "stepCount", "--store", store]).status == 0)

        // Kill the ingesting process at several points of the replay.
        var killedMidway = 0
        for delay in [0.3, 0.8, 1.5, 2.5] {
            let running = try IngestdBinary.start(["replay", file, "--store", store, "--batch-size", "200"])
            Thread.sleep(forTimeInterval: delay)
            if running.process.isRunning {
                kill(running.process.processIdentifier, SIGKILL)
                killedMidway += 1
            }
            running.process.waitUntilExit()
            _ = running.standardOutputData()
        }
        #expect(killedMidway > 0, "the replay finished before any kill; the test proves nothing")

        let full = try IngestdBinary.run(["replay", file, "--store", store, "--json"])
        #expect(full.status == 0, "\(full.stderr)")
        let sources = try IngestdBinary.run(["sources", "--json", "--store", store])
        #expect(sources.stdout.contains(#""samples":\#(count)"#), "\(sources.stdout)")

        // Replaying again changes nothing: everything is a duplicate.
        let again = try IngestdBinary.run(["replay", file, "--store", store, "--json"])
        #expect(again.stdout == #"{"type":"HKQuantityTypeIdentifierStepCount","written":0,"duplicate":\#(count),"replaced":0,"denied":0,"invalid":0}"# + "\n")
        try? FileManager.default.removeItem(at: directory)
    }
}
