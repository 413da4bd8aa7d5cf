import ArgumentParsing
import BuiltinAdapters
import Foundation
import Logging
import SQLiteStore
import TestSupport
import Testing
@testable import IngestCLI

/// `ingestd doctor` against real stores in a temporary directory: the checks' verdicts, their
/// fixes, the JSON shape, the exit status, and that no sink secret is printed.
@Suite struct DoctorCommandTests {
    let directory: URL
    var store: String { directory.appendingPathComponent("health.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-doctor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    func run(_ arguments: [String]) async -> (status: Int32, stdout: [String], stderr: [String]) {
        let out = CapturingWriter()
        let err = CapturingWriter()
        let context = CommandContext(stdout: out, stderr: err, environment: ["HOME": directory.path], label: "ingestd")
        let status = await CommandLineRunner.run(root: Ingestd.self, arguments: arguments, context: context)
        return (status, out.lines, err.lines)
    }

    /// A store made as ingestd makes it (schema current, mode 0600).
    func makeStore() throws {
        let made = try HealthStore(path: store)
        made.close()
    }

    func line(_ lines: [String], _ id: String) -> String? {
        lines.first { $0.dropFirst(2).hasPrefix(id + ":") || $0.dropFirst(2).hasPrefix(id + " [") }
    }

    @Test func aGoodStorePassesEveryStoreCheck() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        let result = await run(["doctor", "--only", "store", "--store", store])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(line(result.stdout, "storePermissions")?.hasPrefix("✓") == true)
        #expect(line(result.stdout, "storeIntegrity") == "✓ storeIntegrity: quick_check: ok")
        #expect(line(result.stdout, "storeSchema")?.hasPrefix("✓ storeSchema: schema version") == true)
        #expect(line(result.stdout, "diskSpace")?.hasPrefix("✓") == true)
        #expect(result.stdout.last == "4 ok, 0 warnings, 0 failures, 0 skipped")
    }

