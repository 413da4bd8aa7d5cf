import AdapterKit
import Foundation
import HealthModel
import Logging
import Transport

/// The device one plugin process serves: a BLE device with what it advertised, or a USB device.
public enum ExternalDevice: Sendable, Hashable {
    case ble(BLEDeviceTraits)
    case usb(USBDeviceDescription)

    /// The BLE address, or `bus:address` / `vvvv:pppp` for USB, for logs and sample devices.
    public var localIdentifier: String {
        switch self {
        case .ble(let traits): traits.address.description
        case .usb(let device):
            if let bus = device.bus, let address = device.address {
                String(format: "usb:%03d:%03d", bus, address)
            } else {
                "usb:" + device.idString
            }
        }
    }

    /// The advertised name or USB product string.
    public var name: String? {
        switch self {
        case .ble(let traits): traits.name
        case .usb(let device): device.product
        }
    }
}

/// One line the daemon writes to a plugin's stdin in `--run` mode.
public enum ExternalInputMessage: Sendable, Hashable {
    /// The first line: which device this process serves, and the zone device clocks are read in.
    case device(ExternalDevice, timeZone: TimeZone?)
    /// An advertisement of that device (BLE only), live or replayed from a capture.
    case advertisement(BLEAdvertisement)
}

/// Why a line on a plugin's stdin could not be read (a daemon newer than the plugin, or a
/// hand-written test line).
public enum ExternalInputError: Error, Equatable, Sendable, CustomStringConvertible {
    case notJSON(String)
    /// Neither `device` nor `advertisement`.
    case unknownMessage(keys: [String])
    case invalidField(field: String, text: String)

    public var description: String {
        switch self {
        case .notJSON(let reason): "not a JSON object: \(reason)"
        case .unknownMessage(let keys): "unknown message with keys \(keys.joined(separator: ", "))"
        case .invalidField(let field, let text): "\(field): invalid value \"\(text)\""
        }
    }
}

/// Writes and reads the lines the daemon sends a plugin: `{"device":{…}}` once, then
/// `{"advertisement":{…}}` per advertisement. Unknown fields are ignored when reading, so a
/// newer daemon may add fields without breaking older plugins.
public enum ExternalInputCodec {
    /// `{"device":{"transport":"ble",…},"timeZone":"Europe/Berlin","protocol":1}`, with the
    /// version the plugin speaks (its `--describe` said which).
    public static func encodeDeviceLine(_ device: ExternalDevice, timeZone: TimeZone, protocolVersion: Int = 1) -> String {
        var text = "{\"device\":{"
        switch device {
        case .ble(let traits):
            text += "\"transport\":\"ble\",\"address\":\"\(traits.address)\""
            if let name = traits.name {
                text += ",\"name\":"
                JSONText.appendQuoted(name, to: &text)
            }
            text += ",\"serviceUUIDs\":[" + traits.serviceUUIDs.sorted().map { "\"\($0)\"" }.joined(separator: ",") + "]"
            text += ",\"companyIDs\":[" + traits.companyIDs.sorted().map(String.init).joined(separator: ",") + "]"
        case .usb(let device):
            text += "\"transport\":\"usb\",\"vendorID\":\"" + String(format: "%04x", device.vendorID)
            text += "\",\"productID\":\"" + String(format: "%04x", device.productID) + "\""
            if let bus = device.bus { text += ",\"bus\":\(bus)" }
            if let address = device.address { text += ",\"address\":\(address)" }
            for (key, value) in [("manufacturer", device.manufacturer), ("product", device.product),
                                 ("serialNumber", device.serialNumber)] {
                guard let value else { continue }
                text += ",\"\(key)\":"
                JSONText.appendQuoted(value, to: &text)
            }
        }
        text += "},\"timeZone\":"
        JSONText.appendQuoted(timeZone.identifier, to: &text)
        text += ",\"protocol\":\(protocolVersion)}"
        return text
    }

