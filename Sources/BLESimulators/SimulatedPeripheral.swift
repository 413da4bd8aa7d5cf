import BLEWire
import BlueZTransport
import Transport

/// The GATT database a ``SimulatedPeripheral`` serves.
public struct SimulatedProfile: Hashable, Sendable {
    /// A characteristic with its value and the updates sent once a client subscribes.
    public struct Characteristic: Hashable, Sendable {
        public var uuid: BLEUUID
        /// Property bits (0x02 read, 0x08 write, 0x10 notify, 0x20 indicate).
        public var properties: UInt8
        /// The value a Read returns.
        public var value: [UInt8]
        /// Values sent after the CCCD is written: as indications (each after the previous one
        /// was confirmed) or notifications, per what the client enabled.
        public var updates: [[UInt8]]
        /// A Characteristic User Description (0x2901) after the CCCD, if set.
        public var userDescription: String?

        public init(uuid: BLEUUID, properties: UInt8, value: [UInt8] = [], updates: [[UInt8]] = [],
                    userDescription: String? = nil) {
            self.uuid = uuid
            self.properties = properties
            self.value = value
            self.updates = updates
            self.userDescription = userDescription
        }
    }

    /// A primary service.
    public struct Service: Hashable, Sendable {
        public var uuid: BLEUUID
        public var characteristics: [Characteristic]

        public init(uuid: BLEUUID, characteristics: [Characteristic]) {
            self.uuid = uuid
            self.characteristics = characteristics
        }
    }

    public var name: String
    public var services: [Service]

    public init(name: String, services: [Service]) {
        self.name = name
        self.services = services
    }

    static func gap(name: String) -> Service {
        Service(uuid: BLEUUID(0x1800), characteristics: [
            Characteristic(uuid: BLEUUID(0x2A00), properties: 0x02, value: Array(name.utf8)),
        ])
    }

    /// A weight scale: Weight Scale service 0x181D with Weight Scale Feature 0x2A9E (read) and
    /// Weight Measurement 0x2A9D (indicate), sending the spec example `00 8C 3C` (77.5 kg, SI,
    /// no optional fields) once indications are enabled.
    public static let weightScale = SimulatedProfile(name: "Weight Scale", services: [
        gap(name: "Weight Scale"),
        Service(uuid: BLEUUID(0x181D), characteristics: [
            Characteristic(uuid: BLEUUID(0x2A9E), properties: 0x02, value: [0x00, 0x00, 0x00, 0x00]),
            Characteristic(uuid: BLEUUID(0x2A9D), properties: 0x20, updates: [[0x00, 0x8C, 0x3C]]),
        ]),
    ])

    /// A thermometer: Health Thermometer 0x1809 with Temperature Measurement 0x2A1C (indicate),
    /// Temperature Type 0x2A1D (read, 0x04 finger) and Intermediate Temperature 0x2A1E (notify).
    /// Indicates the spec example `06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04` (37.60 °C,
    /// 2012-12-05 11:50:27, finger) and then `00 B0 0E 00 FE` (37.60 °C, no options).
    public static let thermometer = SimulatedProfile(name: "Thermometer", services: [
        gap(name: "Thermometer"),
        Service(uuid: BLEUUID(0x1809), characteristics: [
            Characteristic(uuid: BLEUUID(0x2A1C), properties: 0x20, updates: [
                [0x06, 0xB0, 0x0E, 0x00, 0xFE, 0xDC, 0x07, 0x0C, 0x05, 0x0B, 0x32, 0x1B, 0x04],
                [0x00, 0xB0, 0x0E, 0x00, 0xFE],
            ]),
            Characteristic(uuid: BLEUUID(0x2A1D), properties: 0x02, value: [0x04]),
            Characteristic(uuid: BLEUUID(0x2A1E), properties: 0x10),
        ]),
    ])

