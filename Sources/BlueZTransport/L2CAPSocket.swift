import CBluetooth
import Foundation
import Glibc
import Transport

/// The link security to ask the kernel for before connecting (`BT_SECURITY`).
public enum BLESecurityLevel: UInt8, Hashable, Sendable {
    /// No encryption (the default for unbonded devices).
    case low = 1
    /// Encryption; the kernel pairs (or uses the stored bond) as needed. Health devices that
    /// answer Insufficient Authentication / Encryption need this.
    case medium = 2
    /// Encryption with an authenticated (MITM-protected) key.
    case high = 3
}

/// Why an ATT connection could not be made.
public enum L2CAPConnectError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Bluetooth itself is not usable here.
    case unavailable(BluetoothUnavailable)
    /// The peer did not accept the connection within the timeout (it may not be advertising
    /// connectably any more).
    case timedOut(BLEAddress, after: Duration)
    /// `connect` failed with this errno (EHOSTDOWN, ECONNREFUSED, …).
    case connectFailed(BLEAddress, errno: Int32)

    public var description: String {
        switch self {
        case .unavailable(let reason): reason.description
        case .timedOut(let address, let after): "connecting to \(address) timed out after \(after)"
        case .connectFailed(let address, let code):
            "connecting to \(address) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}

/// Opens L2CAP LE sockets on the ATT fixed channel (CID 4) for ``GATTClient``.
public enum L2CAPSocket {
    /// The ATT fixed channel.
    public static let attChannelID: UInt16 = 0x0004

    /// Connects to `address` on the ATT channel through controller `index` (nil: any, the
    /// kernel picks the route) and returns the connected channel and the peer with its HCI
    /// connection handle.
    ///
    /// The socket is non-blocking while connecting; a dedicated thread waits up to `timeout`
    /// for the connection so no cooperative thread blocks.
    public static func connect(
        to address: BLEAddress, addressType: BLEAddressType, controller index: UInt16? = nil,
        security: BLESecurityLevel = .low, timeout: Duration = .seconds(10)
    ) async throws(L2CAPConnectError) -> (channel: PacketChannel, peer: GATTPeer) {
        let result: Result<(Int32, UInt16), L2CAPConnectError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: connectBlocking(
                    to: address, addressType: addressType, controller: index, security: security, timeout: timeout))
            }
            thread.name = "l2cap-connect"
            thread.start()
        }
        let (descriptor, handle) = try result.get()
        do {
            let channel = try PacketChannel(adopting: descriptor, maximumPacketSize: 2048, threadName: "att-\(address)")
            return (channel, GATTPeer(address: address, addressType: addressType, connectionHandle: handle))
        } catch {
            let code: Int32 = if case .pipeFailed(let code) = error { code } else { EIO }
            throw .unavailable(.systemCallFailed(operation: "reader set-up for \(address)", errno: code))
        }
    }

    private static func connectBlocking(
        to address: BLEAddress, addressType: BLEAddressType, controller index: UInt16?,
        security: BLESecurityLevel, timeout: Duration
    ) -> Result<(Int32, UInt16), L2CAPConnectError> {
        let controllerIndex = index ?? 0
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                                BTPROTO_L2CAP)
        guard descriptor >= 0 else {
            return .failure(.unavailable(BluetoothUnavailable(
                errno: errno, operation: "socket(AF_BLUETOOTH, BTPROTO_L2CAP)", controller: controllerIndex)))
        }
        func fail(_ error: L2CAPConnectError) -> Result<(Int32, UInt16), L2CAPConnectError> {
            close(descriptor)
            return .failure(error)
        }

        var local = sockaddr_l2()
        local.l2_family = sa_family_t(AF_BLUETOOTH)
        local.l2_cid = attChannelID.littleEndian
        local.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        if let index {
            var controllerAddress = bdaddr_t()
            guard hci_devba(Int32(index), &controllerAddress) == 0 else {
                return fail(.unavailable(.noController(index: index)))
            }
            local.l2_bdaddr = controllerAddress
        }
        guard withSocketAddress(&local, { bind(descriptor, $0, $1) }) == 0 else {
            return fail(.unavailable(BluetoothUnavailable(errno: errno, operation: "bind L2CAP", controller: controllerIndex)))
        }

        if security != .low {
            var level = bt_security(level: security.rawValue, key_size: 0)
            guard setsockopt(descriptor, SOL_BLUETOOTH, BT_SECURITY, &level,
                             socklen_t(MemoryLayout<bt_security>.size)) == 0 else {
                return fail(.connectFailed(address, errno: errno))
            }
        }

        var remote = sockaddr_l2()
        remote.l2_family = sa_family_t(AF_BLUETOOTH)
        remote.l2_cid = attChannelID.littleEndian
        remote.l2_bdaddr_type = UInt8(addressType.isRandom ? BDADDR_LE_RANDOM : BDADDR_LE_PUBLIC)
        withUnsafeMutableBytes(of: &remote.l2_bdaddr) { bytes in
            for (offset, byte) in address.littleEndianBytes.enumerated() { bytes[offset] = byte }
        }

        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        if withSocketAddress(&remote, { Glibc.connect(descriptor, $0, $1) }) != 0 {
            guard errno == EINPROGRESS || errno == EAGAIN else { return fail(.connectFailed(address, errno: errno)) }
            var waiting = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)]
            let milliseconds = Int32(clamping: timeout.components.seconds * 1000
                + timeout.components.attoseconds / 1_000_000_000_000_000)
            var ready: Int32
            repeat { ready = poll(&waiting, 1, milliseconds) } while ready < 0 && errno == EINTR
            guard ready > 0 else { return fail(.timedOut(address, after: timeout)) }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length)
            guard socketError == 0 else { return fail(.connectFailed(address, errno: socketError)) }
        }
        _ = fcntl(descriptor, F_SETFL, flags)

        var info = l2cap_conninfo()
        var infoLength = socklen_t(MemoryLayout<l2cap_conninfo>.size)
        let handle: UInt16 = getsockopt(descriptor, SOL_L2CAP, L2CAP_CONNINFO, &info, &infoLength) == 0 ? info.hci_handle : 0
        return .success((descriptor, handle))
    }

    private static func withSocketAddress(_ address: inout sockaddr_l2, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
        }
    }
}

