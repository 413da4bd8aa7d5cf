import ArgumentParsing
import Logging
import Testing

/// Exit codes, error reporting and log-level wiring of `CommandLineRunner.run`.
@Suite struct CommandLineRunnerTests {
    @Test func successIsZeroWithOutputOnStdoutOnly() async {
        let result = await runSample(["units", "list"])
        #expect(result.status == ExitCode.success.rawValue)
        #expect(result.stdout == "units list\n")
        #expect(result.stderr == "")
    }

    @Test(arguments: [
        ("missing.btsnoop", 66, "error: cannot open 'missing.btsnoop': no such file or directory\n"),
        ("bad.btsnoop", 65, "error: bad.btsnoop: truncated record at byte 16\n"),
        ("boom", 1, "error: Boom()\n"),
        ("foundation-missing", 66, "error: cannot open '/nonexistent/ingestd-test-file': no such file or directory\n"),
        ("exit3", 3, ""),
    ])
    func errorsThrownByARunningCommand(file: String, status: Int32, stderr: String) async {
        let result = await runSample(["replay", file])
        #expect(result.status == status)
        #expect(result.stderr == stderr)
        #expect(result.stdout == "")
    }

    @Test func exitCodeConstantsFollowSysexits() {
        #expect(ExitCode.success.rawValue == 0)
        #expect(ExitCode.failure.rawValue == 1)
        #expect(ExitCode.usage.rawValue == 64)
        #expect(ExitCode.dataError.rawValue == 65)
        #expect(ExitCode.noInput.rawValue == 66)
        #expect(CommandFailure.noInput(path: "x").exitCode == .noInput)
        #expect(CommandFailure.dataError("x").exitCode == .dataError)
        #expect(CommandFailure.failure("x").exitCode == .failure)
    }

    @Test func aCLIErrorWithoutItsOwnExitCodeFailsWithOne() async {
        struct NotReady: CLIError {
            var description: String { "the store is locked by another ingestd" }
        }
        struct Locked: Command {
            static let configuration = CommandConfiguration(name: "locked")
            init(_ arguments: ParsedValues) {}
            func run(_ context: CommandContext) async throws { throw NotReady() }
        }
        let stderr = CapturingWriter()
        let context = CommandContext(stdout: CapturingWriter(), stderr: stderr)
        let status = await CommandLineRunner.run(root: Locked.self, arguments: [], context: context)
        #expect(status == 1)
        #expect(stderr.text == "error: the store is locked by another ingestd\n")
    }

