import Foundation
import TestSupport
import Testing

@Suite(.serialized, .offCooperativePool) struct CrashSafetyTests {
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
        #expect(try IngestdProcess.runBlocking(["auth", "grant", "pod", "stepCount", "--store", store]).status == 0)

        // Kill the ingesting process at several points of the replay.
        var killedMidway = 0
        for delay in [0.3, 0.8, 1.5, 2.5] {
            let running = try IngestdProcess.start(["replay", file, "--store", store, "--batch-size", "200"])
            Thread.sleep(forTimeInterval: delay)
            if running.process.isRunning {
                kill(running.process.processIdentifier, SIGKILL)
                killedMidway += 1
            }
            running.process.waitUntilExit()
            _ = running.standardOutputData()
        }
        #expect(killedMidway > 0, "the replay finished before any kill; the test proves nothing")

        let full = try IngestdProcess.runBlocking(["replay", file, "--store", store, "--json"])
        #expect(full.status == 0, "\(full.stderr)")
        let sources = try IngestdProcess.runBlocking(["sources", "--json", "--store", store])
        #expect(sources.stdout.contains(#""samples":\#(count)"#), "\(sources.stdout)")

        // Replaying again changes nothing: everything is a duplicate.
        let again = try IngestdProcess.runBlocking(["replay", file, "--store", store, "--json"])
        #expect(again.stdout == #"{"type":"HKQuantityTypeIdentifierStepCount","written":0,"duplicate":\#(count),"replaced":0,"denied":0,"invalid":0,"held":0}"# + "\n")
        try? FileManager.default.removeItem(at: directory)
    }
}