    /// A blood-pressure cuff: Blood Pressure 0x1810 with Blood Pressure Measurement 0x2A35
    /// (indicate), Intermediate Cuff Pressure 0x2A36 (notify) and Blood Pressure Feature 0x2A49
    /// (read), plus a vendor service with a 128-bit UUID and a described characteristic.
    /// Indicates `04 8A 00 58 00 67 00 3C 00`: mmHg, pulse rate present; SFLOAT systolic 138,
    /// diastolic 88, mean arterial 103, pulse 60.
    public static let bloodPressureCuff = SimulatedProfile(name: "BP Cuff", services: [
        gap(name: "BP Cuff"),
        Service(uuid: BLEUUID(0x1810), characteristics: [
            Characteristic(uuid: BLEUUID(0x2A35), properties: 0x20,
                           updates: [[0x04, 0x8A, 0x00, 0x58, 0x00, 0x67, 0x00, 0x3C, 0x00]]),
            Characteristic(uuid: BLEUUID(0x2A36), properties: 0x10),
            Characteristic(uuid: BLEUUID(0x2A49), properties: 0x02, value: [0x00, 0x00]),
        ]),
        Service(uuid: vendorService, characteristics: [
            Characteristic(uuid: vendorCharacteristic, properties: 0x12, value: Array("vendor".utf8),
                           userDescription: "Vendor status"),
        ]),
    ])

    /// The BP cuff's vendor service UUID.
    public static let vendorService = BLEUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// The BP cuff's vendor characteristic UUID.
    public static let vendorCharacteristic = BLEUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
}

/// What a simulated peripheral demands before it lets its values be read, written or subscribed to.
public enum SimulatedSecurity: Hashable, Sendable {
    /// Nothing.
    case none
    /// An encrypted link: Insufficient Encryption (0x0F) until ``SimulatedPeripheral/encryptLink()``.
    case encryption
    /// An authenticated (passkey) bond: Insufficient Authentication (0x05) even once encrypted.
    case passkey
}

/// One row of the simulated attribute table.
public struct SimulatedAttribute: Hashable, Sendable {
    public var handle: UInt16
    public var type: BLEUUID
    public var value: [UInt8]
    /// For service declarations: the last handle of the service.
    public var groupEnd: UInt16?
}

