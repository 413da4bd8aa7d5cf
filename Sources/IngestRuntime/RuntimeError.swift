import AdapterKit
import BlueZTransport
import CaptureFormats
import Foundation

/// A failure of the runtime (replay, capture, the daemon, input files), each case carrying what
/// failed; `description` is the one-line message, and the command line maps each case to its exit
/// status in one place (`ExitCodes.swift`).
public enum RuntimeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The Bluetooth controller cannot be used (no kernel support, no controller, no permission).
    case bluetoothUnavailable(BluetoothUnavailable)
    /// Opening or starting the scanner of `controller` failed otherwise.
    case bluetoothFailed(controller: String, reason: String)
    /// libusb cannot be used, or cannot list the devices.
    case usbUnavailable(reason: String)
    /// No connected USB device has these ids.
    case usbDeviceNotConnected(vendorID: UInt16, productID: UInt16)
    /// The USB device is present but cannot be opened.
    case usbDeviceUnopenable(device: String, reason: String)
    /// The capture file being recorded cannot be created or written.
    case captureNotWritten(CaptureError)
    /// A capture to replay cannot be read: the file and why.
    case unreadableCapture(path: String, reason: String)
    /// A USB capture breaks off after `eventsReplayed` events (those were replayed).
    case damagedUSBCapture(path: String, damage: USBMonError, eventsReplayed: Int)
    /// The adapters cannot be set up as asked (an unknown forced adapter id).
    case adapterChoice(AdapterRouterError)
    /// `--adapter` names no USB adapter.
    case unknownUSBAdapter(id: String, known: [String])
    /// An input file that does not exist or cannot be opened.
    case noInput(path: String, reason: String = "no such file or directory")
    /// An input file opened but failing as it is read (an I/O error).
    case unreadableInput(path: String, reason: String)
    /// A stream (stdin, a pipe) longer than the spool takes.
    case streamTooLong(source: String, limit: Int)
    /// The temporary copy of a stream cannot be created in `directory`.
    case temporaryCopyUncreatable(source: String, directory: String, reason: String)
    /// The temporary copy of a stream cannot be written.
    case temporaryCopyUnwritable(source: String, reason: String)
    /// Work arrived after the store was closed for shutting down.
    case storeClosed
    /// An ingest ended without a result.
    case ingestUnfinished

    public var description: String {
        switch self {
        case .bluetoothUnavailable(let error): error.description
        case .bluetoothFailed(let controller, let reason): "Bluetooth unavailable: \(controller): \(reason)"
        case .usbUnavailable(let reason): "USB unavailable: \(reason)"
        case .usbDeviceNotConnected(let vendorID, let productID):
            "no USB device \(String(format: "%04x:%04x", vendorID, productID)) is connected ('ingestd devices' lists those present)"
        case .usbDeviceUnopenable(let device, let reason): "cannot open USB device \(device): \(reason)"
        case .captureNotWritten(let error): error.description
        case .unreadableCapture(let path, let reason): "\(path): \(reason)"
        case .damagedUSBCapture(let path, let damage, let events):
            "\(path): \(damage.description) (the \(events) events before it were replayed)"
        case .adapterChoice(let error): error.description
        case .unknownUSBAdapter(let id, let known): "no USB adapter \"\(id)\" (known: \(known.joined(separator: ", ")))"
        case .noInput(let path, let reason): "cannot open '\(path)': \(reason)"
        case .unreadableInput(let path, let reason): "cannot read '\(path)': \(reason)"
        case .streamTooLong(let source, let limit): "\(source): stream longer than \(limit) bytes; write it to a file first"
        case .temporaryCopyUncreatable(let source, let directory, let reason):
            "cannot create a temporary copy of \(source) in \(directory): \(reason)"
        case .temporaryCopyUnwritable(let source, let reason): "cannot write the temporary copy of \(source): \(reason)"
        case .storeClosed: "the store is closed (shutting down)"
        case .ingestUnfinished: "ingest did not finish"
        }
    }
}
