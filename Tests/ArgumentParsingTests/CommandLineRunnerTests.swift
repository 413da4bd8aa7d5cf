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
