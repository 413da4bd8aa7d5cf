import AdapterKit
import Foundation
import HealthModel
import Transport

/// The id a plugin gives a request, echoed in its answer: a JSON string (at most
/// ``PluginRequestCodec/maximumIDLength`` characters) or an integer.
public enum PluginRequestID: Sendable, Hashable, CustomStringConvertible {
    case number(Int)
    case text(String)

    /// As JSON: `7` or `"scale-1"`.
    public var json: String {
        switch self {
        case .number(let number): String(number)
        case .text(let text): JSONText.quoted(text)
        }
    }

    public var description: String { json }
}

/// What a plugin asks of its connected device (protocol 2).
public enum PluginRequestOperation: Sendable, Hashable {
    case read(BLEUUID)
    case write(BLEUUID, value: [UInt8], withResponse: Bool)
    /// `mode` nil: indications when the characteristic has them, else notifications.
    case subscribe(BLEUUID, mode: GATTNotificationMode?)
    case unsubscribe(BLEUUID)
    case disconnect

    /// The message name: `read`, `write`, `subscribe`, `unsubscribe`, `disconnect`.
    public var name: String {
        switch self {
        case .read: "read"
        case .write: "write"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .disconnect: "disconnect"
        }
    }
}

/// One request line of a protocol-2 plugin: `{"write":{"id":3,"characteristic":"FFF1","value":"a501"}}`.
public struct PluginRequest: Sendable, Hashable {
    public var id: PluginRequestID
    public var operation: PluginRequestOperation
    /// The device the plugin means, when it names one; it must be the device it serves.
    public var address: BLEAddress?

    public init(id: PluginRequestID, operation: PluginRequestOperation, address: BLEAddress? = nil) {
        self.id = id
        self.operation = operation
        self.address = address
    }
}

/// Why a request line is unusable: the id when one could be read (so the plugin can be answered)
/// and what is wrong, naming the field and value.
public struct PluginRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: PluginRequestID?
    public var detail: String

    public init(id: PluginRequestID?, detail: String) {
        self.id = id
        self.detail = detail
    }

    public var description: String { detail }
}

/// Reads and writes protocol 2's request lines. Reading is strict, as for everything a plugin
/// prints: unknown fields, a value over ``maximumWriteLength`` bytes, a malformed UUID or hex are errors.
public enum PluginRequestCodec {
    /// The longest value a `write` may carry (the longest attribute value ATT allows).
    public static let maximumWriteLength = 512
    /// The longest string id.
    public static let maximumIDLength = 64
    /// The message names that are requests.
    public static let operations: Set<String> = ["read", "write", "subscribe", "unsubscribe", "disconnect"]

    /// Builds a request from its message name and body fields.
    public static func request(operation: String, fields: PluginRequestFields) throws(PluginRequestError) -> PluginRequest {
        guard let id = fields.id else { throw PluginRequestError(id: nil, detail: "\(operation): missing field \"id\"") }
        if case .text(let text) = id, text.isEmpty || text.count > maximumIDLength {
            throw PluginRequestError(id: nil, detail: "\(operation): id must be 1 to \(maximumIDLength) characters")
        }
        func fail(_ detail: String) -> PluginRequestError { PluginRequestError(id: id, detail: "\(operation): \(detail)") }
        var allowed: Set<String> = ["id", "address"]
        switch operation {
        case "read", "unsubscribe": allowed.insert("characteristic")
        case "write": allowed.formUnion(["characteristic", "value", "withResponse"])
        case "subscribe": allowed.formUnion(["characteristic", "mode"])
        case "disconnect": break
        default: throw fail("not a request")
        }
        if let unknown = fields.present.sorted().first(where: { !allowed.contains($0) }) {
            throw fail("unknown field \"\(unknown.prefix(40))\"")
        }
        var address: BLEAddress?
        if let text = fields.address {
            guard let parsed = BLEAddress(text) else { throw fail("address \"\(text.prefix(40))\" is not a Bluetooth address") }
            address = parsed
        }
        func characteristic() throws(PluginRequestError) -> BLEUUID {
            guard let text = fields.characteristic else { throw fail("missing field \"characteristic\"") }
            guard let uuid = BLEUUID(text) else { throw fail("characteristic \"\(text.prefix(40))\" is not a Bluetooth UUID") }
            return uuid
        }
        let operationValue: PluginRequestOperation
        switch operation {
        case "read": operationValue = .read(try characteristic())
        case "unsubscribe": operationValue = .unsubscribe(try characteristic())
        case "disconnect": operationValue = .disconnect
        case "subscribe":
            let mode: GATTNotificationMode?
            switch fields.mode {
            case nil: mode = nil
            case let text?:
                guard let known = GATTNotificationMode(rawValue: text) else {
                    throw fail("mode \"\(text.prefix(40))\" is neither \"notifications\" nor \"indications\"")
                }
                mode = known
            }
            operationValue = .subscribe(try characteristic(), mode: mode)
        default:  // write
            let uuid = try characteristic()
            guard let hex = fields.value else { throw fail("missing field \"value\"") }
            guard hex.utf8.count <= 2 * maximumWriteLength else {
                throw fail("value of \(hex.utf8.count / 2) bytes is longer than \(maximumWriteLength)")
            }
            guard let bytes = CompactHex.decode(hex) else { throw fail("value \"\(hex.prefix(40))\" is not hex") }
            operationValue = .write(uuid, value: bytes, withResponse: fields.withResponse ?? true)
        }
        return PluginRequest(id: id, operation: operationValue, address: address)
    }

