import Foundation

/// The event type of an advertising report, in the bit layout of the LE Extended Advertising
/// Report (Core spec Vol 4 Part E 7.7.65.13): bit0 connectable, bit1 scannable, bit2 directed,
/// bit3 scan response, bit4 legacy PDU. Legacy reports keep their original code in ``legacyType``.
public struct BLEAdvertisingEventType: Hashable, Sendable, CustomStringConvertible {
    /// Event properties, extended-report layout, data-status bits (5-6) removed.
    public let properties: UInt16
    /// The code of a legacy LE Advertising Report (0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND,
    /// 3 ADV_NONCONN_IND, 4 SCAN_RSP); nil for extended reports.
    public let legacyType: UInt8?

    /// Creates the type of an extended report from its 16-bit event type field. A legacy PDU
    /// reported this way (bit4) also gets its legacy code, so both report kinds compare alike.
    public init(extendedEventType: UInt16) {
        let properties = extendedEventType & 0x1F
        self.properties = properties
        switch properties {
        case 0x13: legacyType = 0x00
        case 0x15: legacyType = 0x01
        case 0x12: legacyType = 0x02
        case 0x10: legacyType = 0x03
        case 0x1A, 0x1B: legacyType = 0x04
        default: legacyType = nil
        }
    }

    /// Creates the type of a legacy report from its event type byte.
    public init(legacyType: UInt8) {
        self.legacyType = legacyType
        switch legacyType {
        case 0x00: properties = 0x13  // connectable, scannable, legacy
        case 0x01: properties = 0x15  // connectable, directed, legacy
        case 0x02: properties = 0x12  // scannable, legacy
        case 0x03: properties = 0x10  // legacy
        case 0x04: properties = 0x1A  // scannable, scan response, legacy
        default: properties = 0x10
        }
    }

    /// ADV_IND as a legacy report.
    public static let advInd = BLEAdvertisingEventType(legacyType: 0)
    /// ADV_DIRECT_IND as a legacy report.
    public static let advDirectInd = BLEAdvertisingEventType(legacyType: 1)
    /// ADV_SCAN_IND as a legacy report.
    public static let advScanInd = BLEAdvertisingEventType(legacyType: 2)
    /// ADV_NONCONN_IND as a legacy report.
    public static let advNonconnInd = BLEAdvertisingEventType(legacyType: 3)
    /// SCAN_RSP as a legacy report.
    public static let scanResponse = BLEAdvertisingEventType(legacyType: 4)

    /// The advertiser accepts connections.
    public var isConnectable: Bool { properties & 0x01 != 0 }
    /// The advertiser accepts scan requests.
    public var isScannable: Bool { properties & 0x02 != 0 }
    /// The advertisement is directed at one peer.
    public var isDirected: Bool { properties & 0x04 != 0 }
    /// The report carries a scan response.
    public var isScanResponse: Bool { properties & 0x08 != 0 }
    /// The report carries a legacy advertising PDU.
    public var isLegacyPDU: Bool { properties & 0x10 != 0 }

    public var description: String {
        switch legacyType {
        case 0x00: return "ADV_IND"
        case 0x01: return "ADV_DIRECT_IND"
        case 0x02: return "ADV_SCAN_IND"
        case 0x03: return "ADV_NONCONN_IND"
        case 0x04: return "SCAN_RSP"
        case let code?: return "legacy(0x\(String(code, radix: 16)))"
        case nil: return "extended(0x\(String(properties, radix: 16)))"
        }
    }
}

