import AdapterKit
import ExternalAdapterProtocol
import ExternalAdapters
import Foundation
import HealthModel
import Testing
import Transport

/// Protocol 2's additions on their own: the descriptor's `protocol`/`connect`, request lines
/// checked like any plugin output, and the lines the daemon writes during a conversation.
@Suite("Protocol 2 messages")
struct Protocol2MessageTests {
    static let base = #""id":"acme","name":"Acme","version":"1","produces":["bodyMass"],"matches":[{"ble":{"serviceUUIDs":["FFB0"]}}]"#

    @Test("A version-2 descriptor may ask to connect; version 1 keeps working; connect in version 1 is refused")
    func descriptorVersions() throws {
        let two = try ExternalDescriptorCodec.decodeDescription(Data(("{\"protocol\":2," + Self.base + ",\"connect\":true}").utf8),
                                                                expectedID: "acme")
        #expect(two.protocolVersion == 2 && two.connects)
        let one = try ExternalDescriptorCodec.decodeDescription(Data(("{\"protocol\":1," + Self.base + "}").utf8), expectedID: "acme")
        #expect(one.protocolVersion == 1 && !one.connects)
        #expect(throws: ExternalDescriptorError.fieldNeedsNewerProtocol(field: "connect", version: 2)) {
            try ExternalDescriptorCodec.decodeDescription(Data(("{\"protocol\":1," + Self.base + ",\"connect\":true}").utf8),
                                                          expectedID: "acme")
        }
        #expect(throws: ExternalDescriptorError.unsupportedProtocol(3)) {
            try ExternalDescriptorCodec.decodeDescription(Data(("{\"protocol\":3," + Self.base + "}").utf8), expectedID: "acme")
        }
        #expect(throws: ExternalDescriptorError.wrongFieldType(field: "connect", expected: "true or false")) {
            try ExternalDescriptorCodec.decodeDescription(Data(("{\"protocol\":2," + Self.base + ",\"connect\":1}").utf8),
                                                          expectedID: "acme")
        }
        #expect(try ExternalDescriptorCodec.decodeDescription(Data(ExternalDescriptorCodec.encode(two).utf8), expectedID: "acme") == two)
    }

    func validate(_ line: String, version: Int = 2) -> PluginLine {
        PluginOutputValidator(adapterID: "acme", produces: [.bodyMass], device: nil, protocolVersion: version)
            .validate(Array(line.utf8))
    }

    @Test("Every request kind reads, and encodes back to the same line")
    func requestsRoundTrip() throws {
        let requests = [
            PluginRequest(id: .number(1), operation: .read(BLEUUID(0x2A19))),
            PluginRequest(id: .text("history"), operation: .write(BLEUUID(0xFFB1), value: [0xA5, 0x01], withResponse: true)),
            PluginRequest(id: .number(3), operation: .write(BLEUUID(0xFFB1), value: [], withResponse: false),
                          address: BLEAddress("C0:FF:EE:00:FF:B0")),
            PluginRequest(id: .number(4), operation: .subscribe(BLEUUID(0xFFB2), mode: .indications)),
            PluginRequest(id: .number(5), operation: .subscribe(BLEUUID(0xFFB2), mode: nil)),
            PluginRequest(id: .number(6), operation: .unsubscribe(BLEUUID(0xFFB2))),
            PluginRequest(id: .text("bye"), operation: .disconnect),
        ]
        for request in requests {
            let line = PluginRequestCodec.encode(request)
            #expect(validate(line) == .request(request), "\(line)")
        }
        // withResponse defaults to true.
        #expect(validate(#"{"write":{"id":9,"characteristic":"FFB1","value":"A501"}}"#)
            == .request(PluginRequest(id: .number(9), operation: .write(BLEUUID(0xFFB1), value: [0xA5, 0x01], withResponse: true))))
    }

    @Test("Malformed requests are refused with the field named and, when the id was readable, the id kept")
    func malformedRequests() {
        let cases: [(String, PluginRequestID?, String)] = [
            (#"{"read":{"characteristic":"2A19"}}"#, nil, "missing field \"id\""),
            (#"{"read":{"id":1}}"#, .number(1), "missing field \"characteristic\""),
            (#"{"read":{"id":1,"characteristic":"not-a-uuid"}}"#, .number(1), "is not a Bluetooth UUID"),
            (#"{"read":{"id":1,"characteristic":"2A19","value":"00"}}"#, .number(1), "unknown field \"value\""),
            (#"{"write":{"id":"w","characteristic":"FFB1","value":"zz"}}"#, .text("w"), "is not hex"),
            (#"{"write":{"id":"w","characteristic":"FFB1","value":"\#(String(repeating: "00", count: 513))"}}"#, .text("w"),
             "513 bytes is longer than 512"),
            (#"{"subscribe":{"id":2,"characteristic":"FFB2","mode":"loudly"}}"#, .number(2), "neither"),
            (#"{"disconnect":{"id":3,"address":"nowhere"}}"#, .number(3), "not a Bluetooth address"),
            (#"{"read":{"id":true,"characteristic":"2A19"}}"#, nil, "id must be a string or an integer"),
            (#"{"read":{"id":"\#(String(repeating: "x", count: 65))","characteristic":"2A19"}}"#, nil, "1 to 64 characters"),
            (#"{"read":7}"#, nil, "must be an object"),
        ]
        for (line, id, detail) in cases {
            guard case .rejected(let rejection) = validate(line) else {
                Issue.record("accepted: \(line)")
                continue
            }
            #expect(rejection.reason == .invalidRequest, "\(line)")
            #expect(rejection.requestID == id, "\(line): \(rejection)")
            #expect(rejection.detail.contains(detail), "\(line): \(rejection.detail)")
        }
    }

    @Test("A protocol-1 plugin's request is an unknown message, as before")
    func versionOneHasNoRequests() {
        guard case .rejected(let rejection) = validate(#"{"read":{"id":1,"characteristic":"2A19"}}"#, version: 1) else {
            Issue.record("accepted")
            return
        }
        #expect(rejection.reason == .unknownMessage)
        guard case .rejected(let malformed) = validate(#"{"read":{"id":true}}"#, version: 1) else {
            Issue.record("accepted")
            return
        }
        #expect(malformed.reason == .unknownMessage)
    }

    @Test("The daemon's conversation lines: connected, database, values, answers, committed")
    func conversationLines() throws {
        let time = try #require(ISO8601DateTime.date(from: "2026-11-30T18:00:00Z"))
        let address = try #require(BLEAddress("C0:FF:EE:00:FF:B0"))
        #expect(ExternalConversationLine.connected(address: address, time: time, mtu: 23)
            == #"{"connected":{"address":"C0:FF:EE:00:FF:B0","time":"2026-11-30T18:00:00Z","mtu":23}}"#)
        var database = GATTDatabase()
        database.addService(.init(startHandle: 1, endHandle: 6, uuid: BLEUUID(0xFFB0)))
        database.addCharacteristic(.init(declarationHandle: 2, properties: 0x0C, valueHandle: 3, uuid: BLEUUID(0xFFB1)))
        database.addCharacteristic(.init(declarationHandle: 4, properties: 0x10, valueHandle: 5, uuid: BLEUUID(0xFFB2)))
        database.addAttributeType(BLEUUID(0x2902), handle: 6)
        #expect(ExternalConversationLine.database(database) == #"{"database":{"services":[{"uuid":"FFB0","characteristics":["#
            + #"{"uuid":"FFB1","handle":3,"properties":["writeWithoutResponse","write"],"descriptors":[]},"#
            + #"{"uuid":"FFB2","handle":5,"properties":["notify"],"descriptors":["2902"]}]}]}}"#)
        let value = GATTValue(time: time, connection: 0x40, peerAddress: address, serviceUUID: BLEUUID(0xFFB0),
                              characteristicUUID: BLEUUID(0xFFB2), handle: 5, value: [0x5A, 0x0F, 0x03], kind: .notification)
        #expect(ExternalConversationLine.value(value)
            == #"{"notification":{"characteristic":"FFB2","service":"FFB0","handle":5,"value":"5a0f03","time":"2026-11-30T18:00:00Z"}}"#)
        #expect(ExternalConversationLine.result(id: .number(1), value: [0x64]) == #"{"result":{"id":1,"value":"64"}}"#)
        #expect(ExternalConversationLine.failed(id: .text("erase"), PluginRequestFailure(
            .attError(operation: "write", characteristic: BLEUUID(0xFFB1), code: 0x03)))
            .hasPrefix(#"{"failed":{"id":"erase","error":"att-error","code":3,"message":"write of FFB1 refused"#))
        let uuids = (0..<300).map { _ in UUID() }
        let lines = ExternalConversationLine.committed(uuids: uuids, receipt: DeliveryReceipt(stored: 290, held: 10))
        #expect(lines.count == 2, "256 uuids a line at most")
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        let body = try #require(first["committed"] as? [String: Any])
        #expect((body["uuids"] as? [String])?.count == 256)
        #expect(body["deviceMayForget"] as? Bool == false && body["held"] as? Int == 10)
    }

    @Test("A Swift plugin reads the daemon's conversation lines back; malformed ones are refused with the field named")
    func conversationLinesReadBack() throws {
        let time = try #require(ISO8601DateTime.date(from: "2026-11-30T18:00:00Z"))
        let address = try #require(BLEAddress("C0:FF:EE:00:FF:B0"))
        #expect(try ExternalConversationInputCodec.decode(ExternalConversationLine.connected(address: address, time: time, mtu: 23))
            == .connected(address: address, time: time, mtu: 23))
        var database = GATTDatabase()
        database.addService(.init(startHandle: 1, endHandle: 6, uuid: BLEUUID(0xFFB0)))
        database.addCharacteristic(.init(declarationHandle: 2, properties: 0x0C, valueHandle: 3, uuid: BLEUUID(0xFFB1)))
        database.addCharacteristic(.init(declarationHandle: 4, properties: 0x10, valueHandle: 5, uuid: BLEUUID(0xFFB2)))
        database.addAttributeType(BLEUUID(0x2902), handle: 6)
        guard case .database(let read) = try ExternalConversationInputCodec.decode(ExternalConversationLine.database(database)) else {
            Issue.record("not a database")
            return
        }
        #expect(read.characteristics == database.characteristics)
        #expect(read.services.map(\.uuid) == [BLEUUID(0xFFB0)])
        #expect(read.attributeTypes == [6: BLEUUID(0x2902)])
        #expect(ExternalConversationLine.database(read) == ExternalConversationLine.database(database))
        let value = GATTValue(time: time, connection: 0, peerAddress: nil, serviceUUID: BLEUUID(0xFFB0),
                              characteristicUUID: BLEUUID(0xFFB2), handle: 5, value: [0x5A, 0x0F, 0x03], kind: .indication)
        #expect(try ExternalConversationInputCodec.decode(ExternalConversationLine.value(value)) == .value(value))
        #expect(try ExternalConversationInputCodec.decode(ExternalConversationLine.result(id: .number(1), value: [0x64]))
            == .result(id: .number(1), value: [0x64]))
        #expect(try ExternalConversationInputCodec.decode(ExternalConversationLine.result(id: .text("x")))
            == .result(id: .text("x"), value: nil))
        let failure = PluginRequestFailure(.attError(operation: "write", characteristic: BLEUUID(0xFFB1), code: 0x03))
        #expect(try ExternalConversationInputCodec.decode(ExternalConversationLine.failed(id: .number(7), failure))
            == .failed(id: .number(7), failure))
        let uuids = [UUID(), UUID()]
        let committed = ExternalConversationLine.committed(uuids: uuids, receipt: DeliveryReceipt(stored: 1, held: 1))
        #expect(try ExternalConversationInputCodec.decode(committed[0])
            == .committed(uuids: uuids, stored: 1, held: 1, deviceMayForget: false))
        #expect(try ExternalConversationInputCodec.decode(ExternalConversationLine.disconnected(reason: "gone", time: time))
            == .disconnected(reason: "gone", time: time))

        #expect(throws: ExternalConversationInputError.invalidField(message: "connected", field: "mtu", text: "x")) {
            try ExternalConversationInputCodec.decode(#"{"connected":{"address":"C0:FF:EE:00:FF:B0","time":"2026-11-30T18:00:00Z","mtu":"x"}}"#)
        }
        #expect(throws: ExternalConversationInputError.invalidField(message: "notification", field: "value", text: "zz")) {
            try ExternalConversationInputCodec.decode(#"{"notification":{"characteristic":"FFB2","handle":5,"value":"zz","time":"2026-11-30T18:00:00Z"}}"#)
        }
        #expect(throws: ExternalConversationInputError.notAConversationLine("advertisement")) {
            try ExternalConversationInputCodec.decode(#"{"advertisement":{}}"#)
        }
    }
}
