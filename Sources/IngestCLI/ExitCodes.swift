import ArgumentParsing
import IngestRuntime

// The exit status of every error an ingestd command ends with (`error: <message>`), chosen here
// for each case: the commands' own (`CommandError`), the runtime's (`RuntimeError`, a second
// daemon's `StoreLock.LockError`) and the configuration's (`ConfigurationError`). The statuses
// follow `sysexits.h` (`ExitCode`). A command that printed its own report of what failed (doctor,
// scan, import, replay, sinks deliver) ends by throwing the `ExitCode` alone.

extension CommandError {
    var exitCode: ExitCode {
        switch self {
        case .storeFile, .storeUnopenable, .store, .sharedStore, .sinkStore, .unwritable, .unreplaceable, .diskFull,
             .unknownToday, .uncomputableDay, .uncomputableDays, .noWeighing, .usbUnlistable, .dashboardNotServed:
            .failure
        case .storeUnusable, .sinkConfiguration, .oversizedKeyFile, .unreadableImport, .exportRead, .noKey,
             .notAFiniteNumber, .unit:
            .dataError
        case .storeIsDirectory, .noSuchStore, .unreadable: .noInput
        case .unknownQuantityType, .unknownAdapter, .adapterChoice: .usage
        }
    }
}

extension RuntimeError: CLIError {
    public var exitCode: ExitCode {
        switch self {
        case .bluetoothUnavailable, .bluetoothFailed, .usbUnavailable, .usbDeviceUnopenable, .captureNotWritten,
             .temporaryCopyUncreatable, .temporaryCopyUnwritable, .storeClosed, .ingestUnfinished:
            .failure
        case .unreadableCapture, .damagedUSBCapture, .streamTooLong: .dataError
        case .usbDeviceNotConnected, .noInput, .unreadableInput: .noInput
        case .adapterChoice, .unknownUSBAdapter: .usage
        }
    }
}

/// A second daemon on the same store ends with status 1, naming the first.
extension StoreLock.LockError: CLIError {
    public var exitCode: ExitCode { .failure }
}

extension ConfigurationError {
    var exitCode: ExitCode {
        switch self {
        case .missing: .noInput
        case .malformedLine, .unknownKey, .emptyValue, .badValue, .badEnvironment, .unreadable: .configuration
        }
    }
}
