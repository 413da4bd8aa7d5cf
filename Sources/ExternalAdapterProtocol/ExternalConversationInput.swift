import Foundation
import HealthModel
import Transport

/// A line the daemon writes to a protocol-2 plugin during a conversation, as the plugin reads it
/// (the other side of ``ExternalConversationLine``).
public enum ExternalConversationInput: Sendable, Hashable {
    /// `connected`: the link is up.
    case connected(address: BLEAddress, time: Date, mtu: Int)
    /// `database`: what discovery found.
    case database(GATTDatabase)
    /// `notification` / `indication` (kind `.notification` or `.indication`).
    case value(GATTValue)
    /// `result`: the request with this id succeeded (`value` for a read).
    case result(id: PluginRequestID, value: [UInt8]?)
    /// `failed`: the request with this id failed.
    case failed(id: PluginRequestID, PluginRequestFailure)
    /// `committed`: these records were committed with these counts.
    case committed(uuids: [UUID], stored: Int, held: Int, deviceMayForget: Bool)
    /// `disconnected`: the connection ended.
    case disconnected(reason: String, time: Date)
}

/// Why a conversation line could not be read: the field and the text found.
public enum ExternalConversationInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a JSON object, or not one of the conversation messages (its keys).
    case notAConversationLine(String)
    /// A field is missing or malformed.
    case invalidField(message: String, field: String, text: String)

    public var description: String {
        switch self {
        case .notAConversationLine(let keys): "not a conversation line (\(keys))"
        case .invalidField(let message, let field, let text): "\(message): field \"\(field)\" is invalid: \(text.prefix(80))"
        }
    }
}

/// Reads the daemon's conversation lines (protocol 2) for a plugin written in Swift.
public enum ExternalConversationInputCodec {
    /// The message names this codec reads.
    public static let messages: Set<String> = ["connected", "database", "notification", "indication", "result",
                                               "failed", "committed", "disconnected"]

    /// Decodes one line; device and advertisement lines are ``ExternalInputCodec``'s.
    public static func decode(_ line: some StringProtocol) throws(ExternalConversationInputError) -> ExternalConversationInput {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(String(line).utf8))) as? [String: Any],
              object.count == 1, let (name, body) = object.first, messages.contains(name),
              let fields = body as? [String: Any] else {
            let keys = ((try? JSONSerialization.jsonObject(with: Data(String(line).utf8))) as? [String: Any])?.keys.sorted()
            throw .notAConversationLine(keys?.joined(separator: ",") ?? "not a JSON object")
        }
        func fail(_ field: String) -> ExternalConversationInputError {
            .invalidField(message: name, field: field, text: fields[field].map { "\($0)" } ?? "missing")
        }
        func text(_ field: String) throws(ExternalConversationInputError) -> String {
            guard let value = fields[field] as? String else { throw fail(field) }
            return value
        }
        func integer(_ field: String) throws(ExternalConversationInputError) -> Int {
            guard let value = fields[field] as? Int else { throw fail(field) }
            return value
        }
        func time(_ field: String) throws(ExternalConversationInputError) -> Date {
            guard let date = ISO8601DateTime.date(from: try text(field)) else { throw fail(field) }
            return date
        }
        func hex(_ field: String) throws(ExternalConversationInputError) -> [UInt8] {
            guard let bytes = CompactHex.decode(try text(field)) else { throw fail(field) }
            return bytes
        }
        func requestID() throws(ExternalConversationInputError) -> PluginRequestID {
            if let text = fields["id"] as? String { return .text(text) }
            if let number = fields["id"] as? Int { return .number(number) }
            throw fail("id")
        }
        switch name {
        case "connected":
            guard let address = BLEAddress(try text("address")) else { throw fail("address") }
            return .connected(address: address, time: try time("time"), mtu: try integer("mtu"))
        case "database":
            return .database(try database(fields["services"], fail: fail("services")))
        case "notification", "indication":
            guard let characteristic = BLEUUID(try text("characteristic")) else { throw fail("characteristic") }
            let service = (fields["service"] as? String).flatMap(BLEUUID.init)
            let handle = try integer("handle")
            guard (0...0xFFFF).contains(handle) else { throw fail("handle") }
            return .value(GATTValue(time: try time("time"), connection: 0, peerAddress: nil, serviceUUID: service,
                                    characteristicUUID: characteristic, handle: UInt16(handle), value: try hex("value"),
                                    kind: name == "indication" ? .indication : .notification))
        case "result":
            return .result(id: try requestID(), value: fields["value"] == nil ? nil : try hex("value"))
        case "failed":
            let code = fields["code"] == nil ? nil : try integer("code")
            guard code.map({ (0...255).contains($0) }) ?? true else { throw fail("code") }
            return .failed(id: try requestID(), PluginRequestFailure(
                error: try text("error"), code: code.map { UInt8($0) }, message: (fields["message"] as? String) ?? ""))
        case "committed":
            guard let texts = fields["uuids"] as? [String] else { throw fail("uuids") }
            var uuids: [UUID] = []
            for text in texts {
                guard let uuid = UUID(uuidString: text) else { throw fail("uuids") }
                uuids.append(uuid)
            }
            guard let mayForget = fields["deviceMayForget"] as? Bool else { throw fail("deviceMayForget") }
            return .committed(uuids: uuids, stored: try integer("stored"), held: try integer("held"),
                              deviceMayForget: mayForget)
        default:  // disconnected
            return .disconnected(reason: (fields["reason"] as? String) ?? "", time: try time("time"))
        }
    }

    /// The table of a `database` line: handles as given; declarations just before their values,
    /// descriptors just after (their handles are not in the line).
    private static func database(_ services: Any?, fail: ExternalConversationInputError)
        throws(ExternalConversationInputError) -> GATTDatabase
    {
        guard let services = services as? [[String: Any]] else { throw fail }
        var table = GATTDatabase()
        for service in services {
            guard let serviceUUID = (service["uuid"] as? String).flatMap(BLEUUID.init),
                  let characteristics = service["characteristics"] as? [[String: Any]] else { throw fail }
            var start: UInt16?
            var end: UInt16 = 0
            for characteristic in characteristics {
                guard let uuid = (characteristic["uuid"] as? String).flatMap(BLEUUID.init),
                      let handle = characteristic["handle"] as? Int, (2...0xFF00).contains(handle),
                      let names = characteristic["properties"] as? [String] else { throw fail }
                var properties: UInt8 = 0
                for name in names {
                    if let bit = ExternalConversationLine.propertyNames(0xFF).firstIndex(of: name) { properties |= 1 << bit }
                }
                let valueHandle = UInt16(handle)
                table.addCharacteristic(.init(declarationHandle: valueHandle - 1, properties: properties,
                                              valueHandle: valueHandle, uuid: uuid))
                let descriptors = (characteristic["descriptors"] as? [String] ?? []).prefix(16).compactMap(BLEUUID.init)
                for (offset, descriptor) in descriptors.enumerated() {
                    table.addAttributeType(descriptor, handle: valueHandle + 1 + UInt16(offset))
                }
                start = min(start ?? valueHandle - 1, valueHandle - 1)
                end = max(end, valueHandle + UInt16(descriptors.count))
            }
            if let start { table.addService(.init(startHandle: start, endHandle: end, uuid: serviceUUID)) }
        }
        return table
    }
}
