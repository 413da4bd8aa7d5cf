import Foundation
import TestSupport
import Testing

/// `ingestd watch` follows the commit log while another process writes.
@Suite(.serialized, .offCooperativePool) struct WatchTests {
    @Test func watchPrintsOneLinePerCommitAndTypeWrittenByAnotherProcess() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.sqlite").path
        #expect(try IngestdProcess.runBlocking(["auth", "grant", "strap", "--all", "--store", store]).status == 0)
        let first = directory.appendingPathComponent("first.jsonl").path
        try """
            {"type":"heartRate","value":60,"unit":"count/min","start":"2026-11-29T08:00:00Z","end":"2026-11-29T08:00:00Z","source":"strap"}
            {"type":"heartRate","value":61,"unit":"count/min","start":"2026-11-29T08:01:00Z","end":"2026-11-29T08:01:00Z","source":"strap"}
            {"type":"stepCount","value":30,"unit":"count","start":"2026-11-29T08:00:00Z","end":"2026-11-29T08:01:00Z","source":"strap"}
            """.write(toFile: first, atomically: true, encoding: .utf8)
        let second = directory.appendingPathComponent("second.jsonl").path
        try """
            {"type":"bodyMass","value":70,"unit":"kg","start":"2026-11-29T07:00:00Z","end":"2026-11-29T07:00:00Z","source":"strap"}
            """.write(toFile: second, atomically: true, encoding: .utf8)

        // Watch from now on (it sees no earlier commits), three lines, then exit.
        let watch = try IngestdProcess.start(["watch", "--count", "3", "--interval", "50", "--store", store])
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try IngestdProcess.runBlocking(["replay", first, "--store", store]).status == 0)
        #expect(try IngestdProcess.runBlocking(["replay", first, "--store", store]).status == 0)  // duplicates: no commit event
        #expect(try IngestdProcess.runBlocking(["replay", second, "--store", store]).status == 0)
        let deadline = Date().addingTimeInterval(10)
        while watch.process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if watch.process.isRunning { watch.process.terminate() }
        let lines = String(decoding: watch.standardOutputData(), as: UTF8.self).split(separator: "\n").map(String.init)
        // Anchors only grow (ignored duplicate inserts may use up sequence numbers, so gaps are normal).
        let withoutAnchors = lines.map { $0.replacingOccurrences(of: #","anchor":\d+\}"#, with: "}", options: .regularExpression) }
        #expect(withoutAnchors == [
            #"{"type":"HKQuantityTypeIdentifierHeartRate","count":2,"source":"strap"}"#,
            #"{"type":"HKQuantityTypeIdentifierStepCount","count":1,"source":"strap"}"#,
            #"{"type":"HKQuantityTypeIdentifierBodyMass","count":1,"source":"strap"}"#,
        ])
        let anchors = lines.compactMap { line in
            line.range(of: #"\d+(?=\}$)"#, options: .regularExpression).flatMap { Int(line[$0]) }
        }
        #expect(anchors.count == 3 && anchors[0] == 3 && anchors[1] == 3 && anchors[2] > 3)

        // --since replays the log from an anchor: the commit after anchor 3 only.
        let since = try IngestdProcess.runBlocking(["watch", "--since", "3", "--count", "1", "--store", store])
        #expect(since.stdout == lines[2] + "\n")
    }
}
