import ArgumentParsing
import Foundation
import Logging
import Testing
@testable import IngestCLI
import HealthModel

/// End-to-end scenarios through the public commands, run in-process against a temporary store.
final class Scenario {
    let directory: URL
    var store: String { directory.appendingPathComponent("health.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    struct Result {
        var status: Int32
        var stdout: [String]
        var stderr: [String]
    }

    /// Where the scenario's system configuration lives (`/etc` of a real run): never the real one.
    var systemConfigurationDirectory: String { directory.appendingPathComponent("etc").path }

    /// Runs `ingestd ARGS` (with `--store` appended for store commands), with `HOME` the
    /// scenario's directory plus `environment`.
    @discardableResult
    func run(_ arguments: [String], withStore: Bool = true, environment: [String: String] = [:]) async -> Result {
        let out = CapturingWriter()
        let err = CapturingWriter()
        var context = CommandContext(stdout: out, stderr: err, environment: ["HOME": directory.path].merging(environment) { $1 },
                                     label: "ingestd")
        context.systemConfigurationDirectory = systemConfigurationDirectory
        let status = await CommandLineRunner.run(root: Ingestd.self, arguments: arguments + (withStore ? ["--store", store] : []),
                                                 context: context)
        return Result(status: status, stdout: out.lines, stderr: err.lines)
    }

    func write(_ name: String, _ lines: [String]) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

@Suite struct ScenarioTests {
    @Test func commandTreeIsWellFormed() {
        #expect(CommandTreeValidator.problems(root: Ingestd.self) == [])
    }

    @Test func unitsConvertPrintsTheNumberAlone() async throws {
        let scenario = try Scenario()
        let cases: [([String], String)] = [
            (["98.6", "degF", "degC"], "37"), (["1", "lb", "kg"], "0.45359237"), (["1", "in", "m"], "0.0254"),
            (["1", "mi", "m"], "1609.344"), (["1", "Cal", "J"], "4184"), (["1", "kcal", "Cal"], "1"),
            (["1", "mmHg", "Pa"], "133.322387415"), (["1", "fl_oz_us", "mL"], "29.5735295625"),
            (["60", "count/min", "count/s"], "1"), (["0", "degC", "K"], "273.15"), (["212", "degF", "K"], "373.15"),
            (["100", "mg/dL", "mmol<180.15588000005408>/L"], "5.55074860726"), (["2", "st", "lb"], "28"),
        ]
        for (arguments, expected) in cases {
            let result = await scenario.run(["units", "convert"] + arguments, withStore: false)
            #expect(result.status == 0)
            #expect(result.stdout == [expected], "\(arguments)")
        }
    }

    @Test func unitsConvertRefusesBadUnitsWithExit65() async throws {
        let scenario = try Scenario()
        for (arguments, message) in [
            (["1", "kg", "m"], "error: cannot convert \"kg\" to \"m\": incompatible units"),
            (["1", "foo", "kg"], "error: unknown unit \"foo\" in \"foo\""),
            (["1", "kg/", "kg"], "error: missing unit after \"/\" at position 3 in \"kg/\""),
            (["x", "kg", "lb"], "error: \"x\" is not a finite number"),
        ] {
            let result = await scenario.run(["units", "convert"] + arguments, withStore: false)
            #expect(result.status == 65)
            #expect(result.stderr == [message])
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func todayMergesOverlappingSourcesByPriority() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("walk.jsonl", [
            #"{"type":"stepCount","value":1000,"unit":"count","start":"2026-11-29T08:00:00+01:00","end":"2026-11-29T09:00:00+01:00","source":"A"}"#,
            #"{"type":"stepCount","value":600,"unit":"count","start":"2026-11-29T08:30:00+01:00","end":"2026-11-29T09:30:00+01:00","source":"B"}"#,
            #"{"type":"distanceWalkingRunning","value":800,"unit":"m","start":"2026-11-29T08:00:00+01:00","end":"2026-11-29T09:00:00+01:00","source":"A"}"#,
            #"{"type":"distanceWalkingRunning","value":0.3,"unit":"km","start":"2026-11-29T08:30:00+01:00","end":"2026-11-29T09:30:00+01:00","source":"B"}"#,
        ])
        await scenario.run(["auth", "grant", "A", "--all"])
        await scenario.run(["auth", "grant", "B", "stepCount", "HKQuantityTypeIdentifierDistanceWalkingRunning"])
        #expect(await scenario.run(["replay", file]).status == 0)
        let today = await scenario.run(["today", "--date", "2026-11-29", "--tz", "Europe/Berlin", "--json"])
        #expect(today.stdout == [#"{"date":"2026-11-29","tz":"Europe/Berlin","steps":1300,"distanceKm":0.95}"#])
        // B first: 600 + A's 08:00–08:30 half = 1100.
        await scenario.run(["priority", "stepCount", "B", "A"])
        let reordered = await scenario.run(["today", "--date", "2026-11-29", "--tz", "Europe/Berlin", "--json"])
        #expect(reordered.stdout.first?.contains(#""steps":1100"#) == true)
    }

    @Test func undecidedSamplesAreAbsentHeldAndTheHintIsExact() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("hr.jsonl", [
            #"{"type":"heartRate","value":72,"unit":"count/min","start":"2026-11-29T08:00:00Z","end":"2026-11-29T08:00:00Z","source":"strap"}"#,
        ])
        let result = await scenario.run(["replay", file, "--json"])
        #expect(result.status == 0)
        #expect(result.stdout == [#"{"type":"HKQuantityTypeIdentifierHeartRate","written":0,"duplicate":0,"replaced":0,"denied":0,"invalid":0,"held":1}"#])
        #expect(result.stderr.contains { $0.hasSuffix("allow with: ingestd auth grant strap heartRate; refuse with: ingestd auth deny strap --all") })
        let samples = await scenario.run(["samples", "heartRate", "--json"])
        #expect(samples.stdout.isEmpty)
    }

    @Test func explicitlyDeniedSamplesAreAbsentAndTheHintIsExact() async throws {
        let scenario = try Scenario()
        #expect(await scenario.run(["auth", "deny", "strap", "heartRate"]).status == 0)
        let file = try scenario.write("hr.jsonl", [
            #"{"type":"heartRate","value":72,"unit":"count/min","start":"2026-11-29T08:00:00Z","end":"2026-11-29T08:00:00Z","source":"strap"}"#,
        ])
        let result = await scenario.run(["replay", file, "--json"])
        #expect(result.status == 0)
        #expect(result.stdout == [#"{"type":"HKQuantityTypeIdentifierHeartRate","written":0,"duplicate":0,"replaced":0,"denied":1,"invalid":0,"held":0}"#])
        #expect(result.stderr.contains("note: 1 sample from strap refused: denied (heartRate) with 'ingestd auth deny'; allow with: ingestd auth grant strap heartRate"))
        #expect(await scenario.run(["auth", "pending", "--json"]).stdout.isEmpty)
        #expect(await scenario.run(["auth", "list", "--json"]).stdout
            == [#"{"source":"strap","type":"HKQuantityTypeIdentifierHeartRate","state":"denied"}"#])
        // A later grant replaces the denial.
        #expect(await scenario.run(["auth", "grant", "strap", "heartRate"]).status == 0)
        #expect(await scenario.run(["auth", "list", "--json"]).stdout
            == [#"{"source":"strap","type":"HKQuantityTypeIdentifierHeartRate","state":"granted"}"#])
    }

    @Test func replayIsIdempotentAndMalformedLinesAreNamed() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("mixed.jsonl", [
            #"{"type":"bodyMass","value":72.35,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","source":"scale"}"#,
            #"{"type":"bodyMass","value":72.35,"unit":"kg","start":"2026-01-01T08:00:00Z"}"#,
            "",
            #"{"type":"bodyMass","value":"heavy","unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#,
        ])
        await scenario.run(["auth", "grant", "scale", "bodyMass"])
        let first = await scenario.run(["replay", file, "--json"])
        #expect(first.status == 65)
        #expect(first.stderr.contains { $0.hasPrefix("error: \(file):2: ") && $0.contains("end") })
        #expect(first.stderr.contains { $0.hasPrefix("error: \(file):4: ") && $0.contains("value") })
        #expect(first.stdout == [#"{"type":"HKQuantityTypeIdentifierBodyMass","written":1,"duplicate":0,"replaced":0,"denied":0,"invalid":0,"held":0}"#])
        let second = await scenario.run(["replay", file, "--json"])
        #expect(second.stdout == [#"{"type":"HKQuantityTypeIdentifierBodyMass","written":0,"duplicate":1,"replaced":0,"denied":0,"invalid":0,"held":0}"#])
    }

    /// Lines are decoded on a thread of their own and stored in batches: every bad line is still
    /// named, in file order, with its own number, across batch boundaries and in a long run of
    /// bad lines (handed over in parts), and every good line is stored.
    @Test func badLinesAreNamedInOrderAcrossBatches() async throws {
        let scenario = try Scenario()
        var lines: [String] = []
        var badLineNumbers: [Int] = []
        for index in 0..<2_600 {
            if index % 7 == 3 || (1_000..<2_500).contains(index) {
                lines.append(#"{"type":"stepCount","value":"many"}"#)
                badLineNumbers.append(index + 1)
            } else {
                let minute = String(format: "%02d:%02d", index / 60 % 24, index % 60)
                lines.append(#"{"type":"stepCount","value":\#(index),"unit":"count","start":"2026-01-0\#(1 + index / 1440)T\#(minute):00Z","end":"2026-01-0\#(1 + index / 1440)T\#(minute):30Z","source":"pedometer"}"#)
            }
        }
        let file = try scenario.write("steps.jsonl", lines)
        await scenario.run(["auth", "grant", "pedometer", "stepCount"])
        let result = await scenario.run(["replay", file, "--batch-size", "100", "--json"])
        #expect(result.status == 65)
        let named = result.stderr.compactMap { line -> Int? in
            guard line.hasPrefix("error: \(file):") else { return nil }
            return Int(line.dropFirst("error: \(file):".count).prefix { $0.isNumber })
        }
        #expect(named == badLineNumbers)
        let good = lines.count - badLineNumbers.count
        #expect(result.stdout == [#"{"type":"HKQuantityTypeIdentifierStepCount","written":\#(good),"duplicate":0,"replaced":0,"denied":0,"invalid":0,"held":0}"#])
    }

    @Test func missingFileExits66() async throws {
        let scenario = try Scenario()
        let result = await scenario.run(["replay", scenario.directory.appendingPathComponent("nope.jsonl").path])
        #expect(result.status == 66)
    }

    @Test func dailyBucketsFollowDaylightSavingTime() async throws {
        let scenario = try Scenario()
        // One step per minute from 2026-03-28 00:00 to 2026-03-30 00:00 Berlin time (UTC+1, then +2 from 29 March 02:00).
        var lines: [String] = []
        var t = try #require(ISO8601DateTime.date(from: "2026-03-27T23:00:00Z"))
        let end = try #require(ISO8601DateTime.date(from: "2026-03-29T22:00:00Z"))
        while t < end {
            let next = t.addingTimeInterval(60)
            lines.append(#"{"type":"stepCount","value":1,"unit":"count","start":"\#(ISO8601DateTime.string(from: t))","end":"\#(ISO8601DateTime.string(from: next))","source":"pod"}"#)
            t = next
        }
        let file = try scenario.write("steps.jsonl", lines)
        await scenario.run(["auth", "grant", "pod", "stepCount"])
        #expect(await scenario.run(["replay", file]).status == 0)
        let stats = await scenario.run(["stats", "stepCount", "--sum", "--by", "day", "--tz", "Europe/Berlin",
                                         "--from", "2026-03-28", "--to", "2026-03-30", "--json"])
        #expect(stats.status == 0)
        #expect(stats.stdout == [
            #"{"start":"2026-03-28T00:00:00+01:00","end":"2026-03-29T00:00:00+01:00","value":1440,"unit":"count"}"#,
            #"{"start":"2026-03-29T00:00:00+01:00","end":"2026-03-30T00:00:00+02:00","value":1380,"unit":"count"}"#,
        ])
    }

    @Test func statisticsMustFitTheAggregationStyle() async throws {
        let scenario = try Scenario()
        let sum = await scenario.run(["stats", "bodyMass", "--sum"])
        #expect(sum.status == 64)
        #expect(sum.stderr.first == "error: --sum is only for cumulative types; bodyMass is discreteArithmetic (use --average, --min, --max or --latest)")
        let average = await scenario.run(["stats", "stepCount", "--average"])
        #expect(average.status == 64)
    }

    @Test func heartRateAverageIsTimeWeighted() async throws {
        let scenario = try Scenario()
        // 60 bpm for 9 minutes, then 120 bpm for 1 minute: weighted 66, arithmetic would be 90.
        let file = try scenario.write("hr.jsonl", [
            #"{"type":"heartRate","value":60,"unit":"count/min","start":"2026-11-29T08:00:00Z","end":"2026-11-29T08:09:00Z","source":"strap"}"#,
            #"{"type":"heartRate","value":120,"unit":"count/min","start":"2026-11-29T08:09:00Z","end":"2026-11-29T08:10:00Z","source":"strap"}"#,
        ])
        await scenario.run(["auth", "grant", "strap", "heartRate"])
        await scenario.run(["replay", file])
        let stats = await scenario.run(["stats", "heartRate", "--average", "--unit", "count/min", "--json",
                                         "--from", "2026-11-29T08:00:00Z", "--to", "2026-11-29T08:10:00Z"])
        #expect(stats.stdout.first?.contains(#""value":66,"unit":"count/min""#) == true, "\(stats.stdout)")
    }

    @Test func syncVersionReplacementShowsInChanges() async throws {
        let scenario = try Scenario()
        let v1 = try scenario.write("v1.jsonl", [
            #"{"uuid":"11111111-1111-1111-1111-111111111111","type":"bodyMass","value":80,"unit":"kg","start":"2026-11-01T07:00:00Z","end":"2026-11-01T07:00:00Z","source":"scale","metadata":{"HKMetadataKeySyncIdentifier":"r1","HKMetadataKeySyncVersion":1}}"#,
        ])
        let v2 = try scenario.write("v2.jsonl", [
            #"{"uuid":"22222222-2222-2222-2222-222222222222","type":"bodyMass","value":79,"unit":"kg","start":"2026-11-01T07:00:00Z","end":"2026-11-01T07:00:00Z","source":"scale","metadata":{"HKMetadataKeySyncIdentifier":"r1","HKMetadataKeySyncVersion":2}}"#,
        ])
        await scenario.run(["auth", "grant", "scale", "bodyMass"])
        await scenario.run(["replay", v1])
        let first = await scenario.run(["changes", "--json"])
        #expect(first.stdout.last == #"{"anchor":1}"#)
        let replaced = await scenario.run(["replay", v2, "--json"])
        #expect(replaced.stdout.first?.contains(#""replaced":1"#) == true)
        let changes = await scenario.run(["changes", "--since", "1", "--json"])
        #expect(changes.stdout.count == 3)
        #expect(changes.stdout[0] == #"{"deleted":"11111111-1111-1111-1111-111111111111","type":"HKQuantityTypeIdentifierBodyMass"}"#)
        #expect(changes.stdout[1].hasPrefix(#"{"uuid":"22222222-2222-2222-2222-222222222222","type":"HKQuantityTypeIdentifierBodyMass","value":79,"unit":"kg""#))
        #expect(changes.stdout[2] == #"{"anchor":2}"#)
        let samples = await scenario.run(["samples", "bodyMass", "--unit", "lb", "--json"])
        #expect(samples.stdout.count == 1)
        #expect(samples.stdout.first?.contains(#""value":174.165187126053,"unit":"lb""#) == true, "\(samples.stdout)")
    }

    @Test func latestWithoutARangeIsTheLastReading() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("mass.jsonl", [
            #"{"type":"bodyMass","value":160,"unit":"lb","start":"2026-11-28T07:00:00Z","end":"2026-11-28T07:00:00Z","source":"scale"}"#,
            #"{"type":"bodyMass","value":72,"unit":"kg","start":"2026-11-29T07:00:00Z","end":"2026-11-29T07:00:00Z","source":"scale"}"#,
        ])
        await scenario.run(["auth", "grant", "scale", "bodyMass"])
        await scenario.run(["replay", file])
        let latest = await scenario.run(["stats", "bodyMass", "--latest", "--json"])
        #expect(latest.stdout.first?.contains(#""value":72,"unit":"kg","sampleStart":"2026-11-29T07:00:00Z""#) == true,
                "\(latest.stdout)")
        let max = await scenario.run(["stats", "bodyMass", "--max", "--json", "--unit", "lb"])
        #expect(max.stdout.first?.contains(#""value":160,"unit":"lb""#) == true, "\(max.stdout)")
    }

    @Test func profileIsKeptOncePerStore() async throws {
        let scenario = try Scenario()
        #expect(await scenario.run(["profile", "set", "--date-of-birth", "1980-02-29", "--biological-sex", "female",
                                    "--height", "168", "--unit", "cm"]).status == 0)
        let shown = await scenario.run(["profile", "show", "--json"])
        #expect(shown.stdout == [#"{"dateOfBirth":"1980-02-29","biologicalSex":"female","height":{"value":168,"unit":"cm"}}"#])
        let bad = await scenario.run(["profile", "set", "--height", "168"])
        #expect(bad.status == 64)
    }
}

