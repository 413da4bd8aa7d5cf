/// A failure of the runtime (replay, capture, the daemon, input files), with the kind of failure
/// it is so the command line can choose its exit status; `description` is the one-line message.
public struct RuntimeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, in the categories the exit statuses distinguish.
    public enum Kind: Sendable, Equatable {
        /// No more specific category.
        case failure
        /// Input data that could not be understood (a damaged capture, a stream too long).
        case badInput
        /// An input file that does not exist or cannot be opened.
        case missingInput
        /// What was asked for cannot be done as asked (an unknown forced adapter id).
        case badRequest
    }

    /// The category of the failure.
    public var kind: Kind
    /// The one-line explanation.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// A failure with no more specific category.
    public static func failure(_ message: String) -> RuntimeError { RuntimeError(.failure, message) }

    /// Input data that could not be understood.
    public static func dataError(_ message: String) -> RuntimeError { RuntimeError(.badInput, message) }

    /// An input file that does not exist or cannot be opened.
    public static func noInput(path: String, reason: String = "no such file or directory") -> RuntimeError {
        RuntimeError(.missingInput, "cannot open '\(path)': \(reason)")
    }

    /// A request that cannot be carried out as given (the command line asked for something unknown).
    public static func badRequest(_ message: String) -> RuntimeError { RuntimeError(.badRequest, message) }
}
