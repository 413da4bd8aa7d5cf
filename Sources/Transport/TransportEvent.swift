import Foundation

/// Something a Bluetooth LE transport saw: an advertisement, a link coming up or going down,
/// an attribute value, a client (un)subscribing. Produced alike by live transports and by
/// replaying a capture, so adapters cannot tell the two apart.
public enum TransportEvent: Hashable, Sendable {
    /// An advertising report or scan response.
    case advertisement(BLEAdvertisement)
    /// An LE connection was established.
    case connected(BLEConnection)
    /// A connection ended (Disconnection Complete; classic links too when a trace has them).
    case disconnected(BLEDisconnection)
    /// An attribute value travelled over ATT (notification, indication, read, write).
    case gattValue(GATTValue)
    /// A client wrote a Client Characteristic Configuration descriptor.
    case subscriptionChanged(GATTSubscription)
}

/// The controller's role in a connection (HCI LE Connection Complete, Role field).
public enum BLEConnectionRole: UInt8, Hashable, Sendable {
    /// The local controller initiated the connection.
    case central = 0
    /// The local controller was advertising and the peer connected.
    case peripheral = 1
}

/// An established LE connection, from LE (Enhanced) Connection Complete.
public struct BLEConnection: Hashable, Sendable {
    /// When the connection completed.
    public var time: Date
    /// The controller's connection handle (0x0000-0x0EFF).
    public var handle: UInt16
    /// The peer's address (its identity address when the controller resolved it).
    public var peerAddress: BLEAddress
    /// The peer's address type.
    public var peerAddressType: BLEAddressType
    /// The local controller's role; nil when the event carried an unknown code.
    public var role: BLEConnectionRole?

    /// Creates a connection record.
    public init(time: Date, handle: UInt16, peerAddress: BLEAddress, peerAddressType: BLEAddressType,
                role: BLEConnectionRole?) {
        self.time = time
        self.handle = handle
        self.peerAddress = peerAddress
        self.peerAddressType = peerAddressType
        self.role = role
    }
}

/// The end of an LE connection, from Disconnection Complete.
public struct BLEDisconnection: Hashable, Sendable {
    /// When the disconnection completed.
    public var time: Date
    /// The connection handle that is now free.
    public var handle: UInt16
    /// The peer's address when the connection's start was seen.
    public var peerAddress: BLEAddress?
    /// The HCI reason code (e.g. 0x13 remote user terminated, 0x16 local host terminated, 0x08 timeout).
    public var reason: UInt8

    /// Creates a disconnection record.
    public init(time: Date, handle: UInt16, peerAddress: BLEAddress?, reason: UInt8) {
        self.time = time
        self.handle = handle
        self.peerAddress = peerAddress
        self.reason = reason
    }
}

/// How an attribute value travelled.
public enum GATTValueKind: String, Hashable, Sendable, CaseIterable {
    /// Handle Value Notification (ATT 0x1B), server to client, unacknowledged.
    case notification
    /// Handle Value Indication (ATT 0x1D), server to client, confirmed by the client.
    case indication
    /// Read Response (ATT 0x0B) or a Read By Type Response value, matched to its request.
    case read
    /// Write Request (ATT 0x12), client to server.
    case write
    /// Write Command (ATT 0x52), client to server, no response.
    case writeWithoutResponse
}

/// An attribute value with what is known about the attribute: the characteristic and service
/// UUIDs are filled in when the service discovery of that connection (or an earlier connection
/// to the same peer) was seen, and are nil otherwise.
public struct GATTValue: Hashable, Sendable {
    /// When the PDU was sent or received.
    public var time: Date
    /// The connection handle.
    public var connection: UInt16
    /// The peer's address, when the connection's start was seen.
    public var peerAddress: BLEAddress?
    /// The UUID of the service containing the attribute, if known.
    public var serviceUUID: BLEUUID?
    /// The UUID of the characteristic whose value handle this is, if known.
    public var characteristicUUID: BLEUUID?
    /// The attribute handle.
    public var handle: UInt16
    /// The attribute value bytes.
    public var value: [UInt8]
    /// How the value travelled.
    public var kind: GATTValueKind

    /// Creates an attribute value record.
    public init(time: Date, connection: UInt16, peerAddress: BLEAddress?, serviceUUID: BLEUUID?,
                characteristicUUID: BLEUUID?, handle: UInt16, value: [UInt8], kind: GATTValueKind) {
        self.time = time
        self.connection = connection
        self.peerAddress = peerAddress
        self.serviceUUID = serviceUUID
        self.characteristicUUID = characteristicUUID
        self.handle = handle
        self.value = value
        self.kind = kind
    }
}

/// A write to a Client Characteristic Configuration descriptor (0x2902): the client turning
/// notifications and/or indications of one characteristic on or off.
public struct GATTSubscription: Hashable, Sendable {
    /// When the write was sent.
    public var time: Date
    /// The connection handle.
    public var connection: UInt16
    /// The peer's address, when the connection's start was seen.
    public var peerAddress: BLEAddress?
    /// The UUID of the service containing the characteristic, if known.
    public var serviceUUID: BLEUUID?
    /// The UUID of the characteristic the descriptor belongs to, if known.
    public var characteristicUUID: BLEUUID?
    /// The value handle of that characteristic, if known.
    public var characteristicHandle: UInt16?
    /// The handle of the descriptor that was written.
    public var descriptorHandle: UInt16
    /// The written configuration value (bit0 notifications, bit1 indications).
    public var configuration: UInt16

    /// Creates a subscription record.
    public init(time: Date, connection: UInt16, peerAddress: BLEAddress?, serviceUUID: BLEUUID?,
                characteristicUUID: BLEUUID?, characteristicHandle: UInt16?, descriptorHandle: UInt16,
                configuration: UInt16) {
        self.time = time
        self.connection = connection
        self.peerAddress = peerAddress
        self.serviceUUID = serviceUUID
        self.characteristicUUID = characteristicUUID
        self.characteristicHandle = characteristicHandle
        self.descriptorHandle = descriptorHandle
        self.configuration = configuration
    }

    /// Notifications are enabled.
    public var notificationsEnabled: Bool { configuration & 0x0001 != 0 }
    /// Indications are enabled.
    public var indicationsEnabled: Bool { configuration & 0x0002 != 0 }
}
