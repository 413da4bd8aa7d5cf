/// The status a command-line invocation ends with, following the BSD `sysexits.h` convention
/// where one exists.
///
/// Throwing an `ExitCode` from a command ends it with that status and prints nothing.
public struct ExitCode: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value handed to `exit(3)`.
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Everything worked.
    public static let success = ExitCode(0)
    /// A failure that is none of the more specific ones below.
    public static let failure = ExitCode(1)
    /// The command line itself was wrong (`EX_USAGE`).
    public static let usage = ExitCode(64)
    /// The input data was malformed (`EX_DATAERR`).
    public static let dataError = ExitCode(65)
    /// An input file did not exist or could not be read (`EX_NOINPUT`).
    public static let noInput = ExitCode(66)
    /// A service the command needs stayed unreachable (`EX_UNAVAILABLE`).
    public static let unavailable = ExitCode(69)
    /// 71 (`EX_OSERR`): the operating system lacks something the program needs (no /proc).
    public static let osError = ExitCode(71)
    /// A configuration file or variable held a bad setting (`EX_CONFIG`).
    public static let configuration = ExitCode(78)

    public var description: String { "exit code \(rawValue)" }
}

/// An error a command throws to end with `error: <description>` on stderr and a chosen exit code.
///
/// Conforming types describe the problem in one line through `description`; the runner adds
/// the `error: ` prefix.
public protocol CLIError: Error, CustomStringConvertible {
    /// The status the process ends with; `.failure` unless the conforming type says otherwise.
    var exitCode: ExitCode { get }
}

extension CLIError {
    public var exitCode: ExitCode { .failure }
}

/// A ready-made `CLIError` for commands that need no error type of their own.
public struct CommandFailure: CLIError, Equatable {
    /// The one-line explanation printed after `error: `.
    public var message: String
    public var exitCode: ExitCode

    public init(_ message: String, exitCode: ExitCode = .failure) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }

    /// A failure with no more specific category (exit 1).
    public static func failure(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: .failure)
    }

    /// Input data that could not be understood (exit 65).
    public static func dataError(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: .dataError)
    }

    /// An input file that does not exist or cannot be opened (exit 66).
    public static func noInput(path: String, reason: String = "no such file or directory") -> CommandFailure {
        CommandFailure("cannot open '\(path)': \(reason)", exitCode: .noInput)
    }
}
