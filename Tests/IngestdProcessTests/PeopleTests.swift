import Foundation
import Testing
import TestSupport

/// People (issue 15), with the built binary: a shared Mi scale's weighings land as alice's, bob's
/// or unassigned from a replayed capture; `assign` moves one and the change feed shows it; a band
/// assigned to alice counts in her `today` only.
@Suite(.serialized, .offCooperativePool) struct PeopleTests {
    let directory: URL
    let store: String
    static let captures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Captures/household")
    /// One Mi Smart Scale weighing 61.2, 84.1 and 72.0 kg (made by make-household-capture.py).
    static let capture = captures.appendingPathComponent("household-mi-scale.btsnoop").path
    /// A SIG weight scale's 58.0 kg weighing of user index 2.
    static let udsCapture = captures.appendingPathComponent("household-uds-scale.btsnoop").path

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-people-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = directory.appendingPathComponent("health.sqlite").path
    }

    private func ingestd(_ arguments: [String]) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", store])
    }

    private func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    private func values(_ output: IngestdProcess.Output) throws -> [Double] {
        try output.lines.map { try #require(try json($0)["value"] as? Double) }
    }

    /// alice (60 kg) and bob (85 kg) instead of the store's first person.
    private func addAliceAndBob() throws {
        let alice = try ingestd(["people", "add", "alice", "--weight", "60", "--unit", "kg", "--height", "165", "--unit", "cm",
                                 "--scale-user-index", "1"])
        #expect(alice.status == 0, "\(alice.stderr)")
        #expect(try ingestd(["people", "add", "bob", "--weight", "85", "--unit", "kg", "--scale-user-index", "2"]).status == 0)
        let remove = try ingestd(["people", "remove", "me"])
        #expect(remove.status == 0, "\(remove.stderr)")
    }

    @Test func aSharedScaleGoesByRecentWeightAndAssignMovesTheUndecidedReading() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addAliceAndBob()
        #expect(try ingestd(["auth", "grant", "xiaomi-scale", "--all"]).status == 0)
        let replay = try ingestd(["replay", Self.capture, "--tz", "Europe/Berlin"])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("note: 1 stored sample could not be told to belong to one person"), "\(replay.stderr)")
        #expect(try ingestd(["status", "--json"]).lines.contains(#"{"unassigned":1}"#))

        #expect(try values(ingestd(["samples", "bodyMass", "--person", "alice", "--json"])) == [61.2])
        #expect(try values(ingestd(["samples", "bodyMass", "--person", "bob", "--json"])) == [84.1])
        let unassigned = try ingestd(["unassigned", "--json"])
        #expect(try values(unassigned) == [72.0])
        let ambiguous = try ingestd(["samples", "bodyMass"])
        #expect(ambiguous.status == 64)
        #expect(ambiguous.stderr.contains("2 people (alice, bob): give --person NAME"), "\(ambiguous.stderr)")

        let anchorLine = try #require(try ingestd(["changes", "--person", "alice", "--json"]).lines.last)
        let anchor = try #require(try json(anchorLine)["anchor"] as? Int)
        let unassignedLine = try #require(unassigned.lines.first)
        let uuid = try #require(try json(unassignedLine)["uuid"] as? String)
        // The table is streamed too (a first read measures the columns): the header's columns
        // line up with the row's, the uuid in lower case.
        let table = try ingestd(["unassigned"]).lines
        try #require(table.count == 2, "\(table)")
        #expect(table[0].hasPrefix("UUID" + String(repeating: " ", count: 34) + "TYPE      START"), "\(table)")
        #expect(table[1].hasPrefix(uuid.lowercased() + "  bodyMass  "), "\(table)")
        let row = Array(table[1])
        for column in ["START", "VALUE", "SOURCE", "DEVICE"] {
            let at = table[0].distance(from: table[0].startIndex, to: try #require(table[0].range(of: column)).lowerBound)
            #expect(row.count > at && row[at] != " " && row[at - 1] == " ", "\(column) starts a cell: \(table)")
        }
        let assign = try ingestd(["assign", uuid, "alice"])
        #expect(assign.status == 0, "\(assign.stderr)")
        #expect(try values(ingestd(["samples", "bodyMass", "--person", "alice", "--json"])) == [61.2, 72.0])
        #expect(try ingestd(["unassigned", "--json"]).stdout.isEmpty)
        #expect(try ingestd(["unassigned"]).lines == ["no unassigned samples"])
        // Alice's feed gains the sample; a move between people is a deletion in one feed and an
        // addition in the other.
        let alicesFeed = try ingestd(["changes", "--since", String(anchor), "--person", "alice", "--json"]).lines
        try #require(alicesFeed.count == 2, "\(alicesFeed)")
        #expect(try json(alicesFeed[0])["uuid"] as? String == uuid)
        #expect(try json(alicesFeed[0])["value"] as? Double == 72.0)
        let movedAt = try #require(try json(alicesFeed[1])["anchor"] as? Int)
        #expect(try ingestd(["changes", "--since", String(anchor), "--person", "bob", "--json"]).lines.count == 1)
        #expect(try ingestd(["assign", uuid, "bob"]).status == 0)
        let alicesLoss = try ingestd(["changes", "--since", String(movedAt), "--person", "alice", "--json"]).lines
        try #require(alicesLoss.count == 2, "\(alicesLoss)")
        #expect(try json(alicesLoss[0])["deleted"] as? String == uuid.lowercased(), "\(alicesLoss)")
        let bobsGain = try ingestd(["changes", "--since", String(movedAt), "--person", "bob", "--json"]).lines
        try #require(bobsGain.count == 2, "\(bobsGain)")
        #expect(try json(bobsGain[0])["uuid"] as? String == uuid)
        #expect(try values(ingestd(["samples", "bodyMass", "--person", "bob", "--json"])) == [84.1, 72.0])

        let unknown = try ingestd(["assign", "00000000-0000-0000-0000-000000000001", "alice"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no stored sample has uuid 00000000-0000-0000-0000-000000000001"))
        let removal = try ingestd(["people", "remove", "alice"])
        #expect(removal.status == 64)
        #expect(removal.stderr.contains("alice has 1 sample; give --reassign OTHER or --delete-samples"), "\(removal.stderr)")
    }

    @Test func aWiderToleranceGivesTheReadingToTheOnlyPersonWithinIt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addAliceAndBob()
        #expect(try ingestd(["auth", "grant", "xiaomi-scale", "--all"]).status == 0)
        #expect(try ingestd(["replay", Self.capture, "--assign-tolerance", "60"]).status == 64)
        // ±15 %: 72.0 is 10.8 kg from alice's 61.2 (her limit 9.2) and 12.1 from bob's 84.1 (his 12.6).
        let replay = try ingestd(["replay", Self.capture, "--tz", "Europe/Berlin", "--assign-tolerance", "15"])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try values(ingestd(["samples", "bodyMass", "--person", "bob", "--json"])) == [84.1, 72.0])
        #expect(try ingestd(["unassigned", "--json"]).stdout.isEmpty)
    }

    @Test func badPeopleArgumentsAreUsageErrorsNamingTheValue() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [([String], String)] = [
            (["people", "add", "carol", "--height", "168"], "--height needs a length --unit"),
            (["people", "add", "carol", "--unit", "kg"], "invalid value 'kg' for --unit"),
            (["people", "add", "carol", "--weight", "900", "--unit", "kg"], "invalid value '900.0' for --weight"),
            (["people", "add", "carol", "--date-of-birth", "2999-01-01"], "'2999-01-01' for --date-of-birth"),
            (["people", "add", "carol", "--scale-user-index", "255"], "must be 0...254"),
            (["people", "add", "me"], #"there is already a person named "me""#),
            (["people", "remove", "me"], "me is the only person"),
            (["samples", "bodyMass", "--person", "carol"], "no such person (people: me)"),
            (["assign", "not-a-uuid", "me"], "invalid value 'not-a-uuid' for UUID"),
            (["assign", "--all-from", "AA:BB", "carol"], #"no person named "carol" (people: me)"#),
            (["devices", "assign", "AA:BB", "carol"], #"no person named "carol""#),
        ]
        for (arguments, message) in cases {
            let output = try ingestd(arguments)
            #expect(output.status == 64, "\(arguments): \(output.stderr)")
            #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
        }
        #expect(try ingestd(["people", "list", "--json"]).lines.count == 1)
    }

    @Test func aUDSScaleUserIndexMappedToBobIsBobsWhateverTheWeight() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addAliceAndBob()
        #expect(try ingestd(["auth", "grant", "gatt-health", "--all"]).status == 0)
        let replay = try ingestd(["replay", Self.udsCapture, "--tz", "Europe/Berlin"])
        #expect(replay.status == 0, "\(replay.stderr)")
        // 58.0 kg is within alice's ±10 % and far from bob's 85 kg: the slot decides.
        #expect(try values(ingestd(["samples", "bodyMass", "--person", "bob", "--json"])) == [58.0])
        #expect(try ingestd(["samples", "bodyMass", "--person", "alice", "--json"]).stdout.isEmpty)
        #expect(try ingestd(["unassigned", "--json"]).stdout.isEmpty)
    }

    @Test func aBandAssignedToAliceCountsInHerTodayOnly() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addAliceAndBob()
        let lines = directory.appendingPathComponent("band.jsonl").path
        let walk = """
            {"type":"HKQuantityTypeIdentifierStepCount","value":1200,"unit":"count","start":"2025-01-14T08:00:00Z","end":"2025-01-14T08:30:00Z","source":"band","device":{"name":"Band","localIdentifier":"C4:7C:8D:6A:00:01"}}
            {"type":"HKQuantityTypeIdentifierStepCount","value":300,"unit":"count","start":"2025-01-14T09:00:00Z","end":"2025-01-14T09:10:00Z","source":"band","device":{"name":"Band","localIdentifier":"C4:7C:8D:6A:00:01"}}

            """
        try walk.write(toFile: lines, atomically: true, encoding: .utf8)
        #expect(try ingestd(["auth", "grant", "band", "--all"]).status == 0)
        let owner = try ingestd(["devices", "assign", "c4:7c:8d:6a:00:01", "alice"])
        #expect(owner.status == 0, "\(owner.stderr)")
        #expect(try ingestd(["replay", lines]).status == 0)
        let alice = try ingestd(["today", "--date", "2025-01-14", "--tz", "UTC", "--person", "alice", "--json"])
        #expect(alice.stdout.contains(#""steps":1500"#), "\(alice.stdout) \(alice.stderr)")
        let bob = try ingestd(["today", "--date", "2025-01-14", "--tz", "UTC", "--person", "bob", "--json"])
        #expect(bob.stdout.contains(#""steps":0"#), "\(bob.stdout) \(bob.stderr)")
        #expect(try ingestd(["today", "--date", "2025-01-14", "--tz", "UTC"]).status == 64)
        #expect(try ingestd(["unassigned", "--json"]).stdout.isEmpty)
    }

    static let adapterCaptures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("AdapterTests/Captures")

    @Test func usbDevicesAreAssignedByVIDPIDAndBySerialNumberEndToEnd() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addAliceAndBob()
        // A TEMPer2 thermometer has no serial number: its owner is named by VID:PID (any case).
        let temper = Self.adapterCaptures.appendingPathComponent("temper/temper2.pcapng").path
        #expect(try ingestd(["auth", "grant", "temper", "--all"]).status == 0)
        let owner = try ingestd(["devices", "assign", "0C45:7402", "alice"])
        #expect(owner.status == 0, "\(owner.stderr)")
        let replay = try ingestd(["replay", temper, "--tz", "Europe/Berlin", "--adapter-option", "temper-interval=1"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let readings = try ingestd(["samples", "ambientTemperature", "--person", "alice", "--json"])
        #expect(readings.lines.count == 2, "\(readings.stdout) \(readings.stderr)")
        #expect(try ingestd(["samples", "ambientTemperature", "--person", "bob", "--json"]).stdout.isEmpty)
        #expect(try ingestd(["unassigned", "--json"]).stdout.isEmpty)

        // An Omron pedometer by the serial number its samples carry.
        let omron = Self.adapterCaptures.appendingPathComponent("omron-hj720it/pedometerLog1-session.pcapng").path
        let decoded = try IngestdProcess.runBlocking(["decode", omron, "--json"])
        let first = try json(try #require(decoded.lines.first, "\(decoded.stderr)"))
        let serial = try #require((first["metadata"] as? [String: Any])?["HKDeviceSerialNumber"] as? String)
        let source = try #require(first["source"] as? String)
        #expect(try ingestd(["auth", "grant", source, "--all"]).status == 0)
        #expect(try ingestd(["devices", "assign", serial, "bob"]).status == 0)
        let pedometer = try ingestd(["replay", omron, "--tz", "Europe/Berlin"])
        #expect(pedometer.status == 0, "\(pedometer.stderr)")
        #expect(try !ingestd(["samples", "stepCount", "--person", "bob", "--json"]).lines.isEmpty)
        #expect(try ingestd(["samples", "stepCount", "--person", "alice", "--json"]).stdout.isEmpty)
        #expect(try ingestd(["unassigned", "--json"]).stdout.isEmpty)
    }

    @Test func sinksAndExportTakeAPersonAndNeedOneWhenThereAreSeveral() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addAliceAndBob()
        let lines = directory.appendingPathComponent("bands.jsonl").path
        try """
            {"type":"HKQuantityTypeIdentifierStepCount","value":1200,"unit":"count","start":"2025-01-14T08:00:00Z","end":"2025-01-14T08:30:00Z","source":"band","device":{"localIdentifier":"band-a"}}
            {"type":"HKQuantityTypeIdentifierStepCount","value":700,"unit":"count","start":"2025-01-14T09:00:00Z","end":"2025-01-14T09:10:00Z","source":"band","device":{"localIdentifier":"band-b"}}

            """.write(toFile: lines, atomically: true, encoding: .utf8)
        #expect(try ingestd(["auth", "grant", "band", "--all"]).status == 0)
        #expect(try ingestd(["devices", "assign", "band-a", "alice"]).status == 0)
        #expect(try ingestd(["devices", "assign", "band-b", "bob"]).status == 0)
        #expect(try ingestd(["replay", lines]).status == 0)

        let export = try ingestd(["export", "--format", "jsonl", "--person", "bob"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try values(export) == [700])
        let ambiguous = try ingestd(["export", "--format", "csv"])
        #expect(ambiguous.status == 64 && ambiguous.stderr.contains("2 people (alice, bob): give --person NAME"), "\(ambiguous.stderr)")

        let noPerson = try ingestd(["sinks", "add", "ha", "mqtt://127.0.0.1:1", "--all-types"])
        #expect(noPerson.status == 64)
        #expect(noPerson.stderr.contains("2 people (alice, bob): give --person NAME; or --all-people"), "\(noPerson.stderr)")
        #expect(try ingestd(["sinks", "add", "ha", "mqtt://127.0.0.1:1", "--all-types", "--person", "carol"]).status == 64)
        #expect(try ingestd(["sinks", "add", "ha", "mqtt://127.0.0.1:1", "--all-types", "--person", "bob", "--all-people"]).status == 64)
        #expect(try ingestd(["sinks", "add", "bobs", "http://127.0.0.1:1/in", "--all-types", "--person", "bob"]).status == 0)
        #expect(try ingestd(["sinks", "add", "house", "mqtt://127.0.0.1:1", "--all-types", "--all-people"]).status == 0)
        let list = try ingestd(["sinks", "list", "--json"]).lines
        #expect(list.count == 2)
        #expect(list.first { $0.contains(#""name":"bobs""#) }?.contains(#""person":"bob","cursor":0,"backlog":1"#) == true, "\(list)")
        #expect(list.first { $0.contains(#""name":"house""#) }?.contains(#""person":null,"cursor":0,"backlog":2"#) == true, "\(list)")
        let removal = try ingestd(["people", "remove", "bob", "--delete-samples"])
        #expect(removal.status == 64 && removal.stderr.contains("the sink bobs delivers bob's samples"), "\(removal.stderr)")
    }
}
