import CLibUSB
import Transport

extension USBError {
    /// The `USBError` for a negative libusb return code. `what` names the operation (and device)
    /// for the cases that carry text; `endpoint` is used by the per-endpoint cases.
    init(libusbCode code: Int32, endpoint: UInt8 = 0, what: String) {
        switch code {
        case LIBUSB_ERROR_TIMEOUT.rawValue: self = .timeout(endpoint: endpoint)
        case LIBUSB_ERROR_NO_DEVICE.rawValue: self = .noDevice
        case LIBUSB_ERROR_PIPE.rawValue: self = .stall(endpoint: endpoint)
        case LIBUSB_ERROR_ACCESS.rawValue: self = .accessDenied(what)
        case LIBUSB_ERROR_BUSY.rawValue: self = .busy(what)
        case LIBUSB_ERROR_NOT_FOUND.rawValue: self = .notFound(what)
        case LIBUSB_ERROR_OVERFLOW.rawValue: self = .overflow(endpoint: endpoint)
        case LIBUSB_ERROR_IO.rawValue: self = .io(what)
        default: self = .other(code: code, name: LibUSBErrorName.of(code))
        }
    }
}

/// libusb's symbolic names for its return codes (`LIBUSB_ERROR_PIPE` ...).
enum LibUSBErrorName {
    static func of(_ code: Int32) -> String {
        guard let name = libusb_error_name(code) else { return "unknown" }
        return String(cString: name)
    }
}