    @Test func usageErrorThrownFromRunGetsUsageAndSixtyFour() async {
        struct Picky: Command {
            static let configuration = CommandConfiguration(name: "picky")
            static let signature = Signature { Option("since", valueName: "ANCHOR") }
            init(_ arguments: ParsedValues) {}
            func run(_ context: CommandContext) async throws { throw UsageError.invalid("anchor 'x' is not from this store") }
        }
        let stderr = CapturingWriter()
        let status = await CommandLineRunner.run(
            root: Picky.self, arguments: ["--since", "x"], context: CommandContext(stdout: CapturingWriter(), stderr: stderr))
        #expect(status == 64)
        #expect(stderr.text == """
            error: anchor 'x' is not from this store
            Usage: picky [--since ANCHOR]
            See 'picky --help' for more.

            """)
    }

    // MARK: Log level

    @Test func defaultLevelIsInfo() async {
        let handler = RecordingLogHandler()
        _ = await runSample(["run"], handler: handler)
        #expect(handler.records.map(\.message) == ["watching"])
        #expect(handler.records.map(\.level) == [.info])
    }

    @Test func logLevelOptionLowersTheThreshold() async {
        let handler = RecordingLogHandler()
        _ = await runSample(["run", "--log-level", "debug"], handler: handler)
        #expect(handler.records.map(\.message) == ["starting", "watching"])
    }

    @Test func environmentSetsTheLevelAndTheOptionWins() async {
        let quiet = RecordingLogHandler()
        _ = await runSample(["run"], environment: ["INGESTD_LOG_LEVEL": "warning"], handler: quiet)
        #expect(quiet.records.isEmpty)
        let loud = RecordingLogHandler()
        _ = await runSample(["--log-level=trace"], environment: ["INGESTD_LOG_LEVEL": "warning"], handler: loud)
        #expect(loud.records.map(\.message) == ["starting", "watching"])
    }

    @Test func badLevelInTheEnvironmentIsAUsageError() async {
        let result = await runSample(["run"], environment: ["INGESTD_LOG_LEVEL": "chatty"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix(
            "error: invalid value 'chatty' for INGESTD_LOG_LEVEL: expected one of trace, debug, info, notice, warning, error, critical\n"))
    }

    @Test func defaultContextLogsTimestampedLinesToItsStderr() async throws {
        let stderr = CapturingWriter()
        let context = CommandContext(stdout: CapturingWriter(), stderr: stderr, environment: [:])
        _ = await CommandLineRunner.run(root: SampleRoot.self, arguments: ["run"], context: context)
        #expect(stderr.lines.count == 1)
        let line = try #require(stderr.lines.first)
        #expect(line.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info ingestd: watching/) != nil)
    }

    @Test func defaultContextUsesJournaldPrefixWhenJournalStreamIsSet() async {
        let stderr = CapturingWriter()
        let context = CommandContext(stdout: CapturingWriter(), stderr: stderr, environment: ["JOURNAL_STREAM": "8:12345"])
        _ = await CommandLineRunner.run(root: SampleRoot.self, arguments: ["run"], context: context)
        #expect(stderr.text == "<6>info ingestd: watching\n")
    }
}

/// A root that supplies values from outside the command line (as ingestd's configuration does):
/// a single-valued option reads the last supplied value beneath the command line's, a repeatable
/// one reads them before the command line's, an option the command does not declare takes none,
/// and a supplied value that does not parse names where it came from.
@Suite struct SuppliedDefaultsTests {
    struct Configured: ArgumentDefaultsProvider {
        static let configuration = CommandConfiguration(name: "configured")
        static let signature = Signature {
            Option("tz", valueName: "ZONE")
            Option("limit", valueName: "N")
            Option("pin", valueName: "DEVICE=ID", repeatable: true)
        }
        let tz: String?
        let limit: Int?
        let pins: [String]
        let origin: String?
        init(_ arguments: ParsedValues) throws {
            tz = try arguments.value("tz")
            limit = try arguments.value("limit")
            pins = try arguments.values("pin")
            origin = arguments.suppliedOrigin("tz")
        }
        func run(_ context: CommandContext) async throws {
            context.stdout.writeLine("\(tz ?? "-") \(limit.map(String.init) ?? "-") \(pins.joined(separator: ",")) \(origin ?? "-")")
        }
        static func supplyDefaults(to values: inout ParsedValues, commandPath: [any Command.Type], context: CommandContext) throws {
            values.supply([SuppliedValue("UTC", origin: "a.conf:1"), SuppliedValue("Europe/Berlin", origin: "b.conf:1")], for: "tz")
            values.supply([SuppliedValue("a=file", origin: "a.conf:2")], for: "pin")
            let undeclared = values.supply([SuppliedValue("x", origin: "a.conf:3")], for: "store")
            #expect(!undeclared)
            if let limit = context.environment["LIMIT"] { values.supply([SuppliedValue(limit, origin: "LIMIT")], for: "limit") }
        }
    }

    private func run(_ arguments: [String], environment: [String: String] = [:]) async -> (Int32, String, String) {
        let out = CapturingWriter()
        let err = CapturingWriter()
        let status = await CommandLineRunner.run(root: Configured.self, arguments: arguments,
                                                 context: CommandContext(stdout: out, stderr: err, environment: environment))
        return (status, out.text, err.text)
    }

    @Test func suppliedValuesAreReadBeneathTheCommandLine() async {
        #expect(await run([]) == (0, "Europe/Berlin - a=file b.conf:1\n", ""))
        #expect(await run(["--tz", "Asia/Tokyo", "--pin", "a=cli"]) == (0, "Asia/Tokyo - a=file,a=cli -\n", ""))
        #expect(await run([], environment: ["LIMIT": "7"]).1 == "Europe/Berlin 7 a=file b.conf:1\n")
        let bad = await run([], environment: ["LIMIT": "ten"])
        #expect(bad.0 == 64)
        #expect(bad.2.hasPrefix("error: invalid value 'ten' for --limit (from LIMIT): not an integer"), "\(bad.2)")
    }

    /// The log level: `--log-level`, else INGESTD_LOG_LEVEL, else a supplied one (a file's).
    @Test func aSuppliedLogLevelIsBeneathTheEnvironment() async {
        struct Leveled: ArgumentDefaultsProvider {
            static let configuration = CommandConfiguration(name: "leveled")
            init(_ arguments: ParsedValues) {}
            func run(_ context: CommandContext) async throws { context.stdout.writeLine(context.logger.logLevel.rawValue) }
            static func supplyDefaults(to values: inout ParsedValues, commandPath: [any Command.Type], context: CommandContext) throws {
                values.supply([SuppliedValue("debug", origin: "a.conf:1")], for: CommandLineRunner.logLevelOption.name)
            }
        }
        func level(_ arguments: [String], _ environment: [String: String]) async -> String {
            let out = CapturingWriter()
            _ = await CommandLineRunner.run(root: Leveled.self, arguments: arguments,
                                            context: CommandContext(stdout: out, stderr: CapturingWriter(), environment: environment))
            return out.text
        }
        #expect(await level([], [:]) == "debug\n")
        #expect(await level([], ["INGESTD_LOG_LEVEL": "error"]) == "error\n")
        #expect(await level(["--log-level", "trace"], ["INGESTD_LOG_LEVEL": "error"]) == "trace\n")
    }

    @Test func configurationErrorsExitSeventyEight() {
        #expect(ExitCode.configuration.rawValue == 78)
    }
}