    /// Mode 0644 fails with the chmod that fixes it, and doctor does not fix it itself (opening the
    /// store would have tightened the mode).
    @Test func aWorldReadableStoreFailsWithTheChmodFix() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        #expect(chmod(store, 0o644) == 0)
        let result = await run(["doctor", "--only", "store,sinks", "--store", store])
        #expect(result.status == 1)
        #expect(line(result.stdout, "storePermissions")
                == "✗ storePermissions: \(store) has mode 0644: other users can read health data — fix: chmod 600 \(store)")
        #expect(line(result.stdout, "sink")?.hasPrefix("- sink: not read") == true)
        let mode = (try FileManager.default.attributesOfItem(atPath: store)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o644)
    }

    @Test func aFileThatIsNoDatabaseFailsTheIntegrityCheck() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(FileManager.default.createFile(atPath: store, contents: Data(repeating: 0x5A, count: 8192),
                                               attributes: [.posixPermissions: 0o600]))
        let result = await run(["doctor", "--only", "store", "--store", store])
        #expect(result.status == 1)
        let integrity = try #require(line(result.stdout, "storeIntegrity"))
        #expect(integrity.hasPrefix("✗ storeIntegrity: \(store) cannot be read as a database"))
        #expect(integrity.contains("fix: restore the store from a backup"))
    }

    /// A store with pages overwritten after the header: SQLite opens it, quick_check finds the damage.
    @Test func aStoreWithDamagedPagesFailsTheIntegrityCheck() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        let handle = try #require(FileHandle(forUpdatingAtPath: store))
        let size = try handle.seekToEnd()
        #expect(size > 8192)
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4096))
        try handle.close()
        let result = await run(["doctor", "--only", "store", "--store", store])
        #expect(result.status == 1)
        #expect(line(result.stdout, "storeIntegrity")?.hasPrefix("✗ storeIntegrity: ") == true, "\(result.stdout)")
    }

    /// A sink whose receiver is not listening: unreachable with the reason and the fix; neither the
    /// URL's password nor the --password secret appears anywhere.
    @Test func aSinkAtAClosedPortIsUnreachableAndNoSecretIsPrinted() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try freePort()
        let added = await run(["sinks", "add", "broker", "mqtt://anna:UrlPassw0rd@127.0.0.1:\(port)",
                               "--password", "Sup3rS3cretPW", "--types", "heartRate", "--store", store])
        #expect(added.status == 0, "\(added.stderr)")
        for arguments in [["--only", "sinks"], ["--only", "sinks", "--json"]] {
            let result = await run(["doctor", "--store", store] + arguments)
            #expect(result.status == 1)
            let text = (result.stdout + result.stderr).joined(separator: "\n")
            #expect(!text.contains("UrlPassw0rd"))
            #expect(!text.contains("Sup3rS3cretPW"))
            #expect(text.contains("mqtt://127.0.0.1:\(port) unreachable: connection refused (127.0.0.1:\(port))"), "\(text)")
            #expect(text.contains("start the receiver at 127.0.0.1:\(port)"))
        }
    }

    /// `--json`: one object, camelCase keys, every check with its status and fix.
    @Test func jsonIsOneObjectWithEveryCheck() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeStore()
        #expect(chmod(store, 0o640) == 0)
        let result = await run(["doctor", "--only", "store,clock", "--store", store, "--json"])
        #expect(result.status == 1)
        #expect(result.stdout.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.joined().utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["passed", "ok", "warnings", "failures", "skipped", "checks"])
        #expect(object["passed"] as? Bool == false)
        #expect(object["failures"] as? Int == 1)
        let checks = try #require(object["checks"] as? [[String: Any]])
        #expect(checks.map { $0["id"] as? String } == ["storePermissions", "storeIntegrity", "storeSchema", "diskSpace", "clock"])
        for check in checks {
            #expect(Set(check.keys) == ["id", "group", "subject", "status", "summary", "fix"])
        }
        let permissions = try #require(checks.first)
        #expect(permissions["status"] as? String == "fail")
        #expect(permissions["group"] as? String == "store")
        #expect(permissions["fix"] as? String == "chmod 600 \(store)")
    }

    @Test func anUnknownGroupIsAUsageError() async {
        let result = await run(["doctor", "--only", "store,radio"])
        #expect(result.status == 64)
        #expect(result.stderr.joined().contains("radio"))
    }

    /// A check that outlives its limit is a failure naming the limit; the command does not wait for it.
    /// Off the cooperative pool: it measures time, and other suites may hold the pool's threads.
    @Test(.offCooperativePool) func aCheckThatHangsFailsWithinItsLimit() async {
        struct Hanging: DoctorCheck {
            let group = DoctorGroup.clock
            let id = "hanging"
            var timeLimit: Duration { .milliseconds(200) }
            func run(_ setting: DoctorSetting) -> [DoctorFinding] {
                Thread.sleep(forTimeInterval: 5)
                return [DoctorFinding(id, group, .ok, "finished")]
            }
        }
        let started = ContinuousClock.now
        let findings = await DoctorChecks.run([Hanging()], setting: DoctorSetting(storePath: store, logger: Self.logger))
        #expect(ContinuousClock.now - started < .seconds(3))
        #expect(findings.map(\.status) == [.fail])
        #expect(findings.first?.summary == "did not finish within 0.2 s")
    }

    @Test func capabilitiesComeFromCapEff() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("status").path
        var setting = DoctorSetting(storePath: store, logger: Self.logger)
        setting.processStatusFile = file
        let cases: [(String, DoctorStatus)] = [("0000000000000000", .fail), ("0000000000002000", .warn), ("0000003fffffffff", .ok)]
        for (mask, expected) in cases {
            try "Name:\tingestd\nCapInh:\t0000000000000000\nCapEff:\t\(mask)\n".write(toFile: file, atomically: true, encoding: .utf8)
            let finding = try #require(CapabilitiesCheck().run(setting).first)
            #expect(finding.status == expected, "\(mask)")
            if expected != .ok { #expect(finding.fix?.contains("setcap cap_net_raw,cap_net_admin+ep") == true) }
        }
    }

    @Test func aSoftBlockedRadioFailsWithRFKillUnblock() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let rfkill = directory.appendingPathComponent("rfkill")
        let entry = rfkill.appendingPathComponent("rfkill0")
        try FileManager.default.createDirectory(at: entry, withIntermediateDirectories: true)
        for (name, value) in [("type", "bluetooth\n"), ("name", "hci0\n"), ("soft", "1\n"), ("hard", "0\n")] {
            try value.write(to: entry.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        var setting = DoctorSetting(storePath: store, logger: Self.logger)
        setting.rfkillDirectory = rfkill.path
        #expect(RFKillCheck().run(setting) == [DoctorFinding("rfkill", .bluetooth, .fail, "Bluetooth is soft-blocked by rfkill (hci0)",
                                                             fix: "sudo rfkill unblock bluetooth")])
        try "0\n".write(to: entry.appendingPathComponent("soft"), atomically: true, encoding: .utf8)
        #expect(RFKillCheck().run(setting).map(\.status) == [.ok])
    }

    /// The installed rules against what 'ingestd udev-rules' prints: none fails, an older set warns,
    /// the current set (seen once through a symlinked directory, as /lib on merged /usr) passes.
    @Test func udevRulesAreFoundAndComparedWithTheGeneratedOnes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let rules = directory.appendingPathComponent("rules.d")
        try FileManager.default.createDirectory(at: rules, withIntermediateDirectories: true)
        let linked = directory.appendingPathComponent("linked")
        try FileManager.default.createSymbolicLink(at: linked, withDestinationURL: rules)
        var setting = DoctorSetting(storePath: store, logger: Self.logger)
        setting.udevRuleDirectories = [rules.path, linked.path]
        #expect(UdevRulesCheck().run(setting).map(\.status) == [.fail])
        let file = rules.appendingPathComponent("70-ingestd.rules")
        let generated = UdevRules.render(adapters: BuiltinAdapters.usb.map(\.descriptor))
        let older = generated.split(separator: "\n").dropLast().joined(separator: "\n")
        try older.write(to: file, atomically: true, encoding: .utf8)
        let stale = try #require(UdevRulesCheck().run(setting).first)
        #expect(stale.status == .warn)
        #expect(stale.fix?.hasPrefix("ingestd udev-rules | sudo tee /etc/udev/rules.d/70-ingestd.rules") == true)
        try generated.write(to: file, atomically: true, encoding: .utf8)
        #expect(UdevRulesCheck().run(setting) == [DoctorFinding("udevRules", .usb, .ok,
                                                                "\(file.path) covers every supported USB device")])
    }

    static let logger = Logger(label: "doctor-test", handler: RecordingLogHandler())
}