    /// `{"advertisement":{"time":…,"address":…,"addressType":…,"rssi":…,"name":…,"serviceUUIDs":[…],
    /// "serviceData":{"181d":"hex"},"manufacturerData":{"0157":"hex"},"txPower":…,"data":"hex"}}`.
    ///
    /// `data` is the raw advertising data (all AD structures); the other fields are what the
    /// daemon decoded from it, for plugins that do not want to parse AD structures.
    public static func encodeAdvertisementLine(_ advertisement: BLEAdvertisement) -> String {
        var text = "{\"advertisement\":{\"time\":\""
        ISO8601DateTime.append(advertisement.time, to: &text)
        text += "\",\"address\":\"\(advertisement.address)\",\"addressType\":\"\(advertisement.addressType)\""
        if let legacy = advertisement.eventType.legacyType {
            text += ",\"legacyType\":\(legacy)"
        } else {
            text += ",\"eventProperties\":\(advertisement.eventType.properties)"
        }
        if let rssi = advertisement.rssi { text += ",\"rssi\":\(rssi)" }
        if let name = advertisement.localName {
            text += ",\"name\":"
            JSONText.appendQuoted(name, to: &text)
        }
        if !advertisement.serviceUUIDs.isEmpty {
            text += ",\"serviceUUIDs\":[" + advertisement.serviceUUIDs.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        }
        if !advertisement.serviceData.isEmpty {
            text += ",\"serviceData\":{"
            text += advertisement.serviceData.sorted { $0.key < $1.key }
                .map { "\"\($0.key.description.lowercased())\":\"\(CompactHex.encode($0.value))\"" }
                .joined(separator: ",")
            text += "}"
        }
        if !advertisement.manufacturerData.isEmpty {
            text += ",\"manufacturerData\":{"
            text += advertisement.manufacturerData.sorted { $0.key < $1.key }
                .map { "\"" + String(format: "%04x", $0.key) + "\":\"\(CompactHex.encode($0.value))\"" }
                .joined(separator: ",")
            text += "}"
        }
        if let txPower = advertisement.txPower { text += ",\"txPower\":\(txPower)" }
        text += ",\"data\":\"\(CompactHex.encode(advertisement.data))\"}}"
        return text
    }

    /// Reads one stdin line.
    public static func decode(_ line: some StringProtocol) throws(ExternalInputError) -> ExternalInputMessage {
        let document: InputLine
        do {
            document = try JSONDecoder().decode(InputLine.self, from: Data(String(line).utf8))
        } catch let error as ExternalInputError {
            throw error
        } catch let error as DecodingError {
            throw .notJSON(error.pathAndReason)
        } catch {
            throw .notJSON("\(error)")
        }
        return document.message
    }
}

private struct InputLine: Decodable {
    var message: ExternalInputMessage

    init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyJSONKey.self)
        if object.contains(AnyJSONKey("device")) {
            let device = try object.decode(DeviceFields.self, forKey: AnyJSONKey("device"))
            let zoneName = try object.decodeIfPresent(String.self, forKey: AnyJSONKey("timeZone"))
            var zone: TimeZone?
            if let zoneName {
                guard let known = TimeZone(identifier: zoneName) else {
                    throw ExternalInputError.invalidField(field: "timeZone", text: zoneName)
                }
                zone = known
            }
            message = .device(try device.device(), timeZone: zone)
        } else if object.contains(AnyJSONKey("advertisement")) {
            let fields = try object.decode(AdvertisementFields.self, forKey: AnyJSONKey("advertisement"))
            message = .advertisement(try fields.advertisement())
        } else {
            throw ExternalInputError.unknownMessage(keys: object.allKeys.map(\.stringValue).sorted())
        }
    }
}

private struct DeviceFields: Decodable {
    var transport: String
    var address: AddressField?
    var name: String?
    var serviceUUIDs: [String]?
    var companyIDs: [UInt16]?
    var vendorID: String?
    var productID: String?
    var bus: UInt8?
    var manufacturer: String?
    var product: String?
    var serialNumber: String?

    /// A BLE address is a string, a USB device address a number.
    enum AddressField: Decodable {
        case text(String)
        case number(UInt8)

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let number = try? value.decode(UInt8.self) {
                self = .number(number)
            } else {
                self = .text(try value.decode(String.self))
            }
        }
    }

    func device() throws(ExternalInputError) -> ExternalDevice {
        switch transport {
        case "ble":
            guard case .text(let text)? = address, let parsed = BLEAddress(text) else {
                throw .invalidField(field: "device.address", text: "\(address.map { "\($0)" } ?? "missing")")
            }
            var uuids: Set<BLEUUID> = []
            for text in serviceUUIDs ?? [] {
                guard let uuid = BLEUUID(text) else { throw .invalidField(field: "device.serviceUUIDs", text: text) }
                uuids.insert(uuid)
            }
            return .ble(BLEDeviceTraits(address: parsed, name: name, serviceUUIDs: uuids, companyIDs: Set(companyIDs ?? [])))
        case "usb":
            guard let vendorID, let vendor = UInt16(vendorID, radix: 16) else {
                throw .invalidField(field: "device.vendorID", text: vendorID ?? "missing")
            }
            guard let productID, let product = UInt16(productID, radix: 16) else {
                throw .invalidField(field: "device.productID", text: productID ?? "missing")
            }
            var deviceAddress: UInt8?
            if case .number(let number)? = address { deviceAddress = number }
            return .usb(USBDeviceDescription(vendorID: vendor, productID: product, bus: bus, address: deviceAddress,
                                             manufacturer: manufacturer, product: self.product,
                                             serialNumber: serialNumber))
        default:
            throw .invalidField(field: "device.transport", text: transport)
        }
    }
}

