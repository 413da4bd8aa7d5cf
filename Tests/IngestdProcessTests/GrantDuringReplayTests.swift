import Foundation
import TestSupport
import Testing

/// Issue 23, item 9: `auth grant` while a replay of the same source runs, as processes. The
/// grant failed ("UNIQUE constraint failed: types.identifier", rc 1) after saving the grant,
/// leaving the held samples in the pending area of a granted pair: both processes inserted the
/// type row the store had not had when they opened it.
@Suite(.serialized, .offCooperativePool) struct GrantDuringReplayTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-grant-race-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// `count` body masses of source `feed`, a minute apart from `base`.
    private func weighings(_ name: String, count: Int, base: Int) throws -> String {
        var text = ""
        text.reserveCapacity(count * 160)
        for i in 0..<count {
            let time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(base + i * 60)))
            text += #"{"type":"bodyMass","value":\#(60 + Double(i % 400) / 10),"unit":"kg","start":"\#(time)","end":"\#(time)","source":"feed"}"# + "\n"
        }
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aGrantDuringAReplayBringsEverythingIn() throws {
        let held = try weighings("held.jsonl", count: 300, base: 1_700_000_000)
        // Long enough that the replay still runs when the grant comes (30,000 once ended within the 1 s wait beside other
        // suites); the grant comes once the replay has had time to open the store.
        let stream = try weighings("stream.jsonl", count: 60_000, base: 1_720_000_000)
        for trial in 1...2 {
            let store = directory.appendingPathComponent("health-\(trial).sqlite").path
            let first = try IngestdProcess.runBlocking(["replay", held, "--store", store])
            #expect(first.status == 0, "\(first.stderr)")

            let replay = try IngestdProcess.start(["replay", stream, "--store", store, "--batch-size", "100"])
            let output = PipeReader(replay.out.fileHandleForReading)
            let log = PipeReader(replay.err.fileHandleForReading)
            Thread.sleep(forTimeInterval: 0.5)
            let grantedDuringTheReplay = replay.process.isRunning
            let grant = try IngestdProcess.runBlocking(["auth", "grant", "feed", "--all", "--store", store], limit: 120)
            replay.process.waitUntilExit()
            _ = output.text()
            #expect(grantedDuringTheReplay, "trial \(trial): the replay ended before the grant; the test proves nothing")
            #expect(grant.status == 0, "trial \(trial): \(grant.stderr)")
            #expect(replay.process.terminationStatus == 0, "trial \(trial): \(log.text())")

            let pending = try IngestdProcess.runBlocking(["auth", "pending", "--json", "--store", store])
            #expect(pending.status == 0)
            #expect(!pending.stdout.contains("\"feed\""), "trial \(trial): still held: \(pending.stdout)")
            let stored = try IngestdProcess.runBlocking(["samples", "bodyMass", "--json", "--store", store], limit: 120)
            #expect(stored.lines.count == 60_300, "trial \(trial): \(stored.lines.count) stored")
        }
    }
}
