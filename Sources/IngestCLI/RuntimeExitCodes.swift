import ArgumentParsing
import IngestRuntime

/// The runtime's failures end a command with `error: <message>` and the exit status of their kind.
extension RuntimeError: CLIError {
    public var exitCode: ExitCode {
        switch kind {
        case .failure: .failure
        case .badInput: .dataError
        case .missingInput: .noInput
        case .badRequest: .usage
        }
    }
}

/// A second daemon on the same store ends with status 1, naming the first.
extension StoreLock.LockError: CLIError {}
