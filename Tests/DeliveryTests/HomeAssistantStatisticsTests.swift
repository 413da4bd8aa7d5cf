import Delivery
import Foundation
import HealthModel
import TestSupport
import Testing

/// Issue 28 item 5 against a real Home Assistant core (2024.3.3 from PyPI in `.build/ha-venv`,
/// made by `scripts/bootstrap-tests`; its recorder on SQLite in a temporary directory, a
/// long-lived access token made over its WebSocket API): a `ws://` sink imports hourly
/// statistics that equal `ingestd stats --by hour`; a late sample re-imports its hour; a
/// re-import from scratch gives the same statistics. Without the venv the test fails with the reason.
@Suite(.serialized, .offCooperativePool) struct HomeAssistantStatisticsTests {
    static let python = HomeAssistantAcceptanceTests.python
    static let driver = HomeAssistantAcceptanceTests.packageRoot
        .appendingPathComponent("Tests/DeliveryTests/Receivers/home_assistant_statistics.py").path

    @Test func statistic_ids_follow_home_assistants_rules() {
        #expect(HomeAssistantStatisticID.id(gateway: "gw1", owner: .person("alice"), type: .stepCount) == "ingestd:gw1_alice_step_count")
        #expect(HomeAssistantStatisticID.id(gateway: "Living-Room_", owner: .person("Anne Marie"), type: .heartRate)
                    == "ingestd:living_room_anne_marie_heart_rate")
        #expect(HomeAssistantStatisticID.id(gateway: "gw", owner: .gateway, type: .ambientTemperature) == "ingestd:gw_ambient_temperature")
    }

    /// One hour of a statistic as Home Assistant answers it.
    struct Row: Equatable {
        var start: Date
        var values: [String: Double]
    }

    static func rows(_ file: String, id: String) throws -> [Row] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        let list = object?[id] as? [[String: Any]] ?? []
        return list.compactMap { entry in
            guard let start = entry["start"] as? Double else { return nil }
            var values: [String: Double] = [:]
            for key in ["mean", "min", "max", "sum", "state"] { if let value = entry[key] as? Double { values[key] = value } }
            return Row(start: Date(timeIntervalSince1970: start / 1000), values: values)
        }
    }

    /// `ingestd stats … --by hour --tz UTC --json`: (hour start, value) of the hours with data.
    static func ingestdStats(_ arguments: [String], store: String) throws -> [Date: Double] {
        let run = try IngestdBinary.run(["stats"] + arguments + ["--by", "hour", "--tz", "UTC", "--json", "--store", store])
        #expect(run.status == 0, "\(run.stderr)")
        var result: [Date: Double] = [:]
        for line in run.stdout.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let start = (object["start"] as? String).flatMap(ISO8601DateTime.date(from:)),
                  let value = object["value"] as? Double else { continue }
            result[start] = value
        }
        return result
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-6 * max(1, abs(b))
    }

    /// Checks Home Assistant's hours against `ingestd stats --by hour` for heart rate and steps.
    static func expectEqualToIngestd(_ response: String, store: String) throws {
        let heart = try rows(response, id: "ingestd:gw_me_heart_rate")
        let mean = try ingestdStats(["heartRate", "--average", "--unit", "count/min"], store: store)
        let low = try ingestdStats(["heartRate", "--min", "--unit", "count/min"], store: store)
        let high = try ingestdStats(["heartRate", "--max", "--unit", "count/min"], store: store)
        #expect(Set(heart.map(\.start)) == Set(mean.keys), "\(heart) \(mean)")
        for row in heart {
            #expect(close(row.values["mean"], mean[row.start]) && close(row.values["min"], low[row.start])
                        && close(row.values["max"], high[row.start]), "\(row) \(String(describing: mean[row.start]))")
        }
        let steps = try rows(response, id: "ingestd:gw_me_step_count")
        let sums = try ingestdStats(["stepCount", "--sum"], store: store)
        #expect(Set(steps.map(\.start)) == Set(sums.filter { $0.value != 0 }.keys), "\(steps) \(sums)")
        var running = 0.0
        for row in steps.sorted(by: { $0.start < $1.start }) {
            running += sums[row.start] ?? .nan
            #expect(close(row.values["state"], sums[row.start]) && close(row.values["sum"], running), "\(row) running \(running)")
        }
    }

    static let tlsProxy = HomeAssistantAcceptanceTests.packageRoot.appendingPathComponent("Tests/DeliveryTests/Receivers/tls_proxy.py").path

    @Test func importedHourlyStatisticsEqualIngestdStatsLateSamplesReimportTheirHourAndReimportIsIdempotent() throws {
        // (and a revised reading, whose old version is deleted, leaves no stale hour behind)
        try #require(FileManager.default.isExecutableFile(atPath: Self.python),
                     "no Home Assistant venv at \(Self.python): run scripts/bootstrap-tests")
        let directory = try TemporaryDirectory("ha-statistics")
        let fixture = try StoreFixture(directory: directory)
        let hour = Date(timeIntervalSince1970: 1_749_999_600)  // 2025-06-15T15:00:00Z
        try fixture.add(.heartRate, 72, at: hour.addingTimeInterval(300))
        try fixture.add(.heartRate, 78, at: hour.addingTimeInterval(900))
        try fixture.add(.heartRate, 90, at: hour.addingTimeInterval(3600 + 120), metadata: Metadata(syncIdentifier: "strap-1", syncVersion: 1))
        try fixture.add(.heartRate, 66, at: hour.addingTimeInterval(3 * 3600 + 60))
        try fixture.add(.stepCount, 100, at: hour.addingTimeInterval(600))
        try fixture.add(.stepCount, 250, at: hour.addingTimeInterval(4000))
        try fixture.add(.stepCount, 40, at: hour.addingTimeInterval(3 * 3600 + 500))

        let work = directory.path("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let port = try freePort()
        let home = Process()
        home.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        home.arguments = ["660", Self.python, Self.driver, Self.python, directory.path("ha"), String(port), work]
        home.standardOutput = FileHandle.nullDevice
        try home.run()
        defer {
            FileManager.default.createFile(atPath: work + "/stop", contents: nil)
            home.waitUntilExit()
        }
        func wait(for file: String, seconds: Double) throws {
            let deadline = Date().addingTimeInterval(seconds)
            while !FileManager.default.fileExists(atPath: work + "/" + file) {
                let log = (try? String(contentsOfFile: directory.path("ha/ha.log"), encoding: .utf8)) ?? ""
                try #require(home.isRunning && Date() < deadline, "no \(file) from Home Assistant: \(log.suffix(2000))")
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        func statistics(_ number: Int) throws -> String {
            FileManager.default.createFile(atPath: work + "/request-\(number)",
                                           contents: Data(#"["ingestd:gw_me_heart_rate","ingestd:gw_me_step_count"]"#.utf8))
            try wait(for: "response-\(number).json", seconds: 180)
            return work + "/response-\(number).json"
        }
        func deliver() throws {
            let run = try IngestdBinary.run(["sinks", "deliver", "history", "--store", fixture.path])
            #expect(run.status == 0, "\(run.stderr)")
            let token = (try? String(contentsOfFile: work + "/token", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            #expect(!run.stderr.contains(token) && !run.stdout.contains(token), "the token was printed")
        }
        func addSink() throws {
            let add = try IngestdBinary.run(["sinks", "add", "history", "ws://127.0.0.1:\(port)", "--token", "@\(work)/token",
                                             "--all-types", "--gateway-id", "gw", "--store", fixture.path])
            try #require(add.status == 0, "\(add.stderr)")
        }
        try wait(for: "ready", seconds: 480)
        try addSink()
        try deliver()
        let first = try statistics(1)
        try Self.expectEqualToIngestd(first, store: fixture.path)
        #expect(try Self.rows(first, id: "ingestd:gw_me_heart_rate").count == 3)

        // Late samples in the first hour: its mean and maximum change, and the running sum from there on.
        try fixture.add(.heartRate, 120, at: hour.addingTimeInterval(1200))
        try fixture.add(.stepCount, 500, at: hour.addingTimeInterval(1000))
        try deliver()
        let second = try statistics(2)
        try Self.expectEqualToIngestd(second, store: fixture.path)
        let firstHour = try #require(try Self.rows(second, id: "ingestd:gw_me_heart_rate").first { $0.start == hour })
        #expect(firstHour.values["max"] == 120, "\(firstHour)")
        #expect(try Self.rows(second, id: "ingestd:gw_me_step_count").first { $0.start == hour }?.values["state"] == 600)

        // A fresh sink imports everything again: the same statistics.
        let remove = try IngestdBinary.run(["sinks", "remove", "history", "--store", fixture.path])
        try #require(remove.status == 0, "\(remove.stderr)")
        try addSink()
        try deliver()
        let third = try statistics(3)
        for id in ["ingestd:gw_me_heart_rate", "ingestd:gw_me_step_count"] {
            #expect(try Self.rows(third, id: id) == Self.rows(second, id: id), "\(id)")
        }

        // A revised reading moves the only heart rate of the second hour to the third: the old
        // version's deletion clears the statistic and imports it whole, so no stale hour is left.
        try fixture.add(.heartRate, 84, at: hour.addingTimeInterval(2 * 3600 + 300), metadata: Metadata(syncIdentifier: "strap-1", syncVersion: 2))
        try deliver()
        let fourth = try statistics(4)
        try Self.expectEqualToIngestd(fourth, store: fixture.path)
        let hours = try Self.rows(fourth, id: "ingestd:gw_me_heart_rate").map(\.start)
        #expect(!hours.contains(hour.addingTimeInterval(3600)) && hours.contains(hour.addingTimeInterval(2 * 3600)), "\(hours)")

        // A token Home Assistant refuses (auth_invalid): the delivery gives up saying so, and
        // neither token is printed.
        let wrongToken = directory.path("wrong-token")
        try Data("not-a-token-\(UUID().uuidString)\n".utf8).write(to: URL(fileURLWithPath: wrongToken))
        var add = try IngestdBinary.run(["sinks", "add", "refused", "ws://127.0.0.1:\(port)", "--token", "@\(wrongToken)",
                                         "--all-types", "--gateway-id", "gw", "--store", fixture.path])
        try #require(add.status == 0, "\(add.stderr)")
        let refused = try IngestdBinary.run(["sinks", "deliver", "refused", "--retries", "1", "--store", fixture.path])
        #expect(refused.status == 69 && refused.stderr.contains("the access token was refused"), "\(refused.stderr)")
        let secret = try String(contentsOfFile: wrongToken, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!refused.stderr.contains(secret) && !refused.stdout.contains(secret), "the refused token was printed")

        // wss:// through a TLS proxy in front of Home Assistant (as a reverse proxy would be), its
        // certificate trusted with --ca-file: the same statistics; without --ca-file the
        // certificate is refused and nothing is imported.
        let certificate = directory.path("proxy.pem"), key = directory.path("proxy.key")
        let made = try runTool("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                                                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                                    "-keyout", key, "-out", certificate])
        try #require(made.status == 0, "openssl: \(made.output)")
        let tlsPort = try freePort()
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        proxy.arguments = ["300", "/usr/bin/python3", Self.tlsProxy, certificate, key, String(tlsPort), String(port)]
        let proxyOutput = Pipe(), proxyInput = Pipe()
        proxy.standardOutput = proxyOutput
        proxy.standardInput = proxyInput  // closed at the end: the proxy exits
        try proxy.run()
        defer {
            try? proxyInput.fileHandleForWriting.close()
            proxy.waitUntilExit()
        }
        let ready = String(decoding: proxyOutput.fileHandleForReading.availableData, as: UTF8.self)
        try #require(ready.contains("READY"), "the TLS proxy did not start: \(ready)")
        add = try IngestdBinary.run(["sinks", "add", "untrusted", "wss://127.0.0.1:\(tlsPort)", "--token", "@\(work)/token",
                                     "--all-types", "--gateway-id", "gw2", "--store", fixture.path])
        try #require(add.status == 0, "\(add.stderr)")
        let untrusted = try IngestdBinary.run(["sinks", "deliver", "untrusted", "--retries", "1", "--store", fixture.path])
        #expect(untrusted.status == 69, "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("the TLS handshake failed") && untrusted.stderr.contains("--ca-file"), "\(untrusted.stderr)")
        let remove2 = try IngestdBinary.run(["sinks", "remove", "history", "--store", fixture.path])
        try #require(remove2.status == 0, "\(remove2.stderr)")
        add = try IngestdBinary.run(["sinks", "add", "history", "wss://127.0.0.1:\(tlsPort)", "--token", "@\(work)/token",
                                     "--ca-file", certificate, "--all-types", "--gateway-id", "gw", "--store", fixture.path])
        try #require(add.status == 0, "\(add.stderr)")
        try deliver()
        let fifth = try statistics(5)
        try Self.expectEqualToIngestd(fifth, store: fixture.path)
        for id in ["ingestd:gw_me_heart_rate", "ingestd:gw_me_step_count"] {
            #expect(try Self.rows(fifth, id: id) == Self.rows(fourth, id: id), "\(id)")
        }
    }
}
