import Delivery
import Foundation
import HealthModel
import TestSupport
import Testing

/// Issue 28's acceptance test: a real Home Assistant core (2024.3.3 from PyPI, in
/// `.build/ha-venv`, made by `scripts/bootstrap-tests`) with its MQTT integration on a Mosquitto the
/// test starts on 127.0.0.1, after a one-shot `ingestd sinks deliver`: what HA's own state
/// machine (REST `/api/states`) shows. Without the venv the test fails with the reason.
@Suite(.serialized, .offCooperativePool) struct HomeAssistantAcceptanceTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".build/ha-venv/bin/python").path
    static let driver = packageRoot.appendingPathComponent("Tests/DeliveryTests/Receivers/home_assistant.py").path

    @Test func homeAssistantShowsTheNewestReadingsWithAttributesOnlyEntitiesWithDataAndNothingUnavailable() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python),
                     "no Home Assistant venv at \(Self.python): run scripts/bootstrap-tests")
        let directory = try TemporaryDirectory("ha-real")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        let today = startOfLocalToday()
        let newest = Date(timeIntervalSince1970: 1_750_000_000)
        try fixture.add(.heartRate, 75, at: newest)  // 75 bpm
        try fixture.add(.bodyMass, 72.35, at: newest)
        try fixture.add(.bodyFatPercentage, 0.235, at: newest)
        try fixture.add(.stepCount, 1200, at: today.addingTimeInterval(60))
        try fixture.add(.ambientTemperature, 21.5, at: newest)
        _ = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: nil, options: {
            var options = MQTTSinkOptions()
            options.gatewayID = "gw"
            options.homeAssistant = true
            return options
        }())
        // Two one-shot runs: the second brings older readings (an import, an old capture).
        var deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--store", fixture.path])
        #expect(deliver.status == 0, "\(deliver.stderr)")
        try fixture.add(.heartRate, 90, at: Date(timeIntervalSince1970: 1_690_000_000))
        try fixture.add(.bodyMass, 80.5, at: Date(timeIntervalSince1970: 1_690_000_000))
        deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--store", fixture.path])
        #expect(deliver.status == 0, "\(deliver.stderr)")

        let statesFile = directory.path("states.json")
        let entities = ["binary_sensor.ingestd_gw_status", "sensor.ingestd_gw_me_heartrate", "sensor.ingestd_gw_me_bodymass",
                        "sensor.ingestd_gw_me_bodyfatpercentage", "sensor.ingestd_gw_me_stepcount",
                        "sensor.ingestd_gw_ambienttemperature"]
        // The driver waits (at most 90 s) until each of these shows a state: a fixed wait was too
        // short for a loaded CI machine.
        let run = try runTool("/usr/bin/timeout", ["420", Self.python, Self.driver, Self.python, directory.path("ha"),
                                                   String(try freePort()), String(broker.port), statesFile, "90",
                                                   entities.joined(separator: ",")])
        let log = (try? String(contentsOfFile: directory.path("ha/ha.log"), encoding: .utf8)) ?? ""
        try #require(run.status == 0, "Home Assistant run failed: \(run.output) \(log.suffix(2000))")
        let states = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statesFile))) as? [[String: Any]])
        var byID: [String: (state: String, attributes: [String: Any])] = [:]
        for entry in states {
            guard let id = entry["entity_id"] as? String, id.contains("ingestd") else { continue }
            byID[id] = (entry["state"] as? String ?? "", entry["attributes"] as? [String: Any] ?? [:])
        }
        // Only the entities with data (every type is granted), none unavailable.
        #expect(Set(byID.keys) == Set(entities), "\(byID.keys.sorted()) \(run.output)")
        #expect(byID.values.allSatisfy { $0.state != "unavailable" && $0.state != "unknown" }, "\(byID.mapValues(\.state))")
        #expect(byID["binary_sensor.ingestd_gw_status"]?.state == "off")  // the one-shot run has ended
        let expected: [String: (state: String, name: String, unit: String)] = [
            "sensor.ingestd_gw_me_heartrate": ("75", "me Heart rate", "bpm"),
            "sensor.ingestd_gw_me_bodymass": ("72.35", "me Weight", "kg"),
            "sensor.ingestd_gw_me_bodyfatpercentage": ("23.5", "me Body fat", "%"),
            "sensor.ingestd_gw_me_stepcount": ("1200", "me Steps today", "steps"),
            "sensor.ingestd_gw_ambienttemperature": ("21.5", "ingestd gw Room temperature", "°C"),
        ]
        for (id, entity) in expected {
            let shown = try #require(byID[id])
            #expect(shown.state == entity.state, "\(id)")
            #expect(shown.attributes["friendly_name"] as? String == entity.name && shown.attributes["unit_of_measurement"] as? String == entity.unit,
                    "\(id): \(shown.attributes)")
        }
        let heart = try #require(byID["sensor.ingestd_gw_me_heartrate"]).attributes
        #expect((heart["measured_at"] as? String).flatMap { ISO8601DateTime.date(from: $0) } == newest)
        #expect(heart["source"] as? String == "phone")
        let steps = try #require(byID["sensor.ingestd_gw_me_stepcount"]).attributes
        #expect(steps["state_class"] as? String == "total")
        #expect((steps["last_reset"] as? String).flatMap { ISO8601DateTime.date(from: $0) } == today, "\(steps)")
    }

    /// The Home Assistant example of the README, exactly: a household built from real bytes
    /// through the binary (a Mi scale 2 capture, a Polar H10 broadcast capture, a TEMPer usbmon
    /// capture, an Apple Health export), one `sinks deliver`, and the entities, friendly names
    /// and units that a real Home Assistant shows are the table between the document's
    /// `example-entities` markers, no more and no fewer.
    @Test func theDocumentedHouseholdsEntitiesAreWhatHomeAssistantShows() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python),
                     "no Home Assistant venv at \(Self.python): run scripts/bootstrap-tests")
        let document = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let documented = try Self.exampleEntities(document)
        try #require(documented.count >= 5, "the table between the example-entities markers: \(documented)")

        let directory = try TemporaryDirectory("ha-household")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let store = directory.path("health.sqlite")
        let captures = Self.packageRoot.appendingPathComponent("Tests/AdapterTests/Captures")
        func ingestd(_ arguments: [String]) throws {
            let result = try IngestdBinary.run(arguments + ["--store", store])
            try #require(result.status == 0, "ingestd \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        for source in ["xiaomi-scale", "heart-rate-strap-broadcast", "temper"] {
            try ingestd(["auth", "grant", source, "--all"])
        }
        try ingestd(["replay", captures.appendingPathComponent("xiaomi-scale/mi-scale-v2.btsnoop").path,
                     captures.appendingPathComponent("heart-rate-strap-broadcast/polar-h10.btsnoop").path])
        try ingestd(["replay", captures.appendingPathComponent("temper/temper-v1.4.pcapng").path,
                     "--adapter-option", "temper-interval=1"])
        try ingestd(["import", Self.packageRoot.appendingPathComponent("Tests/DeliveryTests/Fixtures/household-export.xml").path, "--grant"])
        try ingestd(["sinks", "add", "ha", "mqtt://127.0.0.1:\(broker.port)", "--all-types", "--gateway-id", "home", "--home-assistant"])
        try ingestd(["sinks", "deliver", "ha"])

        let statesFile = directory.path("states.json")
        let run = try runTool("/usr/bin/timeout", ["420", Self.python, Self.driver, Self.python, directory.path("ha"),
                                                   String(try freePort()), String(broker.port), statesFile, "90",
                                                   documented.map(\.id).joined(separator: ",")])
        let log = (try? String(contentsOfFile: directory.path("ha/ha.log"), encoding: .utf8)) ?? ""
        try #require(run.status == 0, "Home Assistant run failed: \(run.output) \(log.suffix(2000))")
        let states = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statesFile))) as? [[String: Any]])
        var shown: [String: (name: String, unit: String, state: String)] = [:]
        for entry in states {
            guard let id = entry["entity_id"] as? String, id.contains("ingestd") else { continue }
            let attributes = entry["attributes"] as? [String: Any] ?? [:]
            shown[id] = (attributes["friendly_name"] as? String ?? "", attributes["unit_of_measurement"] as? String ?? "",
                         entry["state"] as? String ?? "")
        }
        #expect(Set(shown.keys) == Set(documented.map(\.id)), "shown \(shown.keys.sorted()) \(run.output)")
        for entity in documented {
            let seen = try #require(shown[entity.id], "\(entity.id) not shown")
            #expect(seen.name == entity.name && seen.unit == entity.unit, "\(entity.id): shown \(seen), documented \(entity)")
            #expect(seen.state != "unknown" && seen.state != "unavailable", "\(entity.id): \(seen.state)")
        }
    }

    /// The rows of the table between `<!-- example-entities -->` and `<!-- /example-entities -->`:
    /// entity id (in backticks), friendly name, unit.
    static func exampleEntities(_ document: String) throws -> [(id: String, name: String, unit: String)] {
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let start = try #require(lines.firstIndex(of: "<!-- example-entities -->"))
        let end = try #require(lines.firstIndex(of: "<!-- /example-entities -->"))
        try #require(start < end)
        return lines[(start + 1)..<end].compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, cells[0].hasPrefix("`"), cells[0].hasSuffix("`") else { return nil }
            return (String(cells[0].dropFirst().dropLast()), cells[1], cells[2])
        }
    }
}
