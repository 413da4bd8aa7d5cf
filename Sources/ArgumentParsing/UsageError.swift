/// A mistake on the command line. The runner prints `error: <description>`, the usage line of
/// the command and a pointer to its help, and exits 64.
///
/// Commands throw `.invalid(_:)` from `init(_:)` for combinations the signature cannot
/// express, such as `--height` without `--unit`.
public enum UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An option or flag the command does not know, with the nearest known spelling if close.
    case unknownOption(String, suggestion: String?)
    /// A word that names no subcommand of `parent` (the command names, e.g. `ingestd units`).
    case unknownSubcommand(String, parent: String, suggestion: String?)
    /// A group such as `ingestd auth` given without a subcommand.
    case missingSubcommand(parent: String)
    /// An option at the end of the line or followed by another option, e.g. `--store` alone.
    case missingValue(option: String, valueName: String)
    /// A required positional left out, e.g. `TYPE`.
    case missingArgument(String)
    /// A required option left out, e.g. `--out FILE`.
    case missingOption(String, valueName: String)
    /// None of a required group of flags given.
    case missingFlag(oneOf: [String])
    /// Two flags of an exclusive group given together.
    case conflictingFlags(String, String)
    /// A value that does not parse or is not among the allowed ones.
    case invalidValue(String, argument: String, reason: String)
    /// A positional beyond those the command takes.
    case unexpectedArgument(String)
    /// A flag given with `=value`.
    case flagWithValue(String, value: String)
    /// A non-repeatable option given twice.
    case repeatedOption(String)
    /// Any other invalid combination, explained by the message.
    case invalid(String)

    public var description: String {
        switch self {
        case .unknownOption(let option, let suggestion):
            "unknown option '\(option)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
        case .unknownSubcommand(let word, let parent, let suggestion):
            "unknown command '\(word)' for '\(parent)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
        case .missingSubcommand(let parent):
            "'\(parent)' needs a subcommand"
        case .missingValue(let option, let valueName):
            "missing value for \(option) \(valueName)"
        case .missingArgument(let name):
            "missing required argument \(name)"
        case .missingOption(let option, let valueName):
            "missing required option \(option) \(valueName)"
        case .missingFlag(let flags):
            "missing one of " + flags.joined(separator: "|")
        case .conflictingFlags(let first, let second):
            "\(first) and \(second) cannot be used together"
        case .invalidValue(let value, let argument, let reason):
            "invalid value '\(value)' for \(argument): \(reason)"
        case .unexpectedArgument(let argument):
            "unexpected argument '\(argument)'"
        case .flagWithValue(let flag, let value):
            "\(flag) takes no value (got '\(value)')"
        case .repeatedOption(let option):
            "\(option) given more than once"
        case .invalid(let message):
            message
        }
    }
}
