import ArgumentParsing
import Foundation
import Logging
import TestSupport
import Testing
@testable import IngestCLI

/// `ingestd adapters` over a plugin directory of small shell-script plugins.
@Suite struct AdaptersTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-adapters-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try plugin("acme", """
            #!/bin/sh
            printf '%s\\n' '{"protocol":1,"id":"acme","name":"Acme scale","version":"2","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^ACME"}}]}'
            """)
        try plugin("broken", """
            #!/bin/sh
            echo 'cannot find libfoo.so.1' >&2
            exit 3
            """)
    }

    func plugin(_ id: String, _ script: String) throws {
        let path = directory.appendingPathComponent("ingestd-adapter-\(id)").path
        try ExecutableFile.write(Array((script + "\n").utf8), to: path)
    }

    func run(_ arguments: [String]) async -> (status: Int32, stdout: [String], stderr: [String]) {
        let out = CapturingWriter()
        let err = CapturingWriter()
        let context = CommandContext(stdout: out, stderr: err, environment: ["HOME": directory.path], label: "ingestd")
        let status = await CommandLineRunner.run(root: AdaptersCommand.self, arguments: arguments, context: context)
        return (status, out.lines, err.lines)
    }

    @Test func listsBuiltInAndExternalAdaptersAsJSON() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = await run(["--plugins", directory.path, "--status", directory.appendingPathComponent("none.json").path, "--json"])
        #expect(result.status == 0)
        let builtIn = result.stdout.filter { $0.contains("\"kind\":\"built-in\"") }
        #expect(builtIn.contains { $0.hasPrefix("{\"id\":\"xiaomi-scale\",\"kind\":\"built-in\",\"name\":\"Xiaomi Mi scales\"") })
        #expect(builtIn.allSatisfy { $0.contains("\"state\":\"ok\"") })
        let acmePath = directory.appendingPathComponent("ingestd-adapter-acme").path
        let brokenPath = directory.appendingPathComponent("ingestd-adapter-broken").path
        #expect(result.stdout.suffix(2) == [
            "{\"id\":\"acme\",\"kind\":\"external\",\"name\":\"Acme scale\",\"version\":\"2\",\"path\":\"\(acmePath)\",\"protocol\":1,\"connects\":false,\"state\":\"ok\","
                + "\"produces\":[\"HKQuantityTypeIdentifierBodyMass\"],\"matches\":[\"ble name /^ACME/\"]}",
            "{\"id\":\"broken\",\"kind\":\"external\",\"path\":\"\(brokenPath)\",\"state\":\"broken\","
                + "\"reason\":\"--describe exited with status 3: cannot find libfoo.so.1\",\"produces\":[],\"matches\":[]}",
        ])
        #expect(result.stderr.contains { $0.contains("broken") && $0.contains("not used: --describe exited with status 3") })
    }

    /// The catalogue: each built-in adapter's line says how it gets its data and lists its models
    /// (maker, name, what the model offers, what we read, note, capture); `--markdown` prints the
    /// README's device table, one row per model.
    @Test func listsEachBuiltInAdaptersModels() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = await run(["--plugins", directory.path, "--status", directory.appendingPathComponent("none.json").path, "--json"])
        #expect(result.status == 0)
        let qn = try #require(result.stdout.first { $0.hasPrefix("{\"id\":\"qn-scale-broadcast\",") })
        #expect(qn.contains("\"how\":\"advertisements\",\"models\":[{\"maker\":\"FITINDEX\",\"name\":\"FT-26R-W\",\"offers\":\"weight\","
            + "\"reads\":[\"HKQuantityTypeIdentifierBodyMass\"],\"capture\":\"ft26r-weighings\"}"), "\(qn)")
        let etekcity = try #require(result.stdout.first { $0.hasPrefix("{\"id\":\"etekcity-scale\",") })
        #expect(etekcity.contains("{\"maker\":\"Etekcity\",\"name\":\"ESF-551\",\"offers\":\"model id in advertisements; weight and impedance over GATT\","
            + "\"reads\":[],\"note\":\"recognised; its weighing needs a connection\",\"capture\":\"esf551-advertisement\"}"), "\(etekcity)")
        let builtIn = result.stdout.filter { $0.contains("\"kind\":\"built-in\"") }
        #expect(builtIn.allSatisfy { $0.contains("\"models\":[{") })
        #expect(!result.stdout.filter { $0.contains("\"kind\":\"external\"") }.contains { $0.contains("\"models\"") })

        let table = await run(["--markdown"])
        #expect(table.status == 0)
        #expect(table.stdout.first == "| Maker | Model | Adapter | How | The device offers | We read | Capture |")
        #expect(table.stdout.contains("| Polar | H10 | `heart-rate-strap-broadcast` | advertisements | heart rate (advertised and over GATT) | `heartRate` | `polar-h10` |"))
        let both = await run(["--markdown", "--json"])
        #expect(both.status == 64)
    }

    @Test func showsTheRunningDaemonsRestartState() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let acmePath = directory.appendingPathComponent("ingestd-adapter-acme").path
        let status = directory.appendingPathComponent("adapters.json").path
        // Written as a daemon with this (running) process id would write it.
        let snapshot = """
            {"adapters":[{"droppedAdvertisements":0,"failures":3,"id":"acme","nextAttempt":"2027-01-15T08:00:04Z","path":"\(acmePath)",\
            "reason":"crashed with signal 6 (SIGABRT)","records":12,"rejectedLines":0,"starts":3,"state":"restarting"}],\
            "pid":\(ProcessInfo.processInfo.processIdentifier),"written":"2027-01-15T08:00:00Z"}
            """
        try Data(snapshot.utf8).write(to: URL(fileURLWithPath: status))
        let table = await run(["--plugins", directory.path, "--status", status])
        #expect(table.status == 0)
        let acme = try #require(table.stdout.first { $0.hasPrefix("acme ") })
        #expect(acme.contains("external"))
        #expect(acme.contains("restarting: next attempt 2027-01-15T08:00:04Z (crashed with signal 6 (SIGABRT))"))
        #expect(acme.hasSuffix("bodyMass"))
        #expect(table.stdout.contains { $0.hasPrefix("broken ") && $0.contains("broken: --describe exited with status 3") })

        let json = await run(["--plugins", directory.path, "--status", status, "--json"])
        let line = try #require(json.stdout.first { $0.hasPrefix("{\"id\":\"acme\"") })
        #expect(line.contains("\"state\":\"restarting\",\"nextAttempt\":\"2027-01-15T08:00:04Z\",\"reason\":\"crashed with signal 6 (SIGABRT)\""))
        #expect(line.hasSuffix("\"starts\":3,\"failures\":3,\"records\":12,\"rejectedLines\":0,\"droppedAdvertisements\":0}"))
    }

    @Test func aStatusFileOfAStoppedDaemonIsIgnored() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let acmePath = directory.appendingPathComponent("ingestd-adapter-acme").path
        let status = directory.appendingPathComponent("adapters.json").path
        let snapshot = """
            {"adapters":[{"droppedAdvertisements":0,"failures":3,"id":"acme","nextAttempt":"2027-01-15T08:00:04Z","path":"\(acmePath)",\
            "reason":"crashed","records":12,"rejectedLines":0,"starts":3,"state":"restarting"}],"pid":2147483646,"written":"2027-01-15T08:00:00Z"}
            """
        try Data(snapshot.utf8).write(to: URL(fileURLWithPath: status))
        let json = await run(["--plugins", directory.path, "--status", status, "--json"])
        let line = try #require(json.stdout.first { $0.hasPrefix("{\"id\":\"acme\"") })
        #expect(line.contains("\"state\":\"ok\""))
    }

    /// Adapters that may claim the same device are named in both listings.
    @Test func overlappingClaimsAreShown() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try plugin("my-scale", """
            #!/bin/sh
            printf '%s\\n' '{"protocol":1,"id":"my-scale","name":"My scale","version":"1","produces":["bodyMass"],"matches":[{"ble":{"serviceUUIDs":["181D"]}}]}'
            """)
        let status = directory.appendingPathComponent("none.json").path
        let json = await run(["--plugins", directory.path, "--status", status, "--json"])
        let mine = try #require(json.stdout.first { $0.hasPrefix("{\"id\":\"my-scale\"") })
        #expect(mine.hasSuffix("\"overlaps\":[\"xiaomi-scale\",\"gatt-health\"]}"), "\(mine)")
        let acme = try #require(json.stdout.first { $0.hasPrefix("{\"id\":\"acme\"") })
        #expect(!acme.contains("overlaps"))
        let table = await run(["--plugins", directory.path, "--status", status])
        #expect(table.stdout.contains("my-scale: also xiaomi-scale, gatt-health"), "\(table.stdout)")
    }
}
