import Foundation
import Testing
import TestSupport

/// The configuration file with the built binary (issue 30, "Defaults"): `ingestd today` and
/// `ingestd samples` find the store, time zone and units in the file INGESTD_CONFIG names, as
/// `sudo -u ingestd ingestd today` finds the service's in /etc/ingestd/ingestd.conf; a bad line
/// exits 78 naming the file and line.
@Suite(.serialized, .offCooperativePool) struct ConfigurationProcessTests {
    /// Runs the binary with `environment` added (HOME is the test's directory, never the real one).
    private func ingestd(_ arguments: [String], in directory: URL, environment: [String: String]) throws -> IngestdProcess.Output {
        let variables = ["HOME=\(directory.path)"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try ChildProcess.run("/usr/bin/env", variables + [try IngestdProcess.path()] + arguments, limit: 60, name: "ingestd")
    }

    @Test func todayAndSamplesFindTheStoreInTheConfiguration() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("service/health.sqlite").path
        try FileManager.default.createDirectory(atPath: (store as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let walk = directory.appendingPathComponent("walk.jsonl")
        try (#"{"type":"stepCount","value":4321,"unit":"count","start":"2026-11-29T08:00:00+01:00","end":"2026-11-29T09:00:00+01:00","source":"A"}"#
            + "\n").write(to: walk, atomically: true, encoding: .utf8)
        let configuration = directory.appendingPathComponent("ingestd.conf")
        try "# the service's\nstore = \(store)\ntz = Europe/Berlin\nunits = us\n".write(to: configuration, atomically: true, encoding: .utf8)
        let environment = ["INGESTD_CONFIG": configuration.path]

        #expect(try ingestd(["auth", "grant", "A", "--all"], in: directory, environment: environment).status == 0)
        let replay = try ingestd(["replay", walk.path], in: directory, environment: environment)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(FileManager.default.fileExists(atPath: store))

        let today = try ingestd(["today", "--date", "2026-11-29", "--json"], in: directory, environment: environment)
        #expect(today.status == 0, "\(today.stderr)")
        #expect(today.lines == [#"{"date":"2026-11-29","tz":"Europe/Berlin","steps":4321,"distanceKm":0}"#])
        let samples = try ingestd(["samples", "stepCount", "--json"], in: directory, environment: environment)
        #expect(samples.lines.count == 1 && samples.lines.first?.contains(#""value":4321"#) == true, "\(samples.stdout) \(samples.stderr)")
        let show = try ingestd(["config", "show", "--json"], in: directory, environment: environment)
        #expect(show.lines.first == #"{"key":"store","value":"\#(store)","origin":"file","file":"\#(configuration.path)","line":2}"#)

        // INGESTD_STORE wins over the file; the default store (in the test's HOME) is empty.
        let elsewhere = try ingestd(["samples", "stepCount", "--json"], in: directory,
                                    environment: environment.merging(["INGESTD_STORE": directory.appendingPathComponent("other.sqlite").path]) { $1 })
        #expect(elsewhere.status == 66, "\(elsewhere.stderr)")

        try "store = \(store)\ntz = Mars/Olympus\n".write(to: configuration, atomically: true, encoding: .utf8)
        let bad = try ingestd(["today"], in: directory, environment: environment)
        #expect(bad.status == 78)
        #expect(bad.stderr == "error: \(configuration.path):2: invalid tz \"Mars/Olympus\": not a known IANA time zone\n")
    }
}
