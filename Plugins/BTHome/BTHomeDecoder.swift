import AdapterKit
import Transport

/// The first byte of BTHome v2 service data.
///
/// bit0 encrypted · bit1 the advertiser's MAC follows (6 bytes, least significant first) ·
/// bit2 trigger-based device (sends on events, not at a regular interval) · bits 3-4 reserved ·
/// bits 5-7 format version (2).
public struct BTHomeDeviceInfo: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public var isEncrypted: Bool { rawValue & 0x01 != 0 }
    public var hasMACAddress: Bool { rawValue & 0x02 != 0 }
    public var isTriggerBased: Bool { rawValue & 0x04 != 0 }
    /// The BTHome format version (bits 5-7).
    public var version: Int { Int(rawValue >> 5) }

    public var description: String {
        var flags: [String] = ["v\(version)"]
        if isEncrypted { flags.append("encrypted") }
        if hasMACAddress { flags.append("mac") }
        if isTriggerBased { flags.append("trigger-based") }
        return String(format: "0x%02x (", rawValue) + flags.joined(separator: ", ") + ")"
    }
}

/// One object of a BTHome packet: its definition, where it starts and its value.
public struct BTHomeObject: Sendable, Hashable {
    public var definition: BTHomeObjectDefinition
    /// Offset of the object id byte inside the service data.
    public var offset: Int
    /// The value bytes (after the id, and after the length byte for length-prefixed objects).
    public var valueBytes: [UInt8]

    public init(definition: BTHomeObjectDefinition, offset: Int, valueBytes: [UInt8]) {
        self.definition = definition
        self.offset = offset
        self.valueBytes = valueBytes
    }

    public var id: UInt8 { definition.id }

    /// The integer as sent (sign-extended for signed formats); nil for text and raw objects.
    public var rawValue: Int64? {
        switch definition.format {
        case .unsigned:
            var value: UInt64 = 0
            for (index, byte) in valueBytes.enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
            return Int64(value)
        case .signed:
            var value: UInt64 = 0
            for (index, byte) in valueBytes.enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
            let unusedBits = UInt64(64 - 8 * valueBytes.count)
            return Int64(bitPattern: value << unusedBits) >> Int64(unusedBits)
        case .lengthPrefixedText, .lengthPrefixedRaw:
            return nil
        }
    }

    /// The scaled value in the definition's unit (`raw × numerator ÷ denominator`); nil for text and raw.
    public var value: Double? {
        guard let rawValue else { return nil }
        return Double(rawValue * definition.numerator) / Double(definition.denominator)
    }

    /// The text of a text object (invalid UTF-8 replaced); nil for other formats.
    public var text: String? {
        definition.format == .lengthPrefixedText ? String(decoding: valueBytes, as: UTF8.self) : nil
    }
}

/// A decoded BTHome v2 service-data payload.
public struct BTHomePacket: Sendable, Hashable {
    public var deviceInfo: BTHomeDeviceInfo
    /// The advertiser's address when the packet carries it (device info bit 1).
    public var macAddress: BLEAddress?
    /// The objects read, in order. Empty for an encrypted packet.
    public var objects: [BTHomeObject]
    /// For an encrypted packet: ciphertext, counter (4) and MIC (4), undecoded.
    public var encryptedPayload: [UInt8]?
    /// Why the object list was not read to its end (unknown id, truncated object); the objects
    /// before that point are in ``objects``.
    public var objectListError: BTHomeDecodingError?

    public init(deviceInfo: BTHomeDeviceInfo, macAddress: BLEAddress? = nil, objects: [BTHomeObject] = [],
                encryptedPayload: [UInt8]? = nil, objectListError: BTHomeDecodingError? = nil) {
        self.deviceInfo = deviceInfo
        self.macAddress = macAddress
        self.objects = objects
        self.encryptedPayload = encryptedPayload
        self.objectListError = objectListError
    }

    /// The packet id (object 0x00), which changes when the payload changes.
    public var packetID: UInt8? {
        guard let object = objects.first(where: { $0.id == 0x00 }), let raw = object.rawValue else { return nil }
        return UInt8(truncatingIfNeeded: raw)
    }
}