    /// The request as the line a plugin prints (Swift plugins, tests).
    public static func encode(_ request: PluginRequest) -> String {
        var fields = ["\"id\":" + request.id.json]
        if let address = request.address { fields.append("\"address\":\"\(address)\"") }
        switch request.operation {
        case .read(let uuid), .unsubscribe(let uuid):
            fields.append("\"characteristic\":\"\(uuid)\"")
        case .write(let uuid, let value, let withResponse):
            fields.append("\"characteristic\":\"\(uuid)\"")
            fields.append("\"value\":\"\(CompactHex.encode(value))\"")
            fields.append("\"withResponse\":\(withResponse)")
        case .subscribe(let uuid, let mode):
            fields.append("\"characteristic\":\"\(uuid)\"")
            if let mode { fields.append("\"mode\":\"\(mode.rawValue)\"") }
        case .disconnect:
            break
        }
        return "{\"\(request.operation.name)\":{" + fields.joined(separator: ",") + "}}"
    }
}

/// The body of a request message as read from JSON, before its checks.
public struct PluginRequestFields: Decodable, Sendable {
    public var id: PluginRequestID?
    public var characteristic: String?
    public var value: String?
    public var withResponse: Bool?
    public var mode: String?
    public var address: String?
    /// Every field name given (unknown ones included).
    public var present: Set<String>

    public init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyJSONKey.self)
        present = Set(object.allKeys.map(\.stringValue))
        let idKey = AnyJSONKey("id")
        if object.contains(idKey) {
            if let number = try? object.decode(Int.self, forKey: idKey) {
                id = .number(number)
            } else if let text = try? object.decode(String.self, forKey: idKey) {
                id = .text(text)
            } else {
                throw PluginRequestError(id: nil, detail: "id must be a string or an integer")
            }
        }
        func text(_ key: String) throws -> String? {
            do { return try object.decodeIfPresent(String.self, forKey: AnyJSONKey(key)) } catch {
                throw PluginRequestError(id: id, detail: "\(key) must be a string")
            }
        }
        characteristic = try text("characteristic")
        value = try text("value")
        mode = try text("mode")
        address = try text("address")
        do { withResponse = try object.decodeIfPresent(Bool.self, forKey: AnyJSONKey("withResponse")) } catch {
            throw PluginRequestError(id: id, detail: "withResponse must be true or false")
        }
    }
}

/// Why a request failed, as the plugin is told: a stable `error` key, the ATT error code when the
/// device refused, and a message.
public struct PluginRequestFailure: Sendable, Hashable {
    /// `att-error`, `timeout`, `disconnected`, `no-such-characteristic`, `not-permitted`,
    /// `pairing-needed`, `not-in-capture`, `too-many-values`, `transport`, or, for a request the daemon refused
    /// before the device saw it, the rejection reason (`invalid-request`, `rate-limited`,
    /// `too-many-requests`, `not-your-device`, `not-connected`).
    public var error: String
    public var code: UInt8?
    public var message: String

    public init(error: String, code: UInt8? = nil, message: String) {
        self.error = error
        self.code = code
        self.message = message
    }

    /// The failure for a conversation step's error.
    public init(_ failure: GATTConversationError) {
        message = failure.description
        switch failure {
        case .attError(_, _, let code):
            error = "att-error"
            self.code = code
        case .timedOut: error = "timeout"
        case .disconnected: error = "disconnected"
        case .characteristicMissing: error = "no-such-characteristic"
        case .operationNotPermitted: error = "not-permitted"
        case .pairingNeeded: error = "pairing-needed"
        case .notInCapture: error = "not-in-capture"
        case .tooManyValues: error = "too-many-values"
        case .transport: error = "transport"
        }
    }
}

/// The lines the daemon writes to a protocol-2 plugin during a conversation, and `committed`.
public enum ExternalConversationLine {
    /// `{"connected":{"address":…,"time":…,"mtu":23}}`: the daemon connected to the device.
    public static func connected(address: BLEAddress, time: Date, mtu: Int) -> String {
        var text = "{\"connected\":{\"address\":\"\(address)\",\"time\":\""
        ISO8601DateTime.append(time, to: &text)
        return text + "\",\"mtu\":\(mtu)}}"
    }

