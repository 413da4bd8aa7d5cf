import Glibc

/// Bluetooth cannot be used on this machine or controller: the daemon logs this once and
/// carries on with its other transports.
public enum BluetoothUnavailable: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kernel has no AF_BLUETOOTH sockets (EAFNOSUPPORT: no bluetooth module, or a
    /// container without it).
    case noKernelSupport(errno: Int32)
    /// No controller with this index (ENODEV).
    case noController(index: UInt16)
    /// The operation needs a privilege the process lacks (EPERM/EACCES): raw HCI commands need
    /// CAP_NET_RAW, the user channel CAP_NET_ADMIN.
    case permissionDenied(operation: String, errno: Int32)
    /// The controller is in use (EBUSY): the user channel needs a controller that is down and
    /// not managed (`btmgmt --index N power off`), or another process holds it.
    case controllerBusy(index: UInt16)
    /// The controller is blocked by rfkill (ERFKILL).
    case blockedByRFKill(index: UInt16)
    /// The controller is down (ENETDOWN): power it on (`btmgmt --index N power on`, or
    /// `bluetoothctl power on` where bluetoothd runs).
    case controllerDown(index: UInt16)
    /// Any other failure of a socket call.
    case systemCallFailed(operation: String, errno: Int32)

    /// Classifies the errno of a failed socket call on controller `index`.
    public init(errno code: Int32, operation: String, controller index: UInt16) {
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: self = .noKernelSupport(errno: code)
        case ENODEV: self = .noController(index: index)
        case EPERM, EACCES: self = .permissionDenied(operation: operation, errno: code)
        case EBUSY, EALREADY: self = .controllerBusy(index: index)
        case ERFKILL: self = .blockedByRFKill(index: index)
        case ENETDOWN: self = .controllerDown(index: index)
        default: self = .systemCallFailed(operation: operation, errno: code)
        }
    }

    public var description: String {
        switch self {
        case .noKernelSupport(let code):
            "Bluetooth unavailable: the kernel has no Bluetooth socket support (\(Self.text(code))); "
                + "BLE devices are not read"
        case .noController(let index):
            "Bluetooth unavailable: no controller hci\(index); BLE devices are not read"
        case .permissionDenied(let operation, let code):
            "Bluetooth unavailable: \(operation) not permitted (\(Self.text(code))); raw HCI scanning needs "
                + "CAP_NET_RAW, the user channel CAP_NET_ADMIN (see the systemd unit's AmbientCapabilities)"
        case .controllerBusy(let index):
            "Bluetooth unavailable: hci\(index) is busy; the user channel needs the controller down and unused "
                + "by bluetoothd (btmgmt --index \(index) power off)"
        case .blockedByRFKill(let index):
            "Bluetooth unavailable: hci\(index) is blocked by rfkill (rfkill unblock bluetooth)"
        case .controllerDown(let index):
            "Bluetooth unavailable: hci\(index) is powered off; power it on with "
                + "`btmgmt --index \(index) power on` (or `bluetoothctl power on` where bluetoothd runs)"
        case .systemCallFailed(let operation, let code):
            "Bluetooth unavailable: \(operation) failed (\(Self.text(code)))"
        }
    }

    private static func text(_ code: Int32) -> String {
        "\(String(cString: strerror(code))), errno \(code)"
    }
}