/// Why BTHome service data could not be (fully) decoded. Every case names the offset and bytes.
public enum BTHomeDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The data ends before `field`, which starts at `offset`.
    case tooShort(field: String, offset: Int, bytes: [UInt8])
    /// The device info byte (offset 0) names a format version other than 2.
    case unsupportedVersion(Int, deviceInfo: UInt8, bytes: [UInt8])
    /// An object id whose layout is unknown, at `offset`; nothing after it can be read.
    case unknownObject(id: UInt8, offset: Int, bytes: [UInt8])
    /// The object at `offset` needs `needed` value bytes but only `available` remain.
    case truncatedObject(id: UInt8, offset: Int, needed: Int, available: Int, bytes: [UInt8])

    /// A short stable key for rejection counts.
    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .unsupportedVersion: "unsupported-version"
        case .unknownObject: "unknown-object"
        case .truncatedObject: "truncated-object"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let field, let offset, let bytes):
            "BTHome data of \(bytes.count) bytes ends before \(field) at offset \(offset): \(hexString(bytes))"
        case .unsupportedVersion(let version, let deviceInfo, let bytes):
            String(format: "device info 0x%02x at offset 0 names BTHome version %d, not 2: ", deviceInfo, version)
                + hexString(bytes)
        case .unknownObject(let id, let offset, let bytes):
            String(format: "unknown object id 0x%02x at offset %d (its length is unknown): ", id, offset) + hexString(bytes)
        case .truncatedObject(let id, let offset, let needed, let available, let bytes):
            String(format: "object 0x%02x at offset %d needs %d value bytes, %d remain: ", id, offset, needed, available)
                + hexString(bytes)
        }
    }
}

/// The pure BTHome v2 decoder: service data of UUID 0xFCD2 (UUID bytes removed) to a packet.
///
/// Layout: device info byte · [MAC, 6 bytes reversed, if bit 1] · objects, each an id byte and a
/// value whose width the id defines (text and raw objects carry a length byte first). Encrypted
/// packets are returned undecoded (they need the device's bind key).
public enum BTHomeDecoder {
    /// The service-data UUID of BTHome v2.
    public static let serviceUUID = BLEUUID(0xFCD2)

    /// Decodes the header and as many objects as can be read. Header problems throw; a problem in
    /// the object list is kept in ``BTHomePacket/objectListError`` with the objects before it.
    public static func decode(_ serviceData: some Collection<UInt8>) throws(BTHomeDecodingError) -> BTHomePacket {
        let bytes = Array(serviceData)
        guard let first = bytes.first else { throw .tooShort(field: "device info", offset: 0, bytes: bytes) }
        let deviceInfo = BTHomeDeviceInfo(rawValue: first)
        guard deviceInfo.version == 2 else {
            throw .unsupportedVersion(deviceInfo.version, deviceInfo: first, bytes: bytes)
        }
        var offset = 1
        var macAddress: BLEAddress?
        if deviceInfo.hasMACAddress {
            guard bytes.count >= offset + 6 else { throw .tooShort(field: "MAC address", offset: offset, bytes: bytes) }
            macAddress = BLEAddress(littleEndianBytes: bytes[offset..<(offset + 6)])
            offset += 6
        }
        if deviceInfo.isEncrypted {
            return BTHomePacket(deviceInfo: deviceInfo, macAddress: macAddress, encryptedPayload: Array(bytes[offset...]))
        }
        var objects: [BTHomeObject] = []
        while offset < bytes.count {
            let id = bytes[offset]
            guard let definition = BTHomeObjectTable.definition(for: id) else {
                return BTHomePacket(deviceInfo: deviceInfo, macAddress: macAddress, objects: objects,
                                    objectListError: .unknownObject(id: id, offset: offset, bytes: bytes))
            }
            var valueStart = offset + 1
            var width = definition.byteCount
            if definition.isLengthPrefixed {
                guard valueStart < bytes.count else {
                    return BTHomePacket(deviceInfo: deviceInfo, macAddress: macAddress, objects: objects,
                                        objectListError: .truncatedObject(id: id, offset: offset, needed: 1, available: 0, bytes: bytes))
                }
                width = Int(bytes[valueStart])
                valueStart += 1
            }
            let available = bytes.count - valueStart
            guard available >= width else {
                return BTHomePacket(deviceInfo: deviceInfo, macAddress: macAddress, objects: objects,
                                    objectListError: .truncatedObject(id: id, offset: offset, needed: width, available: available, bytes: bytes))
            }
            objects.append(BTHomeObject(definition: definition, offset: offset,
                                        valueBytes: Array(bytes[valueStart..<(valueStart + width)])))
            offset = valueStart + width
        }
        return BTHomePacket(deviceInfo: deviceInfo, macAddress: macAddress, objects: objects)
    }

    /// Like ``decode(_:)`` but also throws when the object list cannot be read to its end.
    public static func decodeStrictly(_ serviceData: some Collection<UInt8>) throws(BTHomeDecodingError) -> BTHomePacket {
        let packet = try decode(serviceData)
        if let error = packet.objectListError { throw error }
        return packet
    }
}