    /// `{"database":{"services":[{"uuid":"FFF0","characteristics":[{"uuid":"FFF1","handle":3,
    /// "properties":["write","notify"],"descriptors":["2902"]}]}]}}`: what discovery found.
    public static func database(_ database: GATTDatabase) -> String {
        var services: [String] = []
        for service in database.services {
            var characteristics: [String] = []
            let inside = database.characteristics.filter { (service.startHandle...max(service.startHandle, service.endHandle)).contains($0.valueHandle) }
            for (index, characteristic) in inside.enumerated() {
                let end = index + 1 < inside.count ? inside[index + 1].declarationHandle : service.endHandle &+ 1
                let descriptors = database.attributeTypes
                    .filter { $0.key > characteristic.valueHandle && $0.key < end }
                    .sorted { $0.key < $1.key }
                    .map { "\"\($0.value)\"" }
                characteristics.append("{\"uuid\":\"\(characteristic.uuid)\",\"handle\":\(characteristic.valueHandle)"
                    + ",\"properties\":[" + propertyNames(characteristic.properties).map { "\"\($0)\"" }.joined(separator: ",")
                    + "],\"descriptors\":[" + descriptors.joined(separator: ",") + "]}")
            }
            services.append("{\"uuid\":\"\(service.uuid)\",\"characteristics\":[" + characteristics.joined(separator: ",") + "]}")
        }
        return "{\"database\":{\"services\":[" + services.joined(separator: ",") + "]}}"
    }

    /// The names of a characteristic's property bits, in bit order.
    public static func propertyNames(_ properties: UInt8) -> [String] {
        let names = ["broadcast", "read", "writeWithoutResponse", "write", "notify", "indicate",
                     "authenticatedSignedWrites", "extendedProperties"]
        return names.indices.filter { properties & (1 << $0) != 0 }.map { names[$0] }
    }

    /// `{"notification":{"characteristic":…,"service":…,"value":"hex","time":…}}` (or `indication`).
    public static func value(_ value: GATTValue) -> String {
        var text = "{\"\(value.kind == .indication ? "indication" : "notification")\":{"
        text += "\"characteristic\":\"\(value.characteristicUUID.map(\.description) ?? "")\""
        if let service = value.serviceUUID { text += ",\"service\":\"\(service)\"" }
        text += ",\"handle\":\(value.handle),\"value\":\"\(CompactHex.encode(value.value))\",\"time\":\""
        ISO8601DateTime.append(value.time, to: &text)
        return text + "\"}}"
    }

    /// `{"result":{"id":…}}`, with `"value":"hex"` for a read.
    public static func result(id: PluginRequestID, value: [UInt8]? = nil) -> String {
        var text = "{\"result\":{\"id\":\(id.json)"
        if let value { text += ",\"value\":\"\(CompactHex.encode(value))\"" }
        return text + "}}"
    }

    /// `{"failed":{"id":…,"error":"att-error","code":14,"message":"…"}}`.
    public static func failed(id: PluginRequestID, _ failure: PluginRequestFailure) -> String {
        var text = "{\"failed\":{\"id\":\(id.json),\"error\":\"\(failure.error)\""
        if let code = failure.code { text += ",\"code\":\(code)" }
        text += ",\"message\":"
        JSONText.appendQuoted(failure.message, to: &text)
        return text + "}}"
    }

    /// `{"disconnected":{"reason":"…","time":…}}`: the connection ended; requests fail from now on.
    public static func disconnected(reason: String, time: Date) -> String {
        var text = "{\"disconnected\":{\"reason\":"
        JSONText.appendQuoted(reason, to: &text)
        text += ",\"time\":\""
        ISO8601DateTime.append(time, to: &text)
        return text + "\"}}"
    }

    /// At most this many uuids go into one `committed` line; a larger batch gets several.
    public static let maximumUUIDsPerCommittedLine = 256

    /// `{"committed":{"uuids":[…],"stored":2,"held":0,"deviceMayForget":true}}` lines for one
    /// committed batch: the uuids of its records (as the plugin gave them, or as the daemon made
    /// them) and the batch's receipt. `deviceMayForget` false: some of the batch waits in the
    /// pending area (its types are not granted yet) and the device must keep it.
    public static func committed(uuids: [UUID], receipt: DeliveryReceipt) -> [String] {
        let chunks = stride(from: 0, to: max(uuids.count, 1), by: maximumUUIDsPerCommittedLine).map {
            uuids[$0..<min($0 + maximumUUIDsPerCommittedLine, uuids.count)]
        }
        return chunks.map { chunk in
            "{\"committed\":{\"uuids\":[" + chunk.map { "\"\($0.uuidString.lowercased())\"" }.joined(separator: ",")
                + "],\"stored\":\(receipt.stored),\"held\":\(receipt.held),\"deviceMayForget\":\(receipt.deviceMayForget)}}"
        }
    }
}

extension HealthRecord {
    /// The record's uuid (a sample's or a correlation's own).
    public var recordUUID: UUID {
        switch self {
        case .sample(let sample): sample.uuid
        case .correlation(let correlation): correlation.uuid
        }
    }
}