extension PacketChannel {
    /// Asks the kernel for `level` on this L2CAP socket (`BT_SECURITY`): on a connected LE link
    /// it starts pairing ("Just Works" without a passkey agent) or encryption with a stored bond.
    public func raiseSecurity(to level: BLESecurityLevel) throws(PacketChannelError) {
        try withDescriptor { (descriptor: Int32) -> Result<Void, PacketChannelError> in
            var value = bt_security(level: level.rawValue, key_size: 0)
            guard setsockopt(descriptor, SOL_BLUETOOTH, BT_SECURITY, &value, socklen_t(MemoryLayout<bt_security>.size)) == 0
            else { return .failure(.writeFailed(errno: errno)) }
            return .success(())
        }.get()
    }
}

extension GATTClient {
    /// Connects to a peripheral on the ATT channel and returns a started client (its `connected`
    /// event is already on ``events``).
    /// - Parameters:
    ///   - controller: the controller index to connect through; nil lets the kernel choose.
    ///   - security: ``BLESecurityLevel/medium`` for devices that need an encrypted (bonded) link.
    public static func connect(
        to address: BLEAddress, addressType: BLEAddressType, controller: UInt16? = nil,
        security: BLESecurityLevel = .low, connectTimeout: Duration = .seconds(10),
        configuration: GATTClientConfiguration = GATTClientConfiguration(),
        log: @escaping BlueZLogSink = { _ in }, tap: PacketTap? = nil
    ) async throws(L2CAPConnectError) -> GATTClient {
        let (channel, peer) = try await L2CAPSocket.connect(
            to: address, addressType: addressType, controller: controller, security: security, timeout: connectTimeout)
        let client = GATTClient(channel: channel, peer: peer, configuration: configuration, log: log, tap: tap,
                                securityRaiser: { level in try channel.raiseSecurity(to: level) })
        await client.start()
        return client
    }
}
