import Foundation
import TestSupport
import Testing

@Suite(.serialized, .offCooperativePool) struct DaemonTests {
    private func storePath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-daemon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("health.sqlite").path
    }

    /// Starts the daemon, waits until it logged its start, sends `signal`, and measures the exit.
    private func stopWith(_ signal: Int32, arguments: [String]) throws -> (status: Int32, seconds: Double, log: String) {
        let running = try IngestdProcess.start(arguments)
        // Wait for the start line.
        let errorHandle = running.err.fileHandleForReading
        var log = ""
        let started = Date()
        // Up to 60 s (a loaded machine starts slowly): a signal before the start line would time the
        // start-up too, not the stop.
        while !log.contains("started"), Date().timeIntervalSince(started) < 60 {
            let chunk = errorHandle.availableData
            if chunk.isEmpty { break }
            log += String(decoding: chunk, as: UTF8.self)
        }
        try #require(log.contains("started"), "the daemon did not log its start within 60 s: \(log)")
        Thread.sleep(forTimeInterval: 0.3)
        let sent = Date()
        kill(running.process.processIdentifier, signal)
        running.process.waitUntilExit()
        let seconds = Date().timeIntervalSince(sent)
        log += String(decoding: errorHandle.readDataToEndOfFile(), as: UTF8.self)
        return (running.process.terminationStatus, seconds, log)
    }

    @Test func sigtermStopsTheDaemonWithinTwoSecondsAndExitsZero() throws {
        let (status, seconds, log) = try stopWith(SIGTERM, arguments: ["run", "--no-ble", "--store", try storePath()])
        #expect(status == 0, "\(log)")
        #expect(seconds < 2, "took \(seconds) s")
        #expect(log.contains("SIGTERM received"))
    }

    @Test func withoutBluetoothTheDaemonSaysSoOnceAndKeepsRunning() throws {
        let (status, _, log) = try stopWith(SIGINT, arguments: ["--store", try storePath()])
        #expect(status == 0, "\(log)")
        let bluetoothLines = log.split(separator: "\n").filter { $0.contains("Bluetooth LE unavailable") || $0.contains("scanning on hci") }
        #expect(bluetoothLines.count == 1, "\(log)")
        #expect(log.contains("backends: usb, ble"))
    }

    @Test func onceExitsByItself() throws {
        let result = try IngestdProcess.runBlocking(["run", "--once", "--listen", "0.5", "--store", try storePath()])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("stopped:"))
    }
}
