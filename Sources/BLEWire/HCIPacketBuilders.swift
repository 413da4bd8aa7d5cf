import Transport

/// Builds the HCI event packets (without the H4 indicator byte) a recorder or a test writes for
/// connections: event code, parameter length, parameters (Core spec Vol 4 Part E 5.4.4, 7.7).
public enum HCIEventBuilder {
    /// Disconnection Complete event code.
    public static let disconnectionCompleteCode: UInt8 = 0x05
    /// Command Complete event code.
    public static let commandCompleteCode: UInt8 = 0x0E
    /// LE Meta event code; the subevent code is the first parameter.
    public static let leMetaCode: UInt8 = 0x3E
    /// LE Connection Complete subevent.
    public static let leConnectionCompleteSubevent: UInt8 = 0x01
    /// LE Advertising Report subevent (legacy scanning).
    public static let leAdvertisingReportSubevent: UInt8 = 0x02
    /// LE Extended Advertising Report subevent.
    public static let leExtendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Any event: code, parameter length, parameters.
    public static func event(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        [code, UInt8(truncatingIfNeeded: parameters.count)] + parameters
    }

    /// An LE Meta event: subevent code, then its parameters.
    public static func leMeta(_ subevent: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        event(leMetaCode, [subevent] + parameters)
    }

    /// LE Connection Complete (7.7.65.1). Interval and supervision timeout in the spec's units
    /// (1.25 ms and 10 ms); the defaults are 30 ms and 720 ms.
    public static func leConnectionComplete(
        status: UInt8 = 0, handle: UInt16, role: UInt8 = 0, peerAddressType: UInt8, peer: BLEAddress,
        interval: UInt16 = 0x0018, latency: UInt16 = 0, supervisionTimeout: UInt16 = 0x0048, clockAccuracy: UInt8 = 0
    ) -> [UInt8] {
        leMeta(leConnectionCompleteSubevent,
               [status] + handle.littleEndianBytes(count: 2) + [role, peerAddressType] + peer.littleEndianBytes
                   + interval.littleEndianBytes(count: 2) + latency.littleEndianBytes(count: 2)
                   + supervisionTimeout.littleEndianBytes(count: 2) + [clockAccuracy])
    }

    /// Command Complete (7.7.14): one command credit, the opcode, its return parameters (status first).
    public static func commandComplete(opcode: HCIOpcode, returnParameters: [UInt8]) -> [UInt8] {
        event(commandCompleteCode, [0x01] + opcode.rawValue.littleEndianBytes(count: 2) + returnParameters)
    }

    /// Disconnection Complete (7.7.5) with status success.
    public static func disconnectionComplete(handle: UInt16, reason: UInt8) -> [UInt8] {
        event(disconnectionCompleteCode, [0x00] + handle.littleEndianBytes(count: 2) + [reason])
    }
}

/// Builds L2CAP basic frames and the HCI ACL data packets that carry them (Vol 3 Part A 3.1,
/// Vol 4 Part E 5.4.2).
public enum ACLPacketBuilder {
    /// The fixed L2CAP channel of the Attribute Protocol.
    public static let attributeChannel: UInt16 = 0x0004

    /// The packet boundary flag of an ACL packet.
    public enum Boundary: UInt16, Sendable {
        /// First fragment, non-flushable (what a host sends).
        case firstFromHost = 0b00
        /// Continuing fragment.
        case continuing = 0b01
        /// First fragment, flushable (what a controller delivers).
        case firstFromController = 0b10
    }

    /// An L2CAP basic frame: length, channel id, payload.
    public static func l2cap(channel: UInt16 = attributeChannel, _ payload: [UInt8]) -> [UInt8] {
        UInt16(truncatingIfNeeded: payload.count).littleEndianBytes(count: 2) + channel.littleEndianBytes(count: 2)
            + payload
    }

    /// One ACL data packet: handle with the boundary flag, data length, data.
    public static func packet(handle: UInt16, boundary: Boundary, _ data: some Collection<UInt8>) -> [UInt8] {
        (handle & 0x0FFF | boundary.rawValue << 12).littleEndianBytes(count: 2)
            + UInt16(truncatingIfNeeded: data.count).littleEndianBytes(count: 2) + Array(data)
    }

    /// ACL packets carrying `frame`, cut after the given sizes (the rest in a last packet): the
    /// first with `first`, the others continuing fragments.
    public static func packets(handle: UInt16, frame: [UInt8], fragmentSizes: [Int] = [],
                               first: Boundary = .firstFromController) -> [[UInt8]] {
        var pieces: [ArraySlice<UInt8>] = []
        var rest = frame[...]
        for size in fragmentSizes where !rest.isEmpty {
            pieces.append(rest.prefix(size))
            rest = rest.dropFirst(size)
        }
        if !rest.isEmpty || pieces.isEmpty { pieces.append(rest) }
        return pieces.enumerated().map { index, piece in
            packet(handle: handle, boundary: index == 0 ? first : .continuing, piece)
        }
    }
}