/// A simulated GATT server (peripheral) on one end of a socketpair, speaking ATT PDUs as they
/// travel on an L2CAP ATT channel.
///
/// It serves discovery (Read By Group Type, Read By Type, Find Information) within the MTU,
/// reads (with Read Blob), writes, and sends its characteristics' updates once a client
/// enables them through the CCCD, sending each indication only after the previous one was
/// confirmed, as the spec requires.
public actor SimulatedPeripheral: ConditionWaiting {
    /// How the peripheral misbehaves, if at all.
    public enum Behaviour: Hashable, Sendable {
        /// Answers everything.
        case normal
        /// Receives but never answers (a hung peripheral).
        case silent
        /// Answers this many requests, then closes the link instead of answering the next.
        case disconnect(afterRequests: Int)
    }

    /// The attribute table, in handle order.
    public nonisolated let attributes: [SimulatedAttribute]
    /// Every PDU received, in order.
    public private(set) var receivedPDUs: [[UInt8]] = []
    /// Handle Value Confirmations received.
    public private(set) var confirmations = 0
    /// The MTU agreed with the client.
    public private(set) var mtu: UInt16 = 23
    /// The values written by long writes (Prepare Write + Execute Write), in order.
    public private(set) var longWrites: [[UInt8]] = []
    /// Parts queued by Prepare Write Requests until Execute Write (at most ``maximumPreparedWrites``).
    private var preparedWrites: [(handle: UInt16, offset: Int, part: [UInt8])] = []
    /// Values an Execute Write just wrote, handed to the responder once its response was sent.
    private var executedWrites: [(handle: UInt16, value: [UInt8])] = []
    static let maximumPreparedWrites = 64

    private let channel: PacketChannel
    private let behaviour: Behaviour
    private let serverMTU: UInt16
    private var values: [UInt16: [UInt8]] = [:]
    /// Value handle → updates not yet sent; CCCD handle → value handle.
    private var updates: [UInt16: [[UInt8]]] = [:]
    private var configurationOwners: [UInt16: UInt16] = [:]
    private var indicationQueue: [(handle: UInt16, value: [UInt8])] = []
    private var awaitingConfirmation = false
    private var requestsAnswered = 0
    private var readerTask: Task<Void, Never>?
    var waiters = ConditionWaiters()
    private let responder: (any SimulatedResponder)?
    private let security: SimulatedSecurity
    /// Whether the client had the link encrypted.
    public private(set) var encrypted = false
    /// Value handle → characteristic UUID, for the responder.
    private let characteristicsByValueHandle: [UInt16: BLEUUID]

    /// Takes ownership of `descriptor`; serves `profile` with the given receive MTU.
    /// - Parameter responder: answers writes to characteristic values (a vendor protocol).
    public init(descriptor: Int32, profile: SimulatedProfile, behaviour: Behaviour = .normal, serverMTU: UInt16 = 23,
                responder: (any SimulatedResponder)? = nil, security: SimulatedSecurity = .none)
        throws(SimulatorSetupError)
    {
        self.security = security
        do {
            channel = try PacketChannel(adopting: descriptor, threadName: "simulated-peripheral")
        } catch {
            throw .channel(error)
        }
        self.behaviour = behaviour
        self.serverMTU = serverMTU
        let (table, updates, owners) = Self.layout(profile)
        attributes = table
        self.updates = updates
        configurationOwners = owners
        values = Dictionary(uniqueKeysWithValues: table.map { ($0.handle, $0.value) })
        self.responder = responder
        var byHandle: [UInt16: BLEUUID] = [:]
        for attribute in table where attribute.type == .characteristic && attribute.value.count >= 5 {
            if let uuid = BLEUUID(littleEndianBytes: attribute.value.dropFirst(3)) {
                byHandle[attribute.value.uint16LE(at: 1)] = uuid
            }
        }
        characteristicsByValueHandle = byHandle
    }

    /// The value handle of the first characteristic with this UUID.
    public nonisolated func valueHandle(of characteristic: BLEUUID) -> UInt16? {
        guard let declaration = attributes.firstIndex(where: {
            $0.type == .characteristic && BLEUUID(littleEndianBytes: $0.value.dropFirst(3)) == characteristic
        }) else { return nil }
        return attributes[declaration].value.uint16LE(at: 1)
    }

    /// The client raised the link's security ("Just Works" pairing succeeded).
    public func encryptLink() { encrypted = true }

    /// Starts answering.
    public func start() {
        guard readerTask == nil else { return }
        let channel = self.channel
        readerTask = Task {
            for await event in channel.events {
                guard case .packet(let pdu) = event else { continue }
                self.receive(pdu)
            }
        }
    }

    /// Closes the peripheral's end: the client sees the link end.
    public func stop() async {
        channel.close()
        await readerTask?.value
    }

    /// Waits until at least `count` confirmations arrived.
    public func waitForConfirmations(_ count: Int, within limit: Duration = .seconds(60)) async throws(SimulatorTimeout) {
        try await waitUntil("\(count) confirmations", within: limit) { self.confirmations >= count }
    }

    /// Waits until at least `count` PDUs arrived.
    public func waitForPDUs(_ count: Int, within limit: Duration = .seconds(60)) async throws(SimulatorTimeout) {
        try await waitUntil("\(count) PDUs", within: limit) { self.receivedPDUs.count >= count }
    }

    // MARK: - Table

    private static func layout(_ profile: SimulatedProfile)
        -> ([SimulatedAttribute], [UInt16: [[UInt8]]], [UInt16: UInt16])
    {
        var table: [SimulatedAttribute] = []
        var updates: [UInt16: [[UInt8]]] = [:]
        var owners: [UInt16: UInt16] = [:]
        var handle: UInt16 = 1
        for service in profile.services {
            let serviceIndex = table.count
            table.append(SimulatedAttribute(handle: handle, type: .primaryService,
                                            value: service.uuid.shortestLittleEndianBytes, groupEnd: handle))
            handle += 1
            for characteristic in service.characteristics {
                let valueHandle = handle + 1
                table.append(SimulatedAttribute(
                    handle: handle, type: .characteristic,
                    value: [characteristic.properties, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)]
                        + characteristic.uuid.shortestLittleEndianBytes))
                table.append(SimulatedAttribute(handle: valueHandle, type: characteristic.uuid, value: characteristic.value))
                handle = valueHandle + 1
                if characteristic.properties & 0x30 != 0 {
                    table.append(SimulatedAttribute(handle: handle, type: .clientCharacteristicConfiguration,
                                                    value: [0, 0]))
                    owners[handle] = valueHandle
                    updates[valueHandle] = characteristic.updates
                    handle += 1
                }
                if let description = characteristic.userDescription {
                    table.append(SimulatedAttribute(handle: handle, type: BLEUUID(0x2901), value: Array(description.utf8)))
                    handle += 1
                }
            }
            table[serviceIndex].groupEnd = handle - 1
        }
        return (table, updates, owners)
    }

    // MARK: - ATT

    private func receive(_ pdu: [UInt8]) {
        receivedPDUs.append(pdu)
        defer { resumeSatisfiedWaiters() }
        guard let first = pdu.first else { return }
        let opcode = ATTOpcode(rawValue: first)
        if opcode == .handleValueConfirmation {
            confirmations += 1
            awaitingConfirmation = false
            sendNextIndication()
            return
        }
        if opcode == .writeCommand, pdu.count >= 3 {
            respond(toWriteOf: Array(pdu[3...]), handle: pdu.uint16LE(at: 1))
            return
        }
        if opcode.isCommand { return }  // commands: no response
        if behaviour == .silent { return }
        if case .disconnect(let limit) = behaviour, requestsAnswered >= limit {
            channel.close()
            return
        }
        requestsAnswered += 1
        let response = answer(opcode: opcode, pdu)
        defer {
            if opcode == .writeRequest, pdu.count >= 3, response.pdu.first == ATTOpcode.writeResponse.rawValue,
               configurationOwners[pdu.uint16LE(at: 1)] == nil {
                respond(toWriteOf: Array(pdu[3...]), handle: pdu.uint16LE(at: 1))
            }
            let executed = executedWrites
            executedWrites = []
            for (handle, value) in executed { respond(toWriteOf: value, handle: handle) }
        }
        try? channel.send(response.pdu)
        for (handle, value) in response.notifications { try? channel.send([ATTOpcode.handleValueNotification.rawValue] + handle.bytesLE + value) }
        if !response.indications.isEmpty {
            indicationQueue += response.indications
            sendNextIndication()
        }
    }

    /// Hands a written value to the responder and sends its replies.
    private func respond(toWriteOf value: [UInt8], handle: UInt16) {
        guard let responder, let uuid = characteristicsByValueHandle[handle] else { return }
        values[handle] = value
        for reply in responder.respond(toWriteOf: value, characteristic: uuid) {
            guard let replyHandle = valueHandle(of: reply.characteristic) else { continue }
            if reply.indicate {
                indicationQueue.append((replyHandle, reply.value))
                sendNextIndication()
            } else {
                try? channel.send([ATTOpcode.handleValueNotification.rawValue] + replyHandle.bytesLE + reply.value)
            }
            if reply.closesLink {
                channel.close()
                return
            }
        }
    }

    private func sendNextIndication() {
        guard !awaitingConfirmation, !indicationQueue.isEmpty else { return }
        let next = indicationQueue.removeFirst()
        awaitingConfirmation = true
        try? channel.send([ATTOpcode.handleValueIndication.rawValue] + next.handle.bytesLE + next.value)
    }

    private struct Answer {
        var pdu: [UInt8]
        var notifications: [(UInt16, [UInt8])] = []
        var indications: [(handle: UInt16, value: [UInt8])] = []
    }

    private func error(_ request: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> Answer {
        Answer(pdu: ATTPDU.errorResponse(request: request.rawValue, handle: handle, code: code))
    }

    /// The refusal of a request on a protected attribute (a characteristic value or descriptor).
    private func securityRefusal(opcode: ATTOpcode, _ pdu: [UInt8]) -> Answer? {
        guard security != .none, [.readRequest, .readBlobRequest, .writeRequest].contains(opcode), pdu.count >= 3 else {
            return nil
        }
        let handle = pdu.uint16LE(at: 1)
        guard let attribute = attributes.first(where: { $0.handle == handle }),
              attribute.type != .primaryService, attribute.type != .characteristic else { return nil }
        switch security {
        case .none: return nil
        case .encryption: return encrypted ? nil : error(opcode, handle, .insufficientEncryption)
        case .passkey: return error(opcode, handle, .insufficientAuthentication)
        }
    }

    private func answer(opcode: ATTOpcode, _ pdu: [UInt8]) -> Answer {
        if let refusal = securityRefusal(opcode: opcode, pdu) { return refusal }
        switch opcode {
        case .exchangeMTURequest:
            guard pdu.count == 3 else { return error(opcode, 0, .invalidPDU) }
            mtu = max(23, min(serverMTU, pdu.uint16LE(at: 1)))
            return Answer(pdu: ATTPDU.exchangeMTUResponse(serverMTU))
        case .readByGroupTypeRequest:
            guard pdu.count == 7 || pdu.count == 21 else { return error(opcode, 0, .invalidPDU) }
            let (start, end) = (pdu.uint16LE(at: 1), pdu.uint16LE(at: 3))
            guard start != 0, start <= end else { return error(opcode, start, .invalidHandle) }
            guard BLEUUID(littleEndianBytes: pdu[5...]) == .primaryService else {
                return error(opcode, start, .unsupportedGroupType)
            }
            let found = attributes.filter { $0.type == .primaryService && $0.handle >= start && $0.handle <= end }
            return packed(opcode: .readByGroupTypeResponse, found, notFound: error(opcode, start, .attributeNotFound)) {
                $0.handle.bytesLE + ($0.groupEnd ?? $0.handle).bytesLE + $0.value
            }
        case .readByTypeRequest:
            guard pdu.count == 7 || pdu.count == 21 else { return error(opcode, 0, .invalidPDU) }
            let (start, end) = (pdu.uint16LE(at: 1), pdu.uint16LE(at: 3))
            guard start != 0, start <= end else { return error(opcode, start, .invalidHandle) }
            let type = BLEUUID(littleEndianBytes: pdu[5...])
            let found = attributes.filter { $0.type == type && $0.handle >= start && $0.handle <= end }
            return packed(opcode: .readByTypeResponse, found, notFound: error(opcode, start, .attributeNotFound)) {
                $0.handle.bytesLE + self.value(of: $0).prefix(Int(self.mtu) - 4)
            }
        case .findInformationRequest:
            guard pdu.count == 5 else { return error(opcode, 0, .invalidPDU) }
            let (start, end) = (pdu.uint16LE(at: 1), pdu.uint16LE(at: 3))
            guard start != 0, start <= end else { return error(opcode, start, .invalidHandle) }
            let found = attributes.filter { $0.handle >= start && $0.handle <= end }
            guard let first = found.first else { return error(opcode, start, .attributeNotFound) }
            let short = first.type.shortValue != nil
            var body: [UInt8] = [ATTOpcode.findInformationResponse.rawValue, short ? 1 : 2]
            for attribute in found where (attribute.type.shortValue != nil) == short {
                let entry = attribute.handle.bytesLE
                    + (short ? attribute.type.shortestLittleEndianBytes : attribute.type.littleEndianBytes)
                guard body.count + entry.count <= Int(mtu) else { break }
                body += entry
            }
            return Answer(pdu: body)
        case .readRequest:
            guard pdu.count == 3 else { return error(opcode, 0, .invalidPDU) }
            let handle = pdu.uint16LE(at: 1)
            guard let value = values[handle] else { return error(opcode, handle, .invalidHandle) }
            return Answer(pdu: [ATTOpcode.readResponse.rawValue] + value.prefix(Int(mtu) - 1))
        case .readBlobRequest:
            guard pdu.count == 5 else { return error(opcode, 0, .invalidPDU) }
            let (handle, offset) = (pdu.uint16LE(at: 1), Int(pdu.uint16LE(at: 3)))
            guard let value = values[handle] else { return error(opcode, handle, .invalidHandle) }
            guard offset <= value.count else { return error(opcode, handle, .invalidOffset) }
            return Answer(pdu: [ATTOpcode.readBlobResponse.rawValue] + value[offset...].prefix(Int(mtu) - 1))
        case .writeRequest:
            guard pdu.count >= 3 else { return error(opcode, 0, .invalidPDU) }
            let handle = pdu.uint16LE(at: 1)
            guard values[handle] != nil else { return error(opcode, handle, .invalidHandle) }
            let written = Array(pdu[3...])
            values[handle] = written
            var result = Answer(pdu: [ATTOpcode.writeResponse.rawValue])
            if let valueHandle = configurationOwners[handle] {
                guard written.count == 2 else { return error(opcode, handle, .invalidAttributeValueLength) }
                var pendingUpdates = updates[valueHandle] ?? []
                if written[0] & 0x03 != 0, let responder, let uuid = characteristicsByValueHandle[valueHandle] {
                    pendingUpdates += responder.respond(toSubscriptionOf: uuid)
                        .filter { $0.characteristic == uuid }.map(\.value)
                }
                if written[0] & 0x02 != 0 {
                    result.indications = pendingUpdates.map { (valueHandle, $0) }
                    updates[valueHandle] = []
                } else if written[0] & 0x01 != 0 {
                    result.notifications = pendingUpdates.map { (valueHandle, $0) }
                    updates[valueHandle] = []
                }
            }
            return result
        case .prepareWriteRequest:
            guard pdu.count >= 5 else { return error(opcode, 0, .invalidPDU) }
            let handle = pdu.uint16LE(at: 1)
            guard values[handle] != nil, configurationOwners[handle] == nil else { return error(opcode, handle, .invalidHandle) }
            guard preparedWrites.count < Self.maximumPreparedWrites else { return error(opcode, handle, .prepareQueueFull) }
            preparedWrites.append((handle, Int(pdu.uint16LE(at: 3)), Array(pdu[5...])))
            return Answer(pdu: [ATTOpcode.prepareWriteResponse.rawValue] + Array(pdu[1...]))
        case .executeWriteRequest:
            guard pdu.count == 2 else { return error(opcode, 0, .invalidPDU) }
            let queued = preparedWrites
            preparedWrites = []
            guard pdu[1] == 0x01 else { return Answer(pdu: [ATTOpcode.executeWriteResponse.rawValue]) }
            // Each handle's parts must follow one another from offset 0; the value is their concatenation.
            var assembled: [(handle: UInt16, value: [UInt8])] = []
            for (handle, offset, part) in queued {
                if let index = assembled.firstIndex(where: { $0.handle == handle }) {
                    guard offset == assembled[index].value.count else { return error(opcode, handle, .invalidOffset) }
                    assembled[index].value += part
                } else {
                    guard offset == 0 else { return error(opcode, handle, .invalidOffset) }
                    assembled.append((handle, part))
                }
            }
            guard assembled.allSatisfy({ $0.value.count <= ATTPDU.maximumAttributeValueLength }) else {
                return error(opcode, assembled.first?.handle ?? 0, .invalidAttributeValueLength)
            }
            for (handle, value) in assembled {
                values[handle] = value
                longWrites.append(value)
            }
            executedWrites = assembled
            return Answer(pdu: [ATTOpcode.executeWriteResponse.rawValue])
        default:
            return error(opcode, 0, .requestNotSupported)
        }
    }

    private func value(of attribute: SimulatedAttribute) -> [UInt8] { values[attribute.handle] ?? attribute.value }

    /// A Read By Type / Read By Group Type response: entries of the first one's length, as many as fit.
    private func packed(opcode: ATTOpcode, _ found: [SimulatedAttribute], notFound: Answer,
                        entry: (SimulatedAttribute) -> [UInt8]) -> Answer {
        guard let first = found.first else { return notFound }
        let length = entry(first).count
        var body: [UInt8] = [opcode.rawValue, UInt8(length)]
        for attribute in found {
            let bytes = entry(attribute)
            guard bytes.count == length, body.count + length <= Int(mtu) else { break }
            body += bytes
        }
        return Answer(pdu: body)
    }
}

extension UInt16 {
    var bytesLE: [UInt8] { [UInt8(self & 0xFF), UInt8(self >> 8)] }
}

extension Collection<UInt8> where Index == Int {
    func uint16LE(at offset: Int) -> UInt16 {
        UInt16(self[startIndex + offset]) | UInt16(self[startIndex + offset + 1]) << 8
    }
}
