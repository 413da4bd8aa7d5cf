import Delivery
import Foundation
import HealthModel
import LocalPostgres
import TestSupport
import Testing

/// Issue 32: a `--store` URL is never a file path. Every command is run with a fleet's
/// `postgresql://` store in an empty current directory (and an empty home): it either works
/// against the real fleet database or exits 64 naming the store it needs, and no file or directory
/// appears anywhere.
@Suite(.serialized, .offCooperativePool) struct FleetStoreURLTests {
    /// How a command must answer a fleet's URL.
    enum Expected {
        /// It reads the fleet database and exits 0.
        case works
        /// A usage error (64) whose message contains every one of these.
        case refused([String])
    }

    /// Runs `ingestd` in `directory`, killed after 60 s (a command that took the URL for a store
    /// file and started a daemon would not end by itself).
    private func run(_ arguments: [String], directory: String, home: String) throws -> IngestdBinary.Output {
        let environment = ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
                           "XDG_RUNTIME_DIR": home + "/run", "XDG_STATE_HOME": home + "/state"]
        let (process, out, err) = try IngestdBinary.start(arguments, environment: environment, directory: directory)
        let deadline = DispatchTime.now() + 60
        DispatchQueue.global().asyncAfter(deadline: deadline) { if process.isRunning { process.terminate() } }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return IngestdBinary.Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                                    stderr: String(decoding: stderr, as: UTF8.self))
    }

    private func contents(_ path: String) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test func everyCommandUsesTheFleetDatabaseOrRefusesItWithoutCreatingAFile() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        // A fleet with one gateway's steps, so the query commands have something to read.
        let gateway = try TemporaryDirectory("fleet-url-gateway")
        let fixture = try StoreFixture(directory: gateway)
        try fixture.addSteps(12)
        var options = PostgresSinkOptions()
        options.gatewayID = "gw"
        options.timeoutSeconds = 5
        #expect(try fixture.deliver(fixture.addSink("fleet", url: server.url(), types: nil, options: options))
                == .caughtUp(delivered: 12, deadLettered: 0))
        let inputs = try TemporaryDirectory("fleet-url-inputs")
        let jsonl = inputs.path("a.jsonl")
        try (HealthRecordEncoder().encode(QuantitySample(
            type: .stepCount, quantity: Quantity(value: 5, unit: QuantityType.stepCount.canonicalUnit),
            start: Date(timeIntervalSince1970: 1_780_000_000), end: Date(timeIntervalSince1970: 1_780_000_060), source: "band")) + "\n")
            .write(toFile: jsonl, atomically: true, encoding: .utf8)
        let xml = inputs.path("export.xml")
        try "<HealthData locale=\"en_US\"></HealthData>\n".write(toFile: xml, atomically: true, encoding: .utf8)

        // A password in the URL (ignored by the test server's trust login) must never be printed.
        let password = "s3cret-horse"
        let url = "postgresql://postgres:\(password)@127.0.0.1:\(server.port)/postgres"
        let local = ["local store file", "sinks add NAME postgresql://"]
        let commands: [([String], Expected)] = [
            (["samples", "stepCount"], .works),
            (["stats", "stepCount", "--sum"], .works),
            (["today"], .works),
            (["changes"], .works),
            (["sources"], .works),
            (["status"], .works),
            (["export", "--format", "jsonl"], .works),
            (["export", "--format", "csv"], .works),
            (["watch", "--since", "0", "--count", "1"], .works),
            (["run", "--no-usb", "--no-ble"], .refused(local)),
            (["replay", jsonl], .refused(local)),
            (["import", xml], .refused(local)),
            (["auth", "list"], .refused(local)),
            (["auth", "grant", "band", "--all"], .refused(local)),
            (["auth", "revoke", "band", "stepCount"], .refused(local)),
            (["auth", "deny", "band", "--all"], .refused(local)),
            (["auth", "pending"], .refused(local)),
            (["priority", "stepCount"], .refused(local)),
            (["priority", "stepCount", "phone", "band"], .refused(local)),
            (["profile", "show"], .refused(local)),
            (["profile", "set", "--biological-sex", "female"], .refused(local)),
            (["people", "add", "ann"], .refused(local)),
            (["people", "list"], .refused(local)),
            (["people", "remove", "ann"], .refused(local)),
            (["devices", "assign", "C8:47:8C:00:11:22", "me"], .refused(local)),
            (["unassigned"], .refused(local)),
            (["assign", UUID().uuidString, "me"], .refused(local)),
            (["sinks", "add", "ha", "http://127.0.0.1:9/x", "--all-types"], .refused(local)),
            (["sinks", "list"], .refused(local)),
            (["sinks", "remove", "ha"], .refused(local)),
            (["sinks", "deliver"], .refused(local)),
            (["sinks", "dead-letters", "ha"], .refused(local)),
            (["sinks", "retry", "ha"], .refused(local)),
            // Commands that have no store refuse the option itself.
            (["decode", jsonl], .refused(["--store"])),
            (["capture", "--out", "x.pcapng", "--seconds", "1"], .refused(["--store"])),
            (["devices", "list"], .refused(["--store"])),
            (["units", "list"], .refused(["--store"])),
            (["types"], .refused(["--store"])),
            (["adapters"], .refused(["--store"])),
            (["udev-rules"], .refused(["--store"])),
        ]
        for (arguments, expected) in commands {
            let directory = try TemporaryDirectory("fleet-url-cwd")
            let home = try TemporaryDirectory("fleet-url-home")
            let output = try run(arguments + ["--store", url], directory: directory.url.path, home: home.url.path)
            let shown = (["ingestd"] + arguments).joined(separator: " ")
            switch expected {
            case .works:
                #expect(output.status == 0, "\(shown): \(output.stderr)")
            case .refused(let phrases):
                #expect(output.status == 64, "\(shown): exit \(output.status): \(output.stderr)")
                for phrase in phrases { #expect(output.stderr.contains(phrase), "\(shown): \(output.stderr)") }
            }
            #expect(!output.stdout.contains(password) && !output.stderr.contains(password), "\(shown) printed the password")
            #expect(contents(directory.url.path).isEmpty, "\(shown) created \(contents(directory.url.path))")
            #expect(contents(home.url.path).isEmpty, "\(shown) created \(contents(home.url.path)) in the home directory")
        }
        // The query commands' answers are the fleet's.
        let directory = try TemporaryDirectory("fleet-url-cwd")
        let home = try TemporaryDirectory("fleet-url-home")
        let samples = try run(["samples", "stepCount", "--json", "--store", url], directory: directory.url.path, home: home.url.path)
        #expect(samples.stdout.split(separator: "\n").count == 12)
        // postgres:// is the same; any other scheme is not a store, for every command.
        let short = try run(["sources", "--store", server.tcpURL().replacingOccurrences(of: "postgresql://", with: "postgres://")],
                            directory: directory.url.path, home: home.url.path)
        #expect(short.status == 0, "\(short.stderr)")
        for arguments in [["samples", "stepCount"], ["replay", jsonl], ["auth", "list"]] {
            for other in ["file:///tmp/health.sqlite", "sqlite://health.sqlite", "https://fleet.example/db"] {
                let output = try run(arguments + ["--store", other], directory: directory.url.path, home: home.url.path)
                #expect(output.status == 64, "\(arguments) \(other): \(output.stderr)")
                #expect(output.stderr.contains("--store"), "\(arguments) \(other): \(output.stderr)")
            }
        }
        #expect(contents(directory.url.path).isEmpty && contents(home.url.path).isEmpty)
    }
}