/// Issue 29 item 1 through the commands: display units, --latest/--newest, stats header and
/// empty ranges, --date yesterday, unknown units as usage errors.
@Suite struct ReadableValuesTests {
    func weighedScenario() async throws -> Scenario {
        let scenario = try Scenario()
        let file = try scenario.write("weights.jsonl", [
            #"{"type":"bodyMass","value":63.79776684050001,"unit":"kg","start":"2026-11-28T07:00:00Z","end":"2026-11-28T07:00:00Z","source":"scale"}"#,
            #"{"type":"bodyMass","value":63.5,"unit":"kg","start":"2026-11-29T07:00:00Z","end":"2026-11-29T07:00:00Z","source":"scale"}"#,
            #"{"type":"bodyMass","value":63.2,"unit":"kg","start":"2026-11-30T07:00:00Z","end":"2026-11-30T07:00:00Z","source":"scale"}"#,
            #"{"type":"heartRate","value":85,"unit":"count/min","start":"2026-11-30T07:00:00Z","end":"2026-11-30T07:00:00Z","source":"scale"}"#,
        ])
        await scenario.run(["auth", "grant", "scale", "--all"])
        #expect(await scenario.run(["replay", file]).status == 0)
        return scenario
    }

    @Test func samplesPrintDisplayUnitsInTheZoneAndTheNewestOnRequest() async throws {
        let scenario = try await weighedScenario()
        let latest = await scenario.run(["samples", "bodyMass", "--latest", "--tz", "Europe/Berlin"])
        #expect(latest.status == 0)
        #expect(latest.stdout.count == 2)
        #expect(latest.stdout.last?.hasPrefix("2026-11-30T08:00:00+01:00  2026-11-30T08:00:00+01:00  63.2 kg") == true)
        let newest = await scenario.run(["samples", "bodyMass", "--newest", "2", "--units", "us", "--tz", "UTC"])
        #expect(newest.stdout.count == 3)
        #expect(newest.stdout[1].contains("2026-11-29T07:00:00Z") && newest.stdout[1].contains("140.0 lb"))
        #expect(newest.stdout[2].contains("139.3 lb"))
        let heart = await scenario.run(["samples", "heartRate", "--unit", "bpm"])
        #expect(heart.stdout.last?.contains(" 85 bpm ") == true)
        // JSON keeps the stored value and unit, in UTC.
        let json = await scenario.run(["samples", "bodyMass", "--latest", "--json"])
        #expect(json.stdout.first?.contains(#""value":63.2,"unit":"kg","start":"2026-11-30T07:00:00Z""#) == true)
        // With --tz, the same instants on that zone's clock with its offset (summer and winter).
        let berlin = await scenario.run(["samples", "bodyMass", "--latest", "--json", "--tz", "Europe/Berlin"])
        #expect(berlin.stdout.first?.contains(#""start":"2026-11-30T08:00:00+01:00","end":"2026-11-30T08:00:00+01:00""#) == true,
                "\(berlin.stdout)")
        let newYork = await scenario.run(["samples", "bodyMass", "--json", "--tz", "America/New_York"])
        #expect(newYork.stdout.first?.contains("-05:00\"") == true, "\(newYork.stdout)")
    }

    /// The samples table, printed in two reads of the store (its column widths, then its rows):
    /// the same bytes as the table made of every row in memory (these lines are what that earlier
    /// code printed for this store), and its empty answers.
    @Test func theSamplesTableIsPrintedWholeAndAligned() async throws {
        let scenario = try await weighedScenario()
        let all = await scenario.run(["samples", "bodyMass", "--tz", "UTC"])
        #expect(all.status == 0)
        #expect(all.stdout == [
            "START                 END                   VALUE    SOURCE  DEVICE",
            "2026-11-28T07:00:00Z  2026-11-28T07:00:00Z  63.8 kg  scale   ",
            "2026-11-29T07:00:00Z  2026-11-29T07:00:00Z  63.5 kg  scale   ",
            "2026-11-30T07:00:00Z  2026-11-30T07:00:00Z  63.2 kg  scale   ",
        ], "\(all.stdout)")
        let newest = await scenario.run(["samples", "bodyMass", "--newest", "2", "--tz", "UTC"])
        #expect(newest.stdout == [
            "START                 END                   VALUE    SOURCE  DEVICE",
            "2026-11-29T07:00:00Z  2026-11-29T07:00:00Z  63.5 kg  scale   ",
            "2026-11-30T07:00:00Z  2026-11-30T07:00:00Z  63.2 kg  scale   ",
        ], "\(newest.stdout)")
        #expect(await scenario.run(["samples", "stepCount"]).stdout == ["No stepCount samples."])
        #expect(await scenario.run(["samples", "bodyMass", "--from", "2027-01-01"]).stdout == ["No bodyMass samples in this range."])
    }

    /// A person's own units (`people set P --units us`) print their values in pounds and miles;
    /// `--units` on the command line wins, the person's wins over the configuration's, and
    /// `--units default` hands the choice back to the configuration.
    @Test func aPersonsOwnUnitsComeBetweenTheCommandLineAndTheConfiguration() async throws {
        let scenario = try await weighedScenario()
        let name = try #require(await scenario.run(["people", "list", "--json"]).stdout.first.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }?["name"] as? String)
        let set = await scenario.run(["people", "set", name, "--units", "us"])
        #expect(set.status == 0 && set.stderr.joined().contains("\(name): units us"), "\(set.stderr)")
        #expect(await scenario.run(["people", "list", "--json"]).stdout.first?.contains(#""units":"us""#) == true)
        let latest = ["samples", "bodyMass", "--latest", "--tz", "UTC"]
        #expect(await scenario.run(latest).stdout.last?.contains("139.3 lb") == true)
        #expect(await scenario.run(latest + ["--units", "metric"]).stdout.last?.contains("63.2 kg") == true)
        let stats = await scenario.run(["stats", "bodyMass", "--average", "--from", "2026-11-30", "--to", "2026-12-01", "--tz", "UTC"])
        #expect(stats.stdout.last?.hasSuffix("139.3 lb") == true, "\(stats.stdout)")
        // The configuration says metric; the person's us still wins, the command line's over both.
        let metricFile = try scenario.write("metric.conf", ["units = metric"])
        #expect(await scenario.run(latest, environment: ["INGESTD_CONFIG": metricFile]).stdout.last?.contains("139.3 lb") == true)
        #expect(await scenario.run(["people", "set", name, "--units", "default"]).status == 0)
        #expect(await scenario.run(latest).stdout.last?.contains("63.2 kg") == true)
        let usFile = try scenario.write("us.conf", ["units = us"])
        #expect(await scenario.run(latest, environment: ["INGESTD_CONFIG": usFile]).stdout.last?.contains("139.3 lb") == true)
        // JSON keeps the stored value and unit whatever the person reads.
        #expect(await scenario.run(["samples", "bodyMass", "--latest", "--json"]).stdout.first?.contains(#""value":63.2,"unit":"kg""#) == true)
        let bad = await scenario.run(["people", "set", name, "--units", "imperial"])
        #expect(bad.status == 64 && bad.stderr.joined().contains("expected one of metric, us, default"), "\(bad.stderr)")
    }

    @Test func statsHaveAHeaderAndSayWhenTheRangeIsEmpty() async throws {
        let scenario = try await weighedScenario()
        let stats = await scenario.run(["stats", "bodyMass", "--average", "--by", "day", "--tz", "UTC",
                                        "--from", "2026-11-29", "--to", "2026-12-01"])
        #expect(stats.stdout.first?.split(separator: " ", omittingEmptySubsequences: true) == ["START", "END", "AVERAGE"])
        #expect(stats.stdout.count == 3)
        #expect(stats.stdout[1].hasSuffix("63.5 kg"))
        let empty = await scenario.run(["stats", "bodyMass", "--average", "--from", "2025-01-01", "--to", "2025-02-01"])
        #expect(empty.status == 0)
        #expect(empty.stdout == ["No bodyMass data in this range."])
    }

    @Test func unknownUnitsAreUsageErrorsWithASuggestion() async throws {
        let scenario = try await weighedScenario()
        let result = await scenario.run(["samples", "bodyMass", "--unit", "lbz"])
        #expect(result.status == 64)
        #expect(result.stderr.first?.contains("did you mean 'lbs'?") == true)
        let incompatible = await scenario.run(["samples", "bodyMass", "--unit", "bpm"])
        #expect(incompatible.status == 64)
    }

    @Test func todayTakesYesterday() async throws {
        let scenario = try Scenario()
        let yesterday = await scenario.run(["today", "--date", "yesterday", "--tz", "UTC", "--json"])
        #expect(yesterday.status == 0)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let day = calendar.date(byAdding: .day, value: -1, to: Date()) ?? Date()
        let parts = calendar.dateComponents([.year, .month, .day], from: day)
        let expected = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        #expect(yesterday.stdout.first?.hasPrefix(#"{"date":"\#(expected)""#) == true)
        #expect(await scenario.run(["today", "--date", "someday"]).status == 64)
    }
}
