import CBluetooth
import Glibc

/// Which HCI socket channel to open.
public enum HCIChannelMode: Hashable, Sendable {
    /// The raw channel: shared with the kernel and bluetoothd. Commands go to the controller
    /// alongside theirs; a filter passes only the events the scanner needs. Needs CAP_NET_RAW.
    case shared
    /// The user channel: exclusive access for a dedicated gateway; the kernel and bluetoothd
    /// stay away from the controller, which must be down and unmanaged. Needs CAP_NET_ADMIN.
    /// The scanner should then initialise the controller itself
    /// (``HCIScannerConfiguration/initializesController``).
    case exclusive
}

/// Opens HCI sockets on a BlueZ kernel (`AF_BLUETOOTH`, `BTPROTO_HCI`).
public enum HCISocket {
    /// Opens controller `index` (`hci<index>`) and wraps the socket in a ``PacketChannel``.
    ///
    /// Shared mode binds to the raw channel and installs an HCI filter passing only events:
    /// Command Complete, Command Status, Hardware Error and LE Meta. It also checks that the
    /// controller is up, because writes to a down controller fail. Exclusive mode binds to the
    /// user channel.
    /// - Throws: ``BluetoothUnavailable`` naming the reason (no kernel support, no controller,
    ///   permission, busy, rfkill, down).
    public static func open(controller index: UInt16, mode: HCIChannelMode = .shared)
        throws(BluetoothUnavailable) -> PacketChannel
    {
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard descriptor >= 0 else {
            throw BluetoothUnavailable(errno: errno, operation: "socket(AF_BLUETOOTH, BTPROTO_HCI)", controller: index)
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = UInt16(mode == .shared ? HCI_CHANNEL_RAW : HCI_CHANNEL_USER)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw BluetoothUnavailable(errno: code, operation: "bind to hci\(index)", controller: index)
        }
        if mode == .shared {
            var info = hci_dev_info()
            if hci_devinfo(Int32(index), &info) == 0, info.flags & (1 << UInt32(HCI_UP)) == 0 {
                close(descriptor)
                throw .controllerDown(index: index)
            }
            var filter = hci_filter()
            hci_filter_clear(&filter)
            hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
            for event in [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_HARDWARE_ERROR, EVT_LE_META_EVENT] {
                hci_filter_set_event(Int32(event), &filter)
            }
            let set = setsockopt(descriptor, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size))
            guard set == 0 else {
                let code = errno
                close(descriptor)
                throw BluetoothUnavailable(errno: code, operation: "setsockopt(HCI_FILTER)", controller: index)
            }
        }
        do {
            return try PacketChannel(adopting: descriptor, maximumPacketSize: 1024, threadName: "hci\(index)-reader")
        } catch {
            let code: Int32 = if case .pipeFailed(let code) = error { code } else { EIO }
            throw .systemCallFailed(operation: "reader set-up for hci\(index)", errno: code)
        }
    }
}

extension HCIScanner {
    /// Opens controller `index` and returns a scanner on it (not started yet). In exclusive
    /// mode the scanner initialises the controller itself (reset, event masks), because no
    /// kernel or bluetoothd does it on the user channel.
    /// - Throws: ``BluetoothUnavailable`` when the controller cannot be opened; the daemon
    ///   logs it once and carries on without Bluetooth.
    public static func open(
        controller index: UInt16 = 0, mode: HCIChannelMode = .shared,
        configuration: HCIScannerConfiguration = HCIScannerConfiguration(),
        log: @escaping BlueZLogSink = { _ in }, tap: PacketTap? = nil
    ) throws(BluetoothUnavailable) -> HCIScanner {
        let channel = try HCISocket.open(controller: index, mode: mode)
        var configuration = configuration
        configuration.controllerName = "hci\(index)"
        if mode == .exclusive { configuration.initializesController = true }
        return HCIScanner(channel: channel, configuration: configuration, log: log, tap: tap)
    }
}
