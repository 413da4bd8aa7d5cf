import Logging
/// What a running command may use of the outside world: output streams, the environment and
/// the logger. Tests build one over `CapturingWriter`s and a fixed environment.
public struct CommandContext: Sendable {
    /// Where results go.
    public var stdout: any TextWriter
    /// Where errors and log lines go.
    public var stderr: any TextWriter
    /// The process environment (or a test's stand-in).
    public var environment: [String: String]
    /// The logger for the command; its level is set by the runner from `--log-level` or
    /// `INGESTD_LOG_LEVEL`.
    public var logger: Logger
    /// Where system-wide configuration files are read (`/etc`; a test's temporary directory).
    public var systemConfigurationDirectory = "/etc"

    /// A context whose logger writes to `stderr` with `StreamLogHandler`, in journald style
    /// when the environment says stderr is the journal.
    public init(stdout: any TextWriter, stderr: any TextWriter, environment: [String: String] = [:], label: String = "ingestd") {
        self.stdout = stdout
        self.stderr = stderr
        self.environment = environment
        let style = StreamLogHandler.style(environment: environment)
        self.logger = Logger(label: label, handler: StreamLogHandler(writer: stderr, style: style))
    }

    /// A context with a logger of the caller's making.
    public init(stdout: any TextWriter, stderr: any TextWriter, environment: [String: String] = [:], logger: Logger) {
        self.stdout = stdout
        self.stderr = stderr
        self.environment = environment
        self.logger = logger
    }
}

extension CommandContext {
    /// Flushes stdout and throws `OutputStreamError` if a write to it failed (a full disk):
    /// a command calls it before it reports success of its own (`exported N records`). A reader
    /// that went away (`EPIPE`) is not an error here: that output is silently dropped.
    public func checkStandardOutput() throws(OutputStreamError) {
        stdout.flush()
        if let error = stdout.writeError { throw OutputStreamError(stream: "standard output", error: error) }
    }
}

/// A write to stdout or stderr failed for another reason than a gone reader: `error: cannot
/// write to standard output: No space left on device`, exit 1.
public struct OutputStreamError: CLIError, Equatable {
    /// `standard output` or `standard error`.
    public let stream: String
    public let error: OutputWriteError

    public init(stream: String, error: OutputWriteError) {
        self.stream = stream
        self.error = error
    }

    public var description: String { "cannot write to \(stream): \(error)" }
}
