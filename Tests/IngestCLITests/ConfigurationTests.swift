import ArgumentParsing
import Foundation
import Testing
@testable import IngestCLI

/// The configuration every command reads (issue 30, "Defaults"): /etc/ingestd/ingestd.conf and
/// ~/.config/ingestd/config beneath the environment and the command line. Every file is a real one
/// in the scenario's temporary directory; the scenario's "/etc" is a directory of its own.
@Suite struct ConfigurationTests {
    /// `ingestd config show --json` as (key, value, origin text) per line.
    private func shown(_ scenario: Scenario, _ arguments: [String] = [], environment: [String: String] = [:]) async throws
        -> [String: [(value: String?, origin: String)]] {
        let result = await scenario.run(["config", "show", "--json"] + arguments, withStore: false, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        var settings: [String: [(value: String?, origin: String)]] = [:]
        for line in result.stdout {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let key = try #require(object["key"] as? String)
            let origin = try #require(object["origin"] as? String)
            let detail: String = switch origin {
            case "file": "\(object["file"] as? String ?? "?"):\(object["line"] as? Int ?? 0)"
            case "environment": "env \(object["variable"] as? String ?? "?")"
            case "commandLine": "cli \(object["option"] as? String ?? "?")"
            default: origin
            }
            settings[key, default: []].append((object["value"] as? String, detail))
        }
        return settings
    }

    private func write(_ path: String, _ lines: [String]) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func system(_ scenario: Scenario) -> String { scenario.systemConfigurationDirectory + "/ingestd/ingestd.conf" }
    private func user(_ scenario: Scenario) -> String { scenario.directory.path + "/.config/ingestd/config" }

    @Test func theFilesAreTheSystemsUnderItsDirectoryAndTheUsersUnderXDGConfigHome() {
        #expect(Configuration.systemPath(directory: "/etc") == "/etc/ingestd/ingestd.conf")
        #expect(Configuration.systemPath(directory: "/tmp/root/etc/") == "/tmp/root/etc/ingestd/ingestd.conf")
        #expect(Configuration.userPath(environment: ["HOME": "/home/anna"]) == "/home/anna/.config/ingestd/config")
        #expect(Configuration.userPath(environment: ["HOME": "/home/anna", "XDG_CONFIG_HOME": "/x/conf"]) == "/x/conf/ingestd/config")
        // A relative XDG_CONFIG_HOME is invalid by the XDG specification and ignored.
        #expect(Configuration.userPath(environment: ["HOME": "/home/anna", "XDG_CONFIG_HOME": "conf"]) == "/home/anna/.config/ingestd/config")
        #expect(Configuration.userPath(environment: [:]) == nil)
    }

    @Test func linesAreReadWithTheirOriginsAndCommentsSkipped() throws {
        let file = try ConfigurationFile(text: """
            # the bathroom
            store = /srv/health.sqlite

              tz=Europe/Berlin
            adapter = F9:E5:10:60:E8:60=dsd6-band
            adapter-option = yunmai-height-cm=181
            """, path: "/etc/ingestd/ingestd.conf")
        #expect(file.settings == [
            ConfigurationSetting(key: .store, value: "/srv/health.sqlite", origin: .file(path: "/etc/ingestd/ingestd.conf", line: 2)),
            ConfigurationSetting(key: .tz, value: "Europe/Berlin", origin: .file(path: "/etc/ingestd/ingestd.conf", line: 4)),
            ConfigurationSetting(key: .adapter, value: "F9:E5:10:60:E8:60=dsd6-band", origin: .file(path: "/etc/ingestd/ingestd.conf", line: 5)),
            ConfigurationSetting(key: .adapterOption, value: "yunmai-height-cm=181", origin: .file(path: "/etc/ingestd/ingestd.conf", line: 6)),
        ])
    }

    @Test func aBadLineNamesTheFileTheLineAndTheValue() {
        let cases: [(String, ConfigurationError, String)] = [
            ("# first\nstroe = /x", .unknownKey(path: "x.conf", line: 2, key: "stroe", suggestion: "store"),
             "x.conf:2: unknown key \"stroe\" (did you mean store?); keys: store, tz, person, units, log-level, adapter, adapter-option"),
            ("tz", .malformedLine(path: "x.conf", line: 1, text: "tz"), "x.conf:1: expected KEY = VALUE, got \"tz\""),
            ("units =  ", .emptyValue(path: "x.conf", line: 1, key: .units), "x.conf:1: units has no value"),
            ("tz = Mars/Olympus", .badValue(path: "x.conf", line: 1, key: .tz, value: "Mars/Olympus", reason: "not a known IANA time zone"),
             "x.conf:1: invalid tz \"Mars/Olympus\": not a known IANA time zone"),
            ("units = imperial", .badValue(path: "x.conf", line: 1, key: .units, value: "imperial", reason: "expected metric or us"),
             "x.conf:1: invalid units \"imperial\": expected metric or us"),
            ("log-level = chatty", .badValue(path: "x.conf", line: 1, key: .logLevel, value: "chatty",
                                             reason: "expected one of trace, debug, info, notice, warning, error, critical"),
             "x.conf:1: invalid log-level \"chatty\": expected one of trace, debug, info, notice, warning, error, critical"),
            ("adapter-option = =1", .badValue(path: "x.conf", line: 1, key: .adapterOption, value: "=1", reason: "expected KEY=VALUE"),
             "x.conf:1: invalid adapter-option \"=1\": expected KEY=VALUE"),
        ]
        for (text, error, message) in cases {
            #expect(throws: error, "\(text)") { try ConfigurationFile(text: text, path: "x.conf") }
            #expect(error.description == message)
            #expect(error.exitCode == ExitCode(78))
        }
        // A pin is checked as --adapter checks it; a URL's password is never repeated.
        #expect(throws: ConfigurationError.self) { try ConfigurationFile(text: "adapter = F9:E5:10:60:E8=dsd6-band", path: "x.conf") }
        do {
            _ = try ConfigurationFile(text: "store = mysql://u:hunter2@h/db", path: "x.conf")
            Issue.record("a mysql:// store was accepted")
        } catch {
            #expect(error.description == "x.conf:1: invalid store \"mysql://u:***@h/db\": a store file's path or a fleet's postgresql://… URL")
        }
    }

    /// Each layer wins over the next: command line > environment > user file > system file > default.
    @Test func eachLayerWinsOverTheNext() async throws {
        let scenario = try Scenario()
        let builtIn = try await shown(scenario)
        #expect(builtIn["store"]?.first?.value == scenario.directory.path + "/.local/share/ingestd/health.sqlite")
        #expect(builtIn["store"]?.first?.origin == "default")
        #expect(builtIn["units"]?.first?.value == "metric")
        #expect(builtIn["person"]?.first?.value == nil)

        try write(system(scenario), ["store = /srv/system.sqlite", "tz = UTC", "units = us", "person = sys", "log-level = warning"])
        let fromSystem = try await shown(scenario)
        #expect(fromSystem["store"]?.first?.value == "/srv/system.sqlite")
        #expect(fromSystem["store"]?.first?.origin == system(scenario) + ":1")
        #expect(fromSystem["log-level"]?.first?.origin == system(scenario) + ":5")

        try write(user(scenario), ["tz = Europe/Berlin", "store = /home/a/user.sqlite", "log-level = debug"])
        let fromUser = try await shown(scenario)
        #expect(fromUser["store"]?.first?.value == "/home/a/user.sqlite")
        #expect(fromUser["store"]?.first?.origin == user(scenario) + ":2")
        #expect(fromUser["tz"]?.first?.value == "Europe/Berlin")
        #expect(fromUser["units"]?.first?.value == "us")
        #expect(fromUser["units"]?.first?.origin == system(scenario) + ":3")

        let environment = ["INGESTD_STORE": "/run/env.sqlite", "INGESTD_LOG_LEVEL": "ERROR"]
        let fromEnvironment = try await shown(scenario, environment: environment)
        #expect(fromEnvironment["store"]?.first?.value == "/run/env.sqlite")
        #expect(fromEnvironment["store"]?.first?.origin == "env INGESTD_STORE")
        #expect(fromEnvironment["log-level"]?.first?.value == "error")
        #expect(fromEnvironment["tz"]?.first?.origin == user(scenario) + ":1")

        let fromCommandLine = try await shown(scenario, ["--store", "/tmp/cli.sqlite", "--units", "metric", "--log-level", "info"],
                                              environment: environment)
        #expect(fromCommandLine["store"]?.first?.value == "/tmp/cli.sqlite")
        #expect(fromCommandLine["store"]?.first?.origin == "cli --store")
        #expect(fromCommandLine["units"]?.first?.origin == "cli --units")
        #expect(fromCommandLine["log-level"]?.first?.origin == "cli --log-level")
        #expect(fromCommandLine["person"]?.first?.origin == system(scenario) + ":4")

        // XDG_CONFIG_HOME moves the user's file; INGESTD_CONFIG (and --config) replace both files.
        let elsewhere = scenario.directory.path + "/xdg"
        try write(elsewhere + "/ingestd/config", ["tz = Asia/Tokyo"])
        #expect(try await shown(scenario, environment: ["XDG_CONFIG_HOME": elsewhere])["tz"]?.first?.value == "Asia/Tokyo")
        let only = scenario.directory.path + "/only.conf"
        try write(only, ["units = us"])
        let instead = try await shown(scenario, environment: ["INGESTD_CONFIG": only])
        #expect(instead["units"]?.first?.origin == only + ":1")
        #expect(instead["tz"]?.first?.origin == "default")
        #expect(instead["store"]?.first?.origin == "default")
        #expect(try await shown(scenario, ["--config", only], environment: ["INGESTD_CONFIG": "/nonexistent"])["units"]?.first?.origin
            == only + ":1")
    }

    @Test func configShowPrintsEveryValueWhereItCameFromAndNoSecret() async throws {
        let scenario = try Scenario()
        try write(system(scenario), ["adapter = F9:E5:10:60:E8:60=dsd6-band", "adapter-option = uds-consent-code=4711",
                                     "adapter-option = yunmai-height-cm=181"])
        try write(user(scenario), ["store = postgresql://anna:hunter2@db.example/health", "tz = Europe/Berlin"])
        let result = await scenario.run(["config", "show"], withStore: false)
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        #expect(rows == [
            "KEY VALUE FROM",
            "store postgresql://anna:***@db.example/health \(user(scenario)):1",
            "tz Europe/Berlin \(user(scenario)):2",
            "person (the store's only person) default",
            "units metric default",
            "log-level info default",
            "adapter F9:E5:10:60:E8:60=dsd6-band \(system(scenario)):1",
            "adapter-option uds-consent-code=*** \(system(scenario)):2",
            "adapter-option yunmai-height-cm=181 \(system(scenario)):3",
            "",
            "Files read: \(system(scenario)), \(user(scenario))",
        ])
        // 'ingestd config' alone is 'config show'.
        let bare = await scenario.run(["config"], withStore: false)
        #expect(bare.status == 0 && bare.stdout == result.stdout, "\(bare.stderr)")
        let json = await scenario.run(["config", "show", "--json"], withStore: false)
        #expect(json.stdout.first == #"{"key":"store","value":"postgresql://anna:***@db.example/health","origin":"file","file":"\#(user(scenario))","line":1}"#)
        #expect(json.stdout.contains(#"{"key":"person","value":null,"origin":"default"}"#))
        #expect(json.stdout.contains(#"{"key":"adapter-option","value":"uds-consent-code=***","origin":"file","file":"\#(system(scenario))","line":2}"#))
        for output in [result.stdout, json.stdout] {
            #expect(!output.joined().contains("hunter2") && !output.joined().contains("4711"))
        }
        let absent = try Scenario()
        let none = await absent.run(["config", "show"], withStore: false)
        #expect(none.stdout.last == "Files read: \(system(absent)) (not present), \(user(absent)) (not present)")
    }

    /// The issue's "done when": `sudo -u ingestd ingestd today` finds the service's store from the
    /// configuration; here the configuration is INGESTD_CONFIG's (the service's is tested above).
    @Test func queriesFindTheStoreTimeZonePersonAndUnitsInTheConfiguration() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("walk.jsonl", [
            #"{"type":"stepCount","value":1000,"unit":"count","start":"2026-11-29T08:00:00+01:00","end":"2026-11-29T09:00:00+01:00","source":"A"}"#,
            #"{"type":"distanceWalkingRunning","value":1609.344,"unit":"m","start":"2026-11-29T08:00:00+01:00","end":"2026-11-29T09:00:00+01:00","source":"A"}"#,
        ])
        await scenario.run(["auth", "grant", "A", "--all"])
        #expect(await scenario.run(["replay", file]).status == 0)
        let configuration = try scenario.write("service.conf", ["store = \(scenario.store)", "tz = Europe/Berlin", "units = us"])
        let environment = ["INGESTD_CONFIG": configuration]
        let today = await scenario.run(["today", "--date", "2026-11-29", "--json"], withStore: false, environment: environment)
        #expect(today.status == 0, "\(today.stderr)")
        #expect(today.stdout == [#"{"date":"2026-11-29","tz":"Europe/Berlin","steps":1000,"distanceKm":1.609}"#])
        let text = await scenario.run(["today", "--date", "2026-11-29"], withStore: false, environment: environment)
        #expect(text.stdout.joined(separator: " ").contains("1000 steps, 1.00 mi"), "\(text.stdout)")
        let samples = await scenario.run(["samples", "stepCount", "--json"], withStore: false, environment: environment)
        #expect(samples.stdout.count == 1 && samples.stdout.first?.contains(#""value":1000"#) == true, "\(samples.stdout) \(samples.stderr)")
        // Without the configuration, the default store is empty.
        #expect(await scenario.run(["samples", "stepCount", "--json"], withStore: false).stdout.isEmpty)
        // The configured person is the one asked for; the command line wins.
        let someone = try scenario.write("someone.conf", ["store = \(scenario.store)", "person = nobody"])
        let unknown = await scenario.run(["today"], withStore: false, environment: ["INGESTD_CONFIG": someone])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.first?.hasPrefix("error: invalid value 'nobody' for --person (from \(someone):2): no such person") == true, "\(unknown.stderr)")
        let me = await scenario.run(["today", "--person", "me"], withStore: false, environment: ["INGESTD_CONFIG": someone])
        #expect(me.status == 0, "\(me.stderr)")
        // Not for sinks add, where --person narrows what a sink delivers.
        let sink = await scenario.run(["sinks", "add", "everyone", "http://127.0.0.1:1/x", "--all-types", "--all-people"],
                                      withStore: false, environment: ["INGESTD_CONFIG": someone])
        #expect(sink.status == 0, "\(sink.stderr)")
        // A fleet's URL from the configuration is refused by a command that needs the store file, naming the line.
        let fleet = try scenario.write("fleet.conf", ["store = postgresql://anna:hunter2@db.example/health"])
        let run = await scenario.run(["run", "--once", "--no-usb", "--no-ble"], withStore: false, environment: ["INGESTD_CONFIG": fleet])
        #expect(run.status == 64)
        #expect(run.stderr.first?.hasPrefix("error: invalid value 'postgresql://anna:***@db.example/health' for --store (from \(fleet):1): ") == true,
                "\(run.stderr)")
    }

    @Test func aBadOrUnreadableFileStopsEveryCommandWithExit78() async throws {
        let scenario = try Scenario()
        try write(user(scenario), ["tz = Europe/Berlin", "unit = us"])
        for arguments in [["today"], ["samples", "stepCount"], ["config", "show"]] {
            let result = await scenario.run(arguments, withStore: false)
            #expect(result.status == 78, "\(arguments)")
            #expect(result.stderr == ["error: \(user(scenario)):2: unknown key \"unit\" (did you mean units?); keys: store, tz, person, units, log-level, adapter, adapter-option"],
                    "\(result.stderr)")
        }
        try FileManager.default.removeItem(atPath: user(scenario))
        try FileManager.default.createDirectory(atPath: user(scenario), withIntermediateDirectories: true)
        let directory = await scenario.run(["today"], withStore: false)
        #expect(directory.status == 78)
        #expect(directory.stderr == ["error: cannot read configuration file \(user(scenario)): is a directory"])
        try FileManager.default.removeItem(atPath: user(scenario))
        try write(system(scenario), [])
        try Data([0x74, 0x7A, 0x20, 0x3D, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: system(scenario)))
        let binary = await scenario.run(["today"], withStore: false)
        #expect(binary.status == 78)
        #expect(binary.stderr == ["error: cannot read configuration file \(system(scenario)): not UTF-8 text"])
        // A file named on purpose must exist; a bad environment value names the variable.
        let missing = await scenario.run(["today"], withStore: false, environment: ["INGESTD_CONFIG": "/nonexistent/ingestd.conf"])
        #expect(missing.status == 66)
        #expect(missing.stderr == ["error: cannot open '/nonexistent/ingestd.conf' (named by INGESTD_CONFIG): no such file or directory"])
        try FileManager.default.removeItem(atPath: system(scenario))
        let badVariable = await scenario.run(["today"], withStore: false, environment: ["INGESTD_LOG_LEVEL": "chatty"])
        #expect(badVariable.status == 78)
        #expect(badVariable.stderr.first?.hasPrefix("error: INGESTD_LOG_LEVEL: invalid value \"chatty\"") == true, "\(badVariable.stderr)")
    }

    /// `ingestd run --config FILE`: the file's pins to an unknown adapter are refused as the command
    /// line's are, a bad pin names the file and line (78), a missing file exits 66. (No daemon starts.)
    @Test func theDaemonTakesItsPinsFromTheFile() async throws {
        let scenario = try Scenario()
        let unknown = try scenario.write("unknown.conf", ["adapter = F9:E5:10:60:E8:60=no-such-adapter"])
        let refused = await scenario.run(["run", "--config", unknown, "--no-usb", "--no-ble", "--once", "--listen", "0.1"])
        #expect(refused.status == 64)
        #expect(refused.stderr.first == "error: --adapter: no adapter \"no-such-adapter\" (ingestd adapters lists them)", "\(refused.stderr)")

        let malformed = try scenario.write("malformed.conf", ["# pins", "adapter = F9:E5:10:60:E8=dsd6-band"])
        let bad = await scenario.run(["run", "--config", malformed, "--no-usb", "--no-ble", "--once", "--listen", "0.1"])
        #expect(bad.status == 78)
        #expect(bad.stderr.first?.hasPrefix("error: \(malformed):2: invalid adapter \"F9:E5:10:60:E8=dsd6-band\": ") == true, "\(bad.stderr)")

        let missing = await scenario.run(["run", "--config", scenario.directory.appendingPathComponent("absent.conf").path,
                                          "--no-usb", "--no-ble", "--once", "--listen", "0.1"])
        #expect(missing.status == 66)

        // The file's pins and the command line's are one list: the command line's error is reported.
        let good = try scenario.write("good.conf", ["adapter = F9:E5:10:60:E8:60=dsd6-band", "adapter-option = yunmai-age=41"])
        let merged = await scenario.run(["run", "--config", good, "--adapter", "0590:0028=nope", "--no-usb", "--no-ble",
                                         "--once", "--listen", "0.1"])
        #expect(merged.status == 64)
        #expect(merged.stderr.first == "error: --adapter: no adapter \"nope\" (ingestd adapters lists them)", "\(merged.stderr)")
        // A pin in the system file reaches run as well, without --config.
        try write(system(scenario), ["adapter = F9:E5:10:60:E8:60=no-such-adapter"])
        let fromSystem = await scenario.run(["run", "--no-usb", "--no-ble", "--once", "--listen", "0.1"])
        #expect(fromSystem.stderr.first == "error: --adapter: no adapter \"no-such-adapter\" (ingestd adapters lists them)", "\(fromSystem.stderr)")
        // ...and not to replay, whose --adapter ID means something else.
        let records = try scenario.write("none.jsonl", [])
        #expect(await scenario.run(["replay", records]).status == 0)
    }
}