/// One advertising report (or scan response) from one advertiser, with its AD structures
/// decoded (Core Specification Supplement, Part A). Each report stands alone: a scan response
/// is a separate value, not merged into the advertisement it answers.
public struct BLEAdvertisement: Hashable, Sendable {
    /// When the report was received (the capture's clock when replaying).
    public var time: Date
    /// The advertiser's address.
    public var address: BLEAddress
    /// The advertiser's address type.
    public var addressType: BLEAddressType
    /// Received signal strength in dBm; nil when the controller reports 127 (unavailable).
    public var rssi: Int8?
    /// The kind of advertising PDU.
    public var eventType: BLEAdvertisingEventType
    /// The complete local name (AD 0x09), or the shortened one (AD 0x08) if no complete one is present.
    public var localName: String?
    /// True when ``localName`` came from a Shortened Local Name structure.
    public var isLocalNameShortened: Bool
    /// The Flags structure (AD 0x01), e.g. 0x06 = LE General Discoverable, BR/EDR not supported.
    public var flags: UInt8?
    /// Service UUIDs from the 16-, 32- and 128-bit list structures (AD 0x02-0x07), in order.
    public var serviceUUIDs: [BLEUUID]
    /// Service data (AD 0x16, 0x20, 0x21) keyed by service UUID; the value excludes the UUID bytes.
    public var serviceData: [BLEUUID: [UInt8]]
    /// Manufacturer specific data (AD 0xFF) keyed by the company identifier (the first two
    /// bytes, little-endian); the value excludes those two bytes. If one report carries two
    /// structures with the same company id, the later one wins.
    public var manufacturerData: [UInt16: [UInt8]]
    /// The advertised TX power level in dBm (AD 0x0A, or the extended report's field if present).
    public var txPower: Int8?
    /// The advertising data exactly as received (all AD structures).
    public var data: [UInt8]
    /// Byte offset inside ``data`` of an AD structure whose length runs past the end of the
    /// data; nil when the data is well formed. Structures before that offset are decoded.
    public var malformedDataOffset: Int?

    /// Creates an advertisement and decodes its AD structures from `data`.
    public init(
        time: Date,
        address: BLEAddress,
        addressType: BLEAddressType,
        eventType: BLEAdvertisingEventType,
        rssi: Int8?,
        data: [UInt8]
    ) {
        self.time = time
        self.address = address
        self.addressType = addressType
        self.eventType = eventType
        self.rssi = rssi
        self.data = data
        self.localName = nil
        self.isLocalNameShortened = false
        self.flags = nil
        self.serviceUUIDs = []
        self.serviceData = [:]
        self.manufacturerData = [:]
        self.txPower = nil
        self.malformedDataOffset = nil
        data.withUnsafeBufferPointer { decodeStructures($0) }
    }

    private mutating func decodeStructures(_ bytes: UnsafeBufferPointer<UInt8>) {
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            // A zero length marks the start of the non-significant (zero padded) part.
            if length == 0 { return }
            guard offset + 1 + length <= bytes.count else {
                malformedDataOffset = offset
                return
            }
            let type = bytes[offset + 1]
            let value = UnsafeBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 1 + length)])
            decodeStructure(type: type, value: value)
            offset += 1 + length
        }
    }

    private mutating func decodeStructure(type: UInt8, value: UnsafeBufferPointer<UInt8>) {
        switch type {
        case 0x01:
            if let first = value.first { flags = first }
        case 0x02, 0x03:
            appendUUIDs(value, width: 2)
        case 0x04, 0x05:
            appendUUIDs(value, width: 4)
        case 0x06, 0x07:
            appendUUIDs(value, width: 16)
        case 0x08:
            if localName == nil {
                localName = Self.name(from: value)
                isLocalNameShortened = true
            }
        case 0x09:
            localName = Self.name(from: value)
            isLocalNameShortened = false
        case 0x0A:
            if let first = value.first { txPower = Int8(bitPattern: first) }
        case 0x16:
            addServiceData(value, uuidWidth: 2)
        case 0x20:
            addServiceData(value, uuidWidth: 4)
        case 0x21:
            addServiceData(value, uuidWidth: 16)
        case 0xFF:
            guard value.count >= 2 else { return }
            let company = UInt16(value[0]) | UInt16(value[1]) << 8
            manufacturerData[company] = Array(value[2...])
        default:
            break
        }
    }

    private mutating func appendUUIDs(_ value: UnsafeBufferPointer<UInt8>, width: Int) {
        var start = 0
        while start + width <= value.count {
            if let uuid = BLEUUID(littleEndianBytes: value[start..<(start + width)]) { serviceUUIDs.append(uuid) }
            start += width
        }
    }

    private mutating func addServiceData(_ value: UnsafeBufferPointer<UInt8>, uuidWidth: Int) {
        guard value.count >= uuidWidth, let uuid = BLEUUID(littleEndianBytes: value[0..<uuidWidth]) else { return }
        serviceData[uuid] = Array(value[uuidWidth...])
    }

    /// Decodes a name as UTF-8 (invalid sequences become U+FFFD), dropping trailing NUL padding.
    private static func name(from value: UnsafeBufferPointer<UInt8>) -> String {
        var end = value.count
        while end > 0 && value[end - 1] == 0 { end -= 1 }
        return String(decoding: value[0..<end], as: UTF8.self)
    }
}