private struct AdvertisementFields: Decodable {
    var time: String
    var address: String
    var addressType: String?
    var legacyType: UInt8?
    var eventProperties: UInt16?
    var rssi: Int8?
    var name: String?
    var serviceUUIDs: [String]?
    var serviceData: [String: String]?
    var manufacturerData: [String: String]?
    var data: String?

    func advertisement() throws(ExternalInputError) -> BLEAdvertisement {
        guard let date = ISO8601DateTime.date(from: time) else { throw .invalidField(field: "advertisement.time", text: time) }
        guard let parsedAddress = BLEAddress(address) else { throw .invalidField(field: "advertisement.address", text: address) }
        let type = try Self.addressType(addressType)
        let eventType: BLEAdvertisingEventType =
            if let legacyType { BLEAdvertisingEventType(legacyType: legacyType) }
            else if let eventProperties { BLEAdvertisingEventType(extendedEventType: eventProperties) }
            else { .advNonconnInd }
        let bytes: [UInt8]
        if let data {
            guard let decoded = CompactHex.decode(data) else { throw .invalidField(field: "advertisement.data", text: data) }
            bytes = decoded
        } else {
            bytes = try synthesizedData()
        }
        return BLEAdvertisement(time: date, address: parsedAddress, addressType: type, eventType: eventType,
                                rssi: rssi, data: bytes)
    }

    static func addressType(_ text: String?) throws(ExternalInputError) -> BLEAddressType {
        switch text {
        case nil, "public": .public
        case "random": .random
        case "public-identity": .publicIdentity
        case "random-identity": .randomIdentity
        case "anonymous": .anonymous
        case let other?: throw .invalidField(field: "advertisement.addressType", text: other)
        }
    }

    /// AD structures carrying the decoded fields, for lines written by hand without `data`.
    func synthesizedData() throws(ExternalInputError) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ type: UInt8, _ value: [UInt8], field: String) throws(ExternalInputError) {
            guard value.count <= 254 else { throw .invalidField(field: field, text: "\(value.count) bytes is too long for one AD structure") }
            bytes += [UInt8(value.count + 1), type] + value
        }
        if let name { try append(0x09, Array(name.utf8), field: "advertisement.name") }
        for text in serviceUUIDs ?? [] {
            guard let uuid = BLEUUID(text) else { throw .invalidField(field: "advertisement.serviceUUIDs", text: text) }
            let wire = uuid.shortestLittleEndianBytes
            try append(wire.count == 2 ? 0x03 : wire.count == 4 ? 0x05 : 0x07, wire, field: "advertisement.serviceUUIDs")
        }
        for (key, hex) in (serviceData ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let uuid = BLEUUID(key) else { throw .invalidField(field: "advertisement.serviceData", text: key) }
            guard let payload = CompactHex.decode(hex) else { throw .invalidField(field: "advertisement.serviceData.\(key)", text: hex) }
            let wire = uuid.shortestLittleEndianBytes
            try append(wire.count == 2 ? 0x16 : wire.count == 4 ? 0x20 : 0x21, wire + payload, field: "advertisement.serviceData.\(key)")
        }
        for (key, hex) in (manufacturerData ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard key.utf8.count == 4, let company = UInt16(key, radix: 16) else {
                throw .invalidField(field: "advertisement.manufacturerData", text: key)
            }
            guard let payload = CompactHex.decode(hex) else { throw .invalidField(field: "advertisement.manufacturerData.\(key)", text: hex) }
            try append(0xFF, [UInt8(company & 0xFF), UInt8(company >> 8)] + payload, field: "advertisement.manufacturerData.\(key)")
        }
        return bytes
    }
}

/// Writes the lines a plugin prints on stdout in `--run` mode.
public enum ExternalOutputLine {
    /// A sample or correlation in ingestd's JSON-lines format.
    public static func record(_ record: HealthRecord) -> String { HealthRecordEncoder().encode(record) }

    /// `{"log":{"level":"warning","message":"…"}}`.
    public static func log(_ level: Logger.Level, _ message: String) -> String {
        "{\"log\":{\"level\":\"\(level.rawValue)\",\"message\":\(JSONText.quoted(message))}}"
    }

    /// `{"done":true}`: nothing more for this device.
    public static let done = "{\"done\":true}"
}
