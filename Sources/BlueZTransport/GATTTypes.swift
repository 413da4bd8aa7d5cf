import BLEWire
import Transport

/// The property bits of a characteristic declaration.
public struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = GATTCharacteristicProperties(rawValue: 0x01)
    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = GATTCharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = GATTCharacteristicProperties(rawValue: 0x80)

    public var description: String {
        let names: [(GATTCharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
            (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
            (.authenticatedSignedWrites, "signed-write"), (.extendedProperties, "extended"),
        ]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: ",")
    }
}

/// A descriptor found by Find Information between a characteristic's value and the next declaration.
public struct GATTDescriptor: Hashable, Sendable {
    public var handle: UInt16
    public var uuid: BLEUUID

    public init(handle: UInt16, uuid: BLEUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// A characteristic as discovery found it.
public struct GATTCharacteristic: Hashable, Sendable {
    public var uuid: BLEUUID
    /// The handle of the declaration (attribute type 0x2803).
    public var declarationHandle: UInt16
    /// The handle of the value.
    public var valueHandle: UInt16
    /// The last handle belonging to the characteristic (its last descriptor).
    public var endHandle: UInt16
    public var properties: GATTCharacteristicProperties
    public var descriptors: [GATTDescriptor]

    public init(uuid: BLEUUID, declarationHandle: UInt16, valueHandle: UInt16, endHandle: UInt16,
                properties: GATTCharacteristicProperties, descriptors: [GATTDescriptor] = []) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.endHandle = endHandle
        self.properties = properties
        self.descriptors = descriptors
    }

    /// The Client Characteristic Configuration descriptor (0x2902), if discovered.
    public var clientConfigurationHandle: UInt16? {
        descriptors.first { $0.uuid == .clientCharacteristicConfiguration }?.handle
    }
}

/// A primary service with its handle range and characteristics.
public struct GATTService: Hashable, Sendable {
    public var uuid: BLEUUID
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var characteristics: [GATTCharacteristic]

    public init(uuid: BLEUUID, startHandle: UInt16, endHandle: UInt16, characteristics: [GATTCharacteristic] = []) {
        self.uuid = uuid
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.characteristics = characteristics
    }
}

/// How to be told about a characteristic's new values.
public enum GATTSubscriptionMode: Hashable, Sendable {
    /// Handle Value Notifications (CCCD `01 00`), not acknowledged.
    case notifications
    /// Handle Value Indications (CCCD `02 00`), each confirmed by the client.
    case indications

    /// The CCCD value that enables this mode.
    public var configurationValue: UInt16 { self == .notifications ? 0x0001 : 0x0002 }
}

/// What ``GATTClient/subscribeToAll(characteristics:)`` did with one characteristic.
public struct GATTSubscriptionOutcome: Hashable, Sendable {
    /// What happened.
    public enum Result: Hashable, Sendable {
        /// The CCCD was written; values arrive in this mode.
        case subscribed(GATTSubscriptionMode)
        /// The characteristic has neither the notify nor the indicate property.
        case notSubscribable
        /// Discovery found no CCCD for it.
        case noClientConfiguration
        /// The peer refused the CCCD write (e.g. Insufficient Authentication: bond first).
        case refused(ATTErrorCode)
    }

    public var serviceUUID: BLEUUID
    public var characteristic: GATTCharacteristic
    public var result: Result

    public init(serviceUUID: BLEUUID, characteristic: GATTCharacteristic, result: Result) {
        self.serviceUUID = serviceUUID
        self.characteristic = characteristic
        self.result = result
    }
}

/// Why a GATT operation failed.
public enum GATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer answered a request with an Error Response.
    case attError(request: ATTOpcode, handle: UInt16, code: ATTErrorCode)
    /// No response within the ATT transaction timeout; the bearer is closed afterwards, as the
    /// spec requires.
    case timedOut(request: ATTOpcode, after: Duration)
    /// The link ended before the response (peer disconnected, link lost, closed locally).
    case disconnected(PacketChannelEnd)
    /// A response that does not follow the PDU layout: its opcode, bytes and the offset where
    /// decoding failed.
    case malformedPDU(opcode: ATTOpcode, bytes: [UInt8], offset: Int, reason: String)
    /// Writing the request failed.
    case channel(PacketChannelError)
    /// An operation was called before ``GATTClient/start()``.
    case notStarted
    /// The characteristic has no Client Characteristic Configuration descriptor.
    case noClientConfiguration(characteristic: BLEUUID)
    /// The link cannot be encrypted (no socket to ask, e.g. a test pipe without a raiser).
    case securityUnavailable
    /// The kernel refused to raise the link's security.
    case securityRefused(String)
    /// A value longer than one write PDU carries at the current MTU.
    case valueTooLong(length: Int, limit: Int)

    public var description: String {
        switch self {
        case .attError(let request, let handle, let code):
            "\(request) for handle 0x\(String(handle, radix: 16).leftPadded(to: 4)) failed: \(code)"
        case .timedOut(let request, let after): "no answer to \(request) within \(after); link closed"
        case .disconnected(let end): "disconnected (\(end))"
        case .malformedPDU(let opcode, let bytes, let offset, let reason):
            "malformed \(opcode) at offset \(offset): \(reason); PDU [\(bytes.hexString)]"
        case .channel(let error): "cannot send the ATT request: \(error)"
        case .notStarted: "the GATT client was not started"
        case .securityUnavailable: "this link cannot be encrypted"
        case .securityRefused(let why): "raising the link's security failed: \(why)"
        case .valueTooLong(let length, let limit): "a \(length)-byte value does not fit one write (at most \(limit) bytes)"
        case .noClientConfiguration(let uuid): "characteristic \(uuid) has no Client Characteristic Configuration descriptor"
        }
    }
}
