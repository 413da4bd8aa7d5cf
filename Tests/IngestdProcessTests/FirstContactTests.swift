import Foundation
import Testing
import TestSupport

/// First contact, with the built binary on a real capture: a weighing from a source nobody granted
/// yet is held, not lost; `auth grant` brings it in, `auth deny` discards it.
@Suite(.serialized, .offCooperativePool) struct FirstContactTests {
    let directory: URL
    let store: String
    /// The GATT weight scale capture (three weighings) and its expected decode.
    static let captures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AdapterTests/Captures/gatt-health")
    static let capture = captures.appendingPathComponent("weight-scale.btsnoop").path

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-first-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = directory.appendingPathComponent("health.sqlite").path
    }

    private func ingestd(_ arguments: [String]) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", store])
    }

    private func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }

    private func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// The start times of the capture's weighings, from its expected decode.
    private func expectedStarts() throws -> Set<String> {
        let text = try String(contentsOfFile: Self.captures.appendingPathComponent("weight-scale.expected.jsonl").path, encoding: .utf8)
        return Set(try lines(text).map { try #require(try json($0)["start"] as? String) })
    }

    /// A device's battery charge is kept only once its source has a grant, and `sources` shows
    /// it beside the devices (text and JSON): the real ATC1441 frame's 81 %.
    @Test func sourcesShowTheBatteryADeviceSaidOnlyOnceItsSourceWasGranted() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = Self.captures.deletingLastPathComponent().appendingPathComponent("room-thermometer/atc-pvvx.btsnoop").path
        #expect(try ingestd(["replay", capture]).status == 0)
        let before = try json(try #require(lines(try ingestd(["sources", "--json"]).stdout).first))
        #expect((before["batteries"] as? [Any])?.isEmpty == true, "held samples leave no charge: \(before)")
        #expect(try ingestd(["auth", "grant", "room-thermometer", "--all"]).status == 0)
        #expect(try ingestd(["replay", capture]).status == 0)
        let text = try ingestd(["sources"]).stdout
        #expect(text.contains("  battery: ATC_800021 A4:C1:38:D5:D4:98 81 % (said 2025-01-15T"), "\(text)")
        let after = try json(try #require(lines(try ingestd(["sources", "--json"]).stdout).first))
        let batteries = try #require(after["batteries"] as? [[String: Any]])
        #expect(batteries.map { $0["percent"] as? Int } == [75, 100, 81])
        #expect(batteries.allSatisfy { ($0["at"] as? String)?.hasSuffix("Z") == true && $0["device"] is [String: Any] })
    }

    @Test func aCaptureFromAnUngrantedSourceIsHeldAndAGrantBringsItInOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let replay = try ingestd(["replay", Self.capture, "--tz", "Europe/Berlin", "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(lines(replay.stdout) == [#"{"type":"HKQuantityTypeIdentifierBodyMass","written":0,"duplicate":0,"replaced":0,"denied":0,"invalid":0,"held":3}"#])
        #expect(replay.stderr.contains("allow with: ingestd auth grant gatt-health bodyMass"))
        #expect(try ingestd(["samples", "bodyMass", "--json"]).stdout.isEmpty)

        let pending = try ingestd(["auth", "pending", "--json"])
        #expect(pending.status == 0)
        let group = try json(try #require(lines(pending.stdout).first))
        #expect(lines(pending.stdout).count == 1)
        #expect(group["source"] as? String == "gatt-health")
        #expect(group["type"] as? String == "HKQuantityTypeIdentifierBodyMass")
        #expect(group["count"] as? Int == 3)
        #expect(group["device"] as? String == "Weight Scale (C8:47:8C:00:11:01)")
        #expect(group["grant"] as? String == "ingestd auth grant gatt-health bodyMass")
        #expect(try ingestd(["status"]).stdout.contains("gatt-health  3"))
        #expect(try ingestd(["sources", "--json"]).stdout.contains(#""source":"gatt-health","samples":0,"held":3"#))
        let changesBefore = lines(try ingestd(["changes", "--since", "0", "--json"]).stdout)

        let grant = try ingestd(["auth", "grant", "gatt-health", "bodyMass"])
        #expect(grant.status == 0, "\(grant.stderr)")
        #expect(grant.stderr.contains("brought in 3 held records: 3 written, 0 duplicate"))
        let samples = lines(try ingestd(["samples", "bodyMass", "--json"]).stdout)
        #expect(samples.count == 3)
        #expect(Set(try samples.map { try #require(try json($0)["start"] as? String) }) == (try expectedStarts()))
        let changes = lines(try ingestd(["changes", "--since", "0", "--json"]).stdout)
        #expect(changes.count == changesBefore.count + 3, "the change feed sees the granted samples as new")
        #expect(try ingestd(["auth", "pending", "--json"]).stdout.isEmpty)

        let again = try ingestd(["auth", "grant", "gatt-health", "bodyMass"])
        #expect(again.status == 0)
        #expect(!again.stderr.contains("brought in"))
        #expect(lines(try ingestd(["samples", "bodyMass", "--json"]).stdout).count == 3)
        #expect(lines(try ingestd(["changes", "--since", "0", "--json"]).stdout) == changes)
    }

    @Test func aDenialDiscardsTheHeldSamplesAndLaterReadingsAreNotHeld() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try ingestd(["replay", Self.capture]).status == 0)
        let deny = try ingestd(["auth", "deny", "gatt-health", "--all"])
        #expect(deny.status == 0, "\(deny.stderr)")
        #expect(deny.stderr.contains("discarded 3 held records"))
        #expect(try ingestd(["auth", "pending", "--json"]).stdout.isEmpty)

        let later = try ingestd(["replay", Self.capture, "--json"])
        #expect(lines(later.stdout) == [#"{"type":"HKQuantityTypeIdentifierBodyMass","written":0,"duplicate":0,"replaced":0,"denied":3,"invalid":0,"held":0}"#])
        #expect(try ingestd(["auth", "pending", "--json"]).stdout.isEmpty)
        #expect(try ingestd(["samples", "bodyMass", "--json"]).stdout.isEmpty)
    }

    @Test func theCountBoundKeepsTheNewestReadingsAndCountsTheDropped() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let replay = try ingestd(["replay", Self.capture, "--pending-max-records", "2"])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("dropped 1 held records of gatt-health: over the pending area's bounds"))
        let group = try json(try #require(lines(try ingestd(["auth", "pending", "--json"]).stdout).first))
        #expect(group["count"] as? Int == 2)
        #expect(group["dropped"] as? Int == 1)
        #expect((group["first"] as? String)?.hasPrefix("2025-01-15") == true, "the 2023 weighing was the oldest")

        let bad = try ingestd(["replay", Self.capture, "--pending-max-records", "0"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--pending-max-records"))
    }
}
