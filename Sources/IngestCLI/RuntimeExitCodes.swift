import ArgumentParsing
import IngestRuntime

/// The runtime's failures end a command with `error: <message>` and the exit status of their case:
/// the one place they are mapped.
extension RuntimeError: CLIError {
    public var exitCode: ExitCode {
        switch self {
        case .bluetoothUnavailable, .bluetoothFailed, .usbUnavailable, .usbDeviceUnopenable, .captureNotWritten,
             .temporaryCopyUncreatable, .temporaryCopyUnwritable, .storeClosed, .ingestUnfinished:
            .failure
        case .unreadableCapture, .damagedUSBCapture, .streamTooLong: .dataError
        case .usbDeviceNotConnected, .noInput: .noInput
        case .adapterChoice, .unknownUSBAdapter: .usage
        }
    }
}

/// A second daemon on the same store ends with status 1, naming the first.
extension StoreLock.LockError: CLIError {}
