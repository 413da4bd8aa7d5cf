import Logging
import CProcessArguments
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A root command whose options take values from outside the command line (a configuration
/// file, the environment). The runner asks it after parsing and before building the command;
/// what it supplies (`ParsedValues.supply(_:for:)`) is read beneath the command line's values.
public protocol ArgumentDefaultsProvider: Command {
    /// Supplies values for the options of the command at the end of `commandPath`; throws
    /// (a `CLIError`) when the configuration itself is wrong.
    static func supplyDefaults(to values: inout ParsedValues, commandPath: [any Command.Type], context: CommandContext) throws
}

/// Parses a command line, runs the selected command and turns the outcome into an exit status.
///
/// All printing of help, versions and errors happens here, so commands only produce results
/// and throw. Errors map to statuses as follows: `UsageError` (from parsing or from a command)
/// prints the error, the usage line and a pointer to help, and gives 64; a `CLIError` prints
/// `error: <description>` and gives its `exitCode`; a thrown `ExitCode` gives itself silently;
/// a missing file reported by Foundation gives 66; anything else prints `error: …` and gives 1.
public enum CommandLineRunner {
    /// The environment variable read for the log level when `--log-level` is not given.
    public static let logLevelVariable = "INGESTD_LOG_LEVEL"

    /// `--log-level LEVEL`, accepted by every command.
    public static let logLevelOption = Option(
        "log-level", valueName: "LEVEL",
        help: "Show log messages of this level and above; also read from \(logLevelVariable).",
        allowedValues: Logger.Level.allCases.map(\.rawValue))

    /// Runs `arguments` (without the program name) against the command tree under `root` and
    /// returns the exit status. Flushes both output streams before returning; a write to either
    /// that failed (other than to a reader that went away) makes a successful run exit 1, with
    /// `error: cannot write to standard output: …` when stderr still takes it.
    public static func run(
        root: any Command.Type,
        arguments: [String],
        context: CommandContext,
        defaultLogLevel: Logger.Level = .info
    ) async -> Int32 {
        var status = await runUnflushed(root: root, arguments: arguments, context: context, defaultLogLevel: defaultLogLevel)
        context.stdout.flush()
        context.stderr.flush()
        if status == .success {
            do {
                try context.checkStandardOutput()
            } catch {
                context.stderr.writeLine("error: " + error.description)
                status = error.exitCode
            }
            context.stderr.flush()
            if context.stderr.writeError != nil, status == .success { status = .failure }
        }
        return status.rawValue
    }

    private static func runUnflushed(
        root: any Command.Type,
        arguments: [String],
        context: CommandContext,
        defaultLogLevel: Logger.Level
    ) async -> ExitCode {
        let formatter = HelpFormatter(globalOptions: [logLevelOption])
        let parser = CommandLineParser(root: root, globalOptions: [logLevelOption])
        let invocation: Invocation
        do {
            invocation = try parser.parse(arguments)
        } catch {
            context.stderr.write(formatter.usageError(error.error, path: error.commandPath))
            return .usage
        }

        if let answered = answer(invocation, root: root, formatter: formatter, stdout: context.stdout) { return answered }

        var context = context
        do {
            var values = invocation.values
            if let provider = root as? any ArgumentDefaultsProvider.Type {
                try provider.supplyDefaults(to: &values, commandPath: invocation.commandPath, context: context)
            }
            context.logger.logLevel = try logLevel(values, environment: context.environment) ?? defaultLogLevel
            let command = try invocation.command.init(values)
            try await command.run(context)
            return .success
        } catch {
            return report(error, path: invocation.commandPath, formatter: formatter, stderr: context.stderr)
        }
    }

    /// The level from `--log-level`, else from the environment, else one supplied from outside
    /// the command line (a configuration file); `nil` when none is set.
    private static func logLevel(_ values: ParsedValues, environment: [String: String]) throws -> Logger.Level? {
        if values.isPresent(logLevelOption.name), let given: String = try values.value(logLevelOption.name) {
            return Logger.Level(rawValue: given)
        }
        guard let fromEnvironment = environment[logLevelVariable], !fromEnvironment.isEmpty else {
            return try values.value(logLevelOption.name, expected: "a log level") { Logger.Level(rawValue: $0) }
        }
        guard let level = Logger.Level(rawValue: fromEnvironment.lowercased()) else {
            throw UsageError.invalidValue(
                fromEnvironment, argument: logLevelVariable,
                reason: "expected one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return level
    }

    /// Prints `error` the way its kind asks for and returns the status it maps to.
    private static func report(
        _ error: any Error, path: [any Command.Type], formatter: HelpFormatter, stderr: any TextWriter
    ) -> ExitCode {
        switch error {
        case let exitCode as ExitCode:
            return exitCode
        case let usage as UsageError:
            stderr.write(formatter.usageError(usage, path: path))
            return .usage
        case let failure as any CLIError:
            stderr.writeLine("error: " + oneLine(failure.description))
            return failure.exitCode
        case let cocoa as CocoaError where cocoa.code == .fileReadNoSuchFile || cocoa.code == .fileNoSuchFile:
            let path = cocoa.filePath ?? cocoa.url?.path ?? "file"
            stderr.writeLine("error: cannot open '\(path)': no such file or directory")
            return .noInput
        case let localized as any LocalizedError:
            stderr.writeLine("error: " + oneLine(localized.errorDescription ?? String(describing: error)))
            return .failure
        default:
            stderr.writeLine("error: " + oneLine(String(describing: error)))
            return .failure
        }
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// The process's standard streams, environment and logger.
    private static func processContext(root: any Command.Type) -> CommandContext {
        let stdout = FileDescriptorWriter.standardOutput()
        let stderr = FileDescriptorWriter.standardError()
        let environment = ProcessInfo.processInfo.environment
        let style = StreamLogHandler.style(environment: environment, standardErrorIdentity: standardErrorIdentity())
        let logger = Logger(label: root.configuration.name, handler: StreamLogHandler(writer: stderr, style: style))
        return CommandContext(stdout: stdout, stderr: stderr, environment: environment, logger: logger)
    }

    /// The process entry point, called from a synchronous `main.swift` (no top-level `await`):
    /// answers what needs no command (help, the version, the man page, a usage error) on the main
    /// thread and exits; so does a machine without /proc, where running a command is refused with
    /// the fix. Otherwise runs the command on Swift concurrency and exits with its status.
    ///
    /// Why the first part runs before any task: libdispatch's thread pool (under Swift concurrency,
    /// and an async `main` drains its main queue on a pool thread) checks its worker threads in
    /// /proc/<tid>/stat and crashes the process when it cannot ("workq: registered worker exited
    /// prematurely", SIGILL): within the first second of any command in a chroot or container
    /// without /proc, and `ingestd --version` about once in a hundred runs there.
    public static func start(root: any Command.Type, defaultLogLevel: Logger.Level = .info) -> Never {
        // A closed stdout/stderr (`ingestd replay f 2>&1 | head -c 10`, `ingestd --help | head -1`)
        // must not kill the process: writes then fail with EPIPE, which the writers take as "stop printing".
        signal(SIGPIPE, SIG_IGN)
        let context = processContext(root: root)
        let arguments = answerBeforeRunning(root: root, context: context)
        Task.detached {
            exit(await run(root: root, arguments: arguments, context: context, defaultLogLevel: defaultLogLevel))
        }
        dispatchMain()
    }

    /// The synchronous part of ``start(root:defaultLogLevel:)``: exits unless a command is to run,
    /// and returns its arguments. `procProbe` is the file whose absence means /proc is not mounted.
    static func answerBeforeRunning(root: any Command.Type, context: CommandContext,
                                    procProbe: String = "/proc/self/stat") -> [String] {
        guard let arguments = processArguments() else {
            // Never run the default command (the daemon) on a command line that could not be read.
            context.stderr.write("\(root.configuration.name): cannot read the command line (no argv and no /proc/self/cmdline)\n")
            context.stderr.flush()
            exit(ExitCode.usage.rawValue)
        }
        let formatter = HelpFormatter(globalOptions: [logLevelOption])
        let status: ExitCode
        do {
            let invocation = try CommandLineParser(root: root, globalOptions: [logLevelOption]).parse(arguments)
            guard let answered = answer(invocation, root: root, formatter: formatter, stdout: context.stdout) else {
                guard access(procProbe, R_OK) == 0 else {
                    context.stderr.writeLine("error: \(root.configuration.name) needs /proc, which is not mounted here (Swift's thread "
                                             + "pool reads it); mount it first: mount -t proc proc /proc")
                    context.stderr.flush()
                    exit(ExitCode.osError.rawValue)
                }
                return arguments
            }
            status = answered
        } catch {
            context.stderr.write(formatter.usageError(error.error, path: error.commandPath))
            status = .usage
        }
        context.stdout.flush()
        context.stderr.flush()
        exit(status.rawValue)
    }

    /// The output of an invocation that asks for help, the version or the man page; nil for a command to run.
    private static func answer(_ invocation: Invocation, root: any Command.Type, formatter: HelpFormatter,
                               stdout: any TextWriter) -> ExitCode? {
        switch invocation.action {
        case .help:
            stdout.write(formatter.help(for: invocation.commandPath))
        case .version:
            stdout.writeLine(root.configuration.version ?? "")
        case .manual:
            stdout.write(ManualPageFormatter(globalOptions: [logLevelOption]).manualPage(root: root))
        case .run:
            return nil
        }
        return .success
    }

    /// The arguments after the program name: argv as the C library gave it to the program's initializers,
    /// else Swift's `CommandLine` (which reads /proc/self/cmdline); nil when neither has even the program name.
    static func processArguments() -> [String]? {
        var count: Int32 = 0
        if let argv = cprocess_arguments(&count), count > 0 {
            return (1..<Int(count)).map { index in argv[index].map { String(cString: $0) } ?? "" }
        }
        let fallback = CommandLine.arguments
        return fallback.isEmpty ? nil : Array(fallback.dropFirst())
    }

    /// `device:inode` of file descriptor 2, the form `JOURNAL_STREAM` uses.
    private static func standardErrorIdentity() -> String? {
        var status = stat()
        guard fstat(2, &status) == 0 else { return nil }
        return "\(status.st_dev):\(status.st_ino)"
    }
}
