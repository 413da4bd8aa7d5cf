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

        switch invocation.action {
        case .help:
            context.stdout.write(formatter.help(for: invocation.commandPath))
            return .success
        case .version:
            context.stdout.writeLine(root.configuration.version ?? "")
            return .success
        case .manual:
            context.stdout.write(ManualPageFormatter(globalOptions: [logLevelOption]).manualPage(root: root))
            return .success
        case .run:
            break
        }

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

    /// The process entry point: runs `CommandLine.arguments` against `root` with the real
    /// standard streams and environment, then exits with the resulting status.
    public static func main(root: any Command.Type, defaultLogLevel: Logger.Level = .info) async -> Never {
        // A closed stdout/stderr (`ingestd replay f 2>&1 | head -c 10`) must not kill the process
        // mid-batch: writes then fail with EPIPE, which the writers take as "stop printing".
        signal(SIGPIPE, SIG_IGN)
        let stdout = FileDescriptorWriter.standardOutput()
        let stderr = FileDescriptorWriter.standardError()
        let environment = ProcessInfo.processInfo.environment
        let style = StreamLogHandler.style(environment: environment, standardErrorIdentity: standardErrorIdentity())
        let logger = Logger(label: root.configuration.name, handler: StreamLogHandler(writer: stderr, style: style))
        let context = CommandContext(stdout: stdout, stderr: stderr, environment: environment, logger: logger)
        guard let arguments = processArguments() else {
            // Never run the default command (the daemon) on a command line that could not be read.
            stderr.write("\(root.configuration.name): cannot read the command line (no argv and no /proc/self/cmdline)\n")
            stderr.flush()
            exit(ExitCode.usage.rawValue)
        }
        let status = await run(root: root, arguments: arguments, context: context, defaultLogLevel: defaultLogLevel)
        exit(status)
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
