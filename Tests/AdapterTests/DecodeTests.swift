import Foundation
import TestSupport
import Testing

/// The built `ingestd` binary, run as a user would: `ingestd decode FILE --json --tz Europe/Berlin`.
@Suite(.offCooperativePool) struct DecodeTests {
    /// One capture per adapter (BLE and USB, with the capture's adapter options), plus a malformed one.
    @Test(arguments: ["gatt-health/thermometer", "gatt-health/blood-pressure-fragmented",
                      "xiaomi-scale/mi-scale-v1", "bthome/bthome-mass", "ant-plus/scale", "temper/temper2",
                      "omron-bp/hem-7600t", "qn-gatt-scale/es30m",
                      "xiaomi-mibeacon/s400", "xiaomi-mibeacon/thermometers", "bthome/bthome-encrypted"])
    func binaryPrintsTheExpectedRecords(_ name: String) throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == name })
        let output = try IngestdProcess.runBlocking(["decode", fixture.path, "--json", "--tz", Captures.zoneName]
                                                    + fixture.adapterOptionArguments() + fixture.keyArguments())
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        try expectSameRecords(lines, try fixture.expectedRecords(), name)
        #expect(output.stderr.contains("→ adapter \(fixture.folder)"), "\(output.stderr)")
    }

    /// Every held-back capture with expected records (every profile, both fragmentations) in
    /// one `ingestd decode FILE... --json` run: the output is each file's records in turn. Captures
    /// that need their own `--adapter-option` values (an Omron monitor's model) are decoded alone above.
    @Test func binaryDecodesEveryProfileToThePublishedValues() throws {
        let fixtures = try Captures.withExpectedRecords.filter { fixture in
            fixture.isUSB ? false : try fixture.adapterOptions().isEmpty
        }
        #expect(fixtures.count >= 20)
        let keys = try Set(fixtures.flatMap { try $0.keyArguments() }.filter { $0 != "--key" }).sorted().flatMap { ["--key", $0] }
        let output = try IngestdProcess.runBlocking(["decode"] + fixtures.map(\.path) + ["--json", "--tz", Captures.zoneName] + keys)
        #expect(output.status == 0, "\(output.stderr)")
        let expected = try fixtures.flatMap { try $0.expectedRecords() }
        try expectSameRecords(output.stdout.split(separator: "\n").map(String.init), expected, "all captures")
    }

    /// The S400's encrypted frames without their key, with a wrong one, and with the right one read from a
    /// file (`ADDRESS=@PATH`): nothing but the right key decodes them; the remedy is said once; the key is never printed.
    @Test func binaryDecodesEncryptedFramesOnlyWithTheRightKey() throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "xiaomi-mibeacon/s400" })
        let address = "8C:D0:B2:F6:BE:EF"
        let right = "0728974d657a4b60964c1b1677f35f7c"
        let wrong = "02d2900363ef629c736a4549677acbee"
        let base = ["decode", fixture.path, "--json", "--tz", Captures.zoneName]

        let missing = try IngestdProcess.runBlocking(base)
        #expect(missing.status == 0, "\(missing.stderr)")
        #expect(missing.stdout.isEmpty, "\(missing.stdout)")
        #expect(missing.stderr.contains("frames rejected, xiaomi-mibeacon: no-key: 6"), "\(missing.stderr)")
        #expect(missing.stderr.components(separatedBy: "note: no key for \(address): `ingestd keys add").count == 2,
                "\(missing.stderr)")

        let wrongKey = try IngestdProcess.runBlocking(base + ["--key", "\(address)=\(wrong)"])
        #expect(wrongKey.status == 0, "\(wrongKey.stderr)")
        #expect(wrongKey.stdout.isEmpty, "\(wrongKey.stdout)")
        #expect(wrongKey.stderr.contains("frames rejected, xiaomi-mibeacon: mic-mismatch: 6"), "\(wrongKey.stderr)")
        #expect(wrongKey.stderr.contains("key for \(address) does not decrypt"), "\(wrongKey.stderr)")
        #expect(!wrongKey.stderr.lowercased().contains(wrong) && !wrongKey.stdout.contains(wrong))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("s400.key").path
        try (right + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let fromFile = try IngestdProcess.runBlocking(base + ["--key", "\(address)=@\(keyFile)"])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        try expectSameRecords(fromFile.stdout.split(separator: "\n").map(String.init), try fixture.expectedRecords(), "s400 key file")
        #expect(!fromFile.stderr.lowercased().contains(right) && !fromFile.stdout.contains(right))

        let malformed = try IngestdProcess.runBlocking(base + ["--key", "\(address)=\(right.dropLast(2))zz"])
        #expect(malformed.status == 64, "\(malformed.stderr)")
        #expect(malformed.stderr.contains("character 31 of the key is not a hexadecimal digit"), "\(malformed.stderr)")
        #expect(!malformed.stderr.contains(String(right.dropLast(2))), "\(malformed.stderr)")
    }

    @Test func binaryReportsRejectionsAndStillSucceeds() throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "gatt-health/bad-weight-scale" })
        let output = try IngestdProcess.runBlocking(["decode", fixture.path, "--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("frames rejected, gatt-health: short-frame: 2"), "\(output.stderr)")
        #expect(output.stderr.contains("frames rejected, gatt-health: reserved-flags: 1"), "\(output.stderr)")
    }

    @Test func binaryDecodesAnUnsupportedDeviceToNothing() throws {
        let path = Captures.directory.appendingPathComponent("unsupported/airbily_veryfitpro_bluethoot_logs.pcapng").path
        let output = try IngestdProcess.runBlocking(["decode", path, "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("810 records, 5 advertisements, 1 connections, 277 notifications"),
                "\(output.stderr)")
    }

    /// The real HidrateSpark log: the bottle's conversation runs against both captured
    /// connections and gives its three sips as water intake.
    @Test func binaryReplaysTheBottlesSipsFromARealLog() throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "hidrate-spark/real-sips" })
        let output = try IngestdProcess.runBlocking(["decode", fixture.path, "--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(output.stdout)")
        #expect(lines.allSatisfy { $0.contains("\"type\":\"HKQuantityTypeIdentifierDietaryWater\"") })
        #expect(output.stderr.contains("conversation with 45:DE:A1:04:15:2D → adapter hidrate-spark"), "\(output.stderr)")
    }

    /// The real DS-D6 log: the band's conversation runs against the captured connection and
    /// gives the band's answer to AT+TOPACE=0 (5446 steps), once, for its day.
    @Test func binaryReplaysTheBandsConversationFromARealLog() throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "dsd6-band/real-repeated-syncs" })
        let output = try IngestdProcess.runBlocking(["decode", fixture.path, "--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\"type\":\"HKQuantityTypeIdentifierStepCount\",\"value\":5446,") == true,
                "\(output.stdout)")
        #expect(output.stderr.contains("conversation with F9:E5:10:60:E8:60 → adapter dsd6-band"), "\(output.stderr)")
        #expect(!output.stderr.contains("conversation ended"), "\(output.stderr)")
    }

    /// Both real DS-D6 logs replayed twice into a store: each step count the band reported
    /// arrives once, as one StepCount for the band's day (0 on 2020-05-17, 5446 on 2020-05-19).
    @Test func replayingTheBandsLogsTwiceStoresEachCountOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dsd6-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.sqlite").path
        let logs = Captures.all.filter { $0.folder == "dsd6-band" }.map(\.path)
        #expect(logs.count == 2)
        let grant = try IngestdProcess.runBlocking(["auth", "grant", "dsd6-band", "stepCount", "--store", store])
        #expect(grant.status == 0, "\(grant.stderr)")
        for _ in 0..<2 {
            let replay = try IngestdProcess.runBlocking(["replay"] + logs + ["--store", store, "--tz", Captures.zoneName])
            #expect(replay.status == 0, "\(replay.stderr)")
        }
        let samples = try IngestdProcess.runBlocking(["samples", "stepCount", "--json", "--store", store])
        let lines = samples.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(samples.stdout)")
        #expect(lines.contains { $0.contains("\"value\":0,") && $0.contains("\"start\":\"2020-05-16T23:00:00Z\"") },
                "\(samples.stdout)")
        #expect(lines.contains { $0.contains("\"value\":5446,") && $0.contains("\"start\":\"2020-05-18T23:00:00Z\"") },
                "\(samples.stdout)")
    }

    /// The broadcast families' captures through `ingestd replay` into a store (each adapter granted
    /// what it produces), twice: every published reading is stored once, in the canonical unit (the
    /// Fit 8S's grams as kg), and the malformed captures store nothing.
    @Test func binaryReplaysTheBroadcastFamiliesIntoTheStoreOnce() throws {
        let families = ["qn-scale-broadcast", "etekcity-scale", "eufy-scale", "mi-band-heart-rate", "heart-rate-strap-broadcast",
                        "room-thermometer", "amazfit-scale", "senssun-scale", "laica-scale"]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("broadcast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.sqlite").path
        for family in families {
            let grant = try IngestdProcess.runBlocking(["auth", "grant", family, "--all", "--store", store])
            #expect(grant.status == 0, "\(grant.stderr)")
        }
        let captures = Captures.all.filter { families.contains($0.folder) }
        let expected = try captures.filter { !$0.isBad }.flatMap { try $0.expectedRecords() }
        #expect(expected.count >= 30)
        for _ in 0..<2 {
            let replay = try IngestdProcess.runBlocking(["replay"] + captures.map(\.path) + ["--store", store])
            #expect(replay.status == 0, "\(replay.stderr)")
        }
        var stored: [String] = []
        for type in ["bodyMass", "heartRate", "ambientTemperature"] {
            let samples = try IngestdProcess.runBlocking(["samples", type, "--json", "--store", store])
            #expect(samples.status == 0, "\(samples.stderr)")
            stored += samples.stdout.split(separator: "\n").map(String.init)
        }
        #expect(stored.count == expected.count, "\(stored.joined(separator: "\n"))")
        #expect(stored.contains { $0.contains("\"value\":80.47,\"unit\":\"kg\"") && $0.contains("\"source\":\"etekcity-scale\"") })
        #expect(stored.contains { $0.contains("\"value\":70.35,\"unit\":\"kg\"") && $0.contains("\"source\":\"qn-scale-broadcast\"") })
        #expect(!stored.contains { $0.contains("655.35") || $0.contains("327.67") })
    }
}
