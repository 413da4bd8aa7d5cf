import AdapterKit
import Foundation
import HealthModel
import Transport

/// One contact with an Omron monitor: subscribe, unlock (programming the key when the monitor
/// is in pairing mode), open a memory session, read the index (each user's write cursor), check
/// and set the clock, read each user's readings since the last committed one (all at first
/// contact), delivering each as it arrives and remembering its slot once committed; erase only
/// when asked and only what was committed; close the session.
///
/// Each reading gives a blood-pressure correlation (systolic, diastolic in mmHg) and a heart
/// rate, at the monitor's wall-clock time read in the context's zone, with the user
/// (`IngestDeviceUserID` 1 or 2, what `ingestd people` assigns by) and the sync identifier
/// `omron/<address>/<user>/<yyyyMMddHHmmss>`.
final class OmronBPConversation: GATTConversation {
    /// The longest wait for one answer of the monitor.
    static let answerTimeout: Duration = .seconds(5)
    /// At most this many readings are read in one contact (two users of the largest ring).
    static let maximumRecordsPerContact = 200
    /// Pieces of one answer (four RX characteristics) and stray values skipped while waiting.
    static let maximumPieces = 8
    /// Every reading of a contact in its pieces, and the answers around them.
    var maximumValuesPerContact: Int { (Self.maximumRecordsPerContact + 16) * Self.maximumPieces }
    /// The clock is set when it is off by more than this.
    static let clockTolerance: TimeInterval = 60
    /// The key tried when none is remembered for the monitor (monitors paired by an earlier
    /// ingestd without device memory, replay); a monitor in pairing mode gets a random one.
    static let defaultPairingKey: [UInt8] = Array("ingestd omron bp".utf8)
    /// The memory key of the monitor's pairing key (hex; kept in the store, never printed).
    static let pairingKeyMemoryKey = "pairing-key"

    /// The memory key of the last slot read and committed of user `n` (1-based).
    static func lastSlotKey(user: Int) -> String { "user\(user)-last-slot" }

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    /// A step that ends the contact, with the rejection to report (AdapterKit's shared stop).
    private typealias Stop = ConversationStop

    private var address: String { device.address.description }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        try await ConversationStop.reporting(source: context.source, device: device.address, over: link, deliver: deliver) {
            do {
                try await converse(over: link, deliver: deliver)
            } catch let failure as MemoryWire.Failure {
                // A malformed answer ends the contact: what was delivered stays, nothing more is read or erased.
                throw Stop(reason: failure.error.reason, detail: failure.error.description, time: failure.time)
            }
        }
    }

    private func converse(over link: any GATTConversationLink,
                          deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        let model = try await identifyModel(database, over: link)
        let wire = try MemoryWire(database: database, link: link, model: model)

        for channel in wire.receive {
            do {
                try await link.subscribe(to: channel, mode: .notifications)
            } catch {
                if case .attError = error {
                    throw Stop(reason: "pairing-needed", detail: "\(model.name) refuses its memory (\(error)): "
                                   + Self.pairingAdvice(model), time: await link.now())
                }
                throw error
            }
        }
        do {
            try await unlock(model, database: database, over: link)
        } catch GATTConversationError.timedOut(let what, let after) {
            // A monitor that neither knows this host nor is in pairing mode often just stays silent.
            throw Stop(reason: "pairing-needed", detail: "\(model.name) gave no \(what) within \(after) to the unlock: "
                           + Self.pairingAdvice(model), time: await link.now())
        }
        try await wire.expect(OmronMemoryFrame.startSession, answer: OmronMemoryFrame.startAnswer)

        let index = try await wire.readBytes(at: model.settingsReadAddress, count: model.indexSize)
        guard let cursors = model.cursors(fromIndex: index.data) else {
            throw Stop(reason: "short-index", detail: "index of \(model.indexSize) bytes expected: \(hexString(index.data))",
                       time: index.time)
        }
        if context.options[OmronBPOption.setClock] != "false" {
            try await checkClock(model, wire: wire, over: link)
        }

        let erase = context.options[OmronBPOption.erase] == "true"
        var budget = Self.maximumRecordsPerContact
        for user in 0..<model.users where budget > 0 {
            let read = try await download(user: user, model: model, cursor: cursors[user], budget: budget, wire: wire,
                                          deliver: deliver)
            budget -= read.slots.count
            // Only now, with every reading of this user committed (nothing merely held), may the monitor forget them.
            if erase && read.complete && read.mayForget {
                for slot in read.slots {
                    let address = model.address(user: user, slot: slot)
                    try await wire.expectWrite(at: address, data: [UInt8](repeating: 0xFF, count: model.recordSize))
                }
            }
        }
        let end = try await wire.exchange(OmronMemoryFrame.endSession, answer: OmronMemoryFrame.endAnswer)
        if end.answer.data.first != 0 {
            var output = AdapterOutput()
            output.reject(context.source, reason: "session-end-status",
                          detail: "\(address): the monitor ended the memory session with status \(end.answer.data.first ?? 0)",
                          time: end.time)
            _ = try await deliver(output)
        }
        await link.disconnect()
    }

    // MARK: - Model

    /// The model from `omron-model`, else the Model Number String, else the advertised name.
    private func identifyModel(_ database: GATTDatabase, over link: any GATTConversationLink) async throws -> OmronBPModel {
        let configured: OmronBPModel?
        do {
            configured = try AdapterOptionReader(context.options).value(
                OmronBPOption.model, expected: "one of " + OmronBPModel.all.map(\.name).joined(separator: ", "), OmronBPModel.named)
        } catch {
            throw Stop(reason: AdapterOptionError.reason, detail: error.description, time: await link.now())
        }
        if let configured { return configured }
        if let characteristic = database.characteristic(OmronBPUUID.modelNumber), characteristic.properties & 0x02 != 0,
           let value = try? await link.read(OmronBPUUID.modelNumber),
           let model = OmronBPModel.named(String(decoding: value.prefix(64), as: UTF8.self)
               .trimmingCharacters(in: CharacterSet(charactersIn: "\0"))) {
            return model
        }
        if let name = device.name, let model = OmronBPModel.all.first(where: { name.uppercased().contains($0.name) }) {
            return model
        }
        throw Stop(reason: "model-unknown", detail: "the monitor does not name its model: give it with --adapter-option "
                       + "\(OmronBPOption.model)=MODEL (one of " + OmronBPModel.all.map(\.name).joined(separator: ", ") + ")",
                   time: await link.now())
    }

    static func pairingAdvice(_ model: OmronBPModel) -> String {
        "put the \(model.name) in pairing mode (hold its Bluetooth button until -P- blinks) and let ingestd connect "
            + "again; the kernel pairs and ingestd programs its key"
    }

    // MARK: - Unlock

    private func unlock(_ model: OmronBPModel, database: GATTDatabase, over link: any GATTConversationLink) async throws {
        guard let unlockCharacteristic = database.characteristic(OmronBPUUID.unlock) else {
            throw GATTConversationError.characteristicMissing(OmronBPUUID.unlock)
        }
        try await link.subscribe(to: OmronBPUUID.unlock, mode: .notifications)
        func answer(to value: [UInt8], withResponse: Bool) async throws -> GATTValue {
            try await link.write(value, to: OmronBPUUID.unlock, withResponse: withResponse)
            return try await link.nextValue(timeout: Self.answerTimeout) { $0.characteristicUUID == OmronBPUUID.unlock }
        }
        switch model.unlock {
        case .token:
            // A token of the host's choosing, echoed by the monitor (not a secret): four bytes of its address.
            let token = Array(device.address.bytes.prefix(4))
            let withResponse = unlockCharacteristic.properties & 0x04 == 0
            let reply = try await answer(to: [0x11] + token + [UInt8](repeating: 0, count: 15), withResponse: withResponse)
            guard reply.value.count >= 6, reply.value[0] == 0x91, reply.value[1] == 0x00, Array(reply.value[2..<6]) == token else {
                throw Stop(reason: "pairing-needed", detail: "\(model.name) refuses the token (answer \(hexString(reply.value))): "
                               + Self.pairingAdvice(model), time: reply.time)
            }
        case .pairingKey:
            let remembered = await context.memory?.recall(Self.pairingKeyMemoryKey, device: address).flatMap(Self.key(hex:))
            let reply = try await answer(to: [0x01] + (remembered ?? Self.defaultPairingKey), withResponse: true)
            if reply.value.starts(with: [0x81, 0x00]) { return }
            var generator = SystemRandomNumberGenerator()
            let key = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            // Not our key: in pairing mode the monitor takes a new one.
            let programming = try await answer(to: [0x02] + [UInt8](repeating: 0, count: 16), withResponse: true)
            guard programming.value.starts(with: [0x82, 0x00]) else {
                throw Stop(reason: "pairing-needed", detail: "\(model.name) refuses ingestd's key (answer \(hexString(reply.value))) "
                               + "and is not in pairing mode: " + Self.pairingAdvice(model), time: programming.time)
            }
            let programmed = try await answer(to: [0x00] + key, withResponse: true)
            guard programmed.value.starts(with: [0x80, 0x00]) else {
                throw Stop(reason: "pairing-failed", detail: "\(model.name) did not take the new key (answer "
                               + "\(hexString(programmed.value))): " + Self.pairingAdvice(model), time: programmed.time)
            }
            try await context.memory?.remember(key.map { String(format: "%02x", $0) }.joined(),
                                               for: Self.pairingKeyMemoryKey, device: address)
        }
    }

    /// 16 bytes from 32 hex digits, nil otherwise.
    static func key(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 32 else { return nil }
        let key = stride(from: 0, to: 32, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
        return key.count == 16 ? key : nil
    }

    // MARK: - Clock

    /// Reads the clock block; when the monitor's clock is off by more than a minute (or unset),
    /// writes the conversation's clock into it.
    private func checkClock(_ model: OmronBPModel, wire: MemoryWire, over link: any GATTConversationLink) async throws {
        let layout = model.clockLayout
        let block = try await wire.readBytes(at: model.settingsReadAddress + UInt16(model.clockOffset), count: layout.size)
        let now = await link.now()
        let monitorTime = OmronClockBlock.time(block.data, layout: layout).flatMap { components -> Date? in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = context.timeZone
            return calendar.date(from: components)
        }
        if let monitorTime, abs(monitorTime.timeIntervalSince(now)) <= Self.clockTolerance { return }
        guard block.data.count >= layout.size else { return }
        let written = OmronClockBlock.setting(block.data, to: now, in: context.timeZone, layout: layout)
        try await wire.expectWrite(at: model.settingsWriteAddress + UInt16(model.clockOffset), data: written)
    }

    // MARK: - Readings

    private struct Download {
        var slots: [Int] = []
        var complete = false
        var mayForget = true
    }

    /// The slots to read, oldest first: after the remembered one up to the cursor, or at first
    /// contact the whole ring from the cursor on (the part at and after the cursor only when
    /// the ring went round: its first slot then holds a reading).
    private func download(user: Int, model: OmronBPModel, cursor: Int, budget: Int, wire: MemoryWire,
                          deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws -> Download {
        let size = model.recordsPerUser
        let key = Self.lastSlotKey(user: user + 1)
        let remembered = await context.memory?.recall(key, device: address).flatMap(Int.init).flatMap { (0..<size).contains($0) ? $0 : nil }
        var wrappedPart: [Int] = []
        var recentPart: [Int]
        if let remembered {
            let count = ((cursor - 1 - remembered) % size + size) % size
            recentPart = (0..<count).map { (remembered + 1 + $0) % size }
        } else {
            wrappedPart = Array(cursor..<size)
            recentPart = Array(0..<cursor)
        }
        var result = Download()
        var inWrappedPart = !wrappedPart.isEmpty
        let plan = wrappedPart + recentPart
        var position = 0
        while position < plan.count {
            let slot = plan[position]
            position += 1
            guard result.slots.count < budget else { return result }
            let answer = try await wire.readBytes(at: model.address(user: user, slot: slot), count: model.recordSize)
            var output = AdapterOutput()
            do {
                if let record = try OmronBPRecord(answer.data, layout: model.recordLayout) {
                    take(record, user: user + 1, model: model, receivedAt: answer.time, into: &output)
                    result.slots.append(slot)
                } else {
                    output.skip("empty-slot")
                    if inWrappedPart && position == 1 {
                        // The slot the monitor writes next is empty: the ring never went round.
                        position = wrappedPart.count
                    }
                }
            } catch {
                output.reject(context.source, reason: error.reason,
                              detail: "\(address): user \(user + 1) slot \(slot): \(error.description)", time: answer.time)
            }
            if position >= wrappedPart.count { inWrappedPart = false }
            let receipt = try await deliver(output)
            if !output.records.isEmpty && !receipt.deviceMayForget { result.mayForget = false }
            try? await context.memory?.remember(String(slot), for: key, device: address)
        }
        result.complete = true
        return result
    }

    private func take(_ record: OmronBPRecord, user: Int, model: OmronBPModel, receivedAt: Date, into output: inout AdapterOutput) {
        guard let time = record.date(in: context.timeZone) else { return }
        let c = record.time
        let stamp = String(format: "%04d%02d%02d%02d%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0,
                           c.minute ?? 0, c.second ?? 0)
        var metadata = Metadata(syncIdentifier: "omron/\(address)/\(user)/\(stamp)", syncVersion: 1,
                                timeZone: context.timeZone.identifier)
        metadata.entries[MetadataKey.deviceUserID] = .number(Double(user))
        metadata.entries["IngestIrregularHeartbeat"] = .bool(record.irregularHeartbeat)
        metadata.entries["IngestBodyMovement"] = .bool(record.bodyMovement)
        let deviceInfo = Device(name: device.name, manufacturer: "Omron", model: model.name,
                                localIdentifier: address)
        func sample(_ type: QuantityType, _ value: Int, _ unit: HealthModel.Unit) -> QuantitySample {
            QuantitySample(type: type, quantity: Quantity(value: Double(value), unit: unit), start: time, end: time,
                           source: context.source, device: deviceInfo, metadata: metadata)
        }
        output.records.append(.correlation(Correlation(
            type: .bloodPressure, start: time, end: time,
            objects: [sample(.bloodPressureSystolic, record.systolic, .millimeterOfMercury),
                      sample(.bloodPressureDiastolic, record.diastolic, .millimeterOfMercury)],
            source: context.source, device: deviceInfo, metadata: metadata)))
        if record.pulse > 0 {
            output.records.append(.sample(sample(.heartRate, record.pulse, .countPerMinute)))
        }
    }
}

/// The memory protocol over the monitor's TX and RX characteristics: a frame written in
/// 16-byte pieces on consecutive TX characteristics (whole, when the monitor has only one),
/// its answer joined from consecutive RX notifications up to its length byte.
struct MemoryWire {
    let link: any GATTConversationLink
    let transmit: [(uuid: BLEUUID, withResponse: Bool)]
    let receive: [BLEUUID]

    init(database: GATTDatabase, link: any GATTConversationLink, model: OmronBPModel) throws {
        self.link = link
        var transmit: [(uuid: BLEUUID, withResponse: Bool)] = []
        for uuid in OmronBPUUID.transmit {
            guard let characteristic = database.characteristic(uuid) else { break }
            transmit.append((uuid, characteristic.properties & 0x08 != 0))
        }
        let receive = OmronBPUUID.receive.prefix { database.characteristic($0) != nil }
        guard !transmit.isEmpty else { throw GATTConversationError.characteristicMissing(OmronBPUUID.transmit[0]) }
        guard !receive.isEmpty else { throw GATTConversationError.characteristicMissing(OmronBPUUID.receive[0]) }
        self.transmit = transmit
        self.receive = Array(receive)
    }

    /// A frame error, as the contact's stop.
    struct Failure: Error {
        var error: OmronFrameError
        var time: Date
    }

    /// Writes `frame` and returns the answer of type `answer`, with the time it arrived.
    func exchange(_ frame: [UInt8], answer type: UInt16) async throws -> (answer: OmronMemoryFrame.Answer, time: Date) {
        if transmit.count == 1 {
            try await link.write(frame, to: transmit[0].uuid, withResponse: transmit[0].withResponse)
        } else {
            for (index, start) in stride(from: 0, to: frame.count, by: 16).enumerated() {
                let channel = transmit[min(index, transmit.count - 1)]
                try await link.write(Array(frame[start..<min(start + 16, frame.count)]), to: channel.uuid,
                                     withResponse: channel.withResponse)
            }
        }
        let receive = Set(self.receive)
        let first = self.receive[0]
        var joined: [UInt8] = []
        var time = Date()
        for _ in 0..<OmronBPConversation.maximumPieces {
            let value = try await link.nextValue(timeout: OmronBPConversation.answerTimeout) { value in
                value.characteristicUUID.map(receive.contains) ?? false
            }
            time = value.time
            if joined.isEmpty {
                guard value.characteristicUUID == first else { continue }  // a piece of an answer not ours
            }
            joined += value.value
            if let length = joined.first, joined.count >= Int(length) { break }
        }
        let answer: OmronMemoryFrame.Answer
        do { answer = try OmronMemoryFrame.Answer(joined) } catch { throw Failure(error: error, time: time) }
        guard answer.type == type else { throw Failure(error: .unexpectedAnswer(expected: type, bytes: joined), time: time) }
        return (answer, time)
    }

    /// Writes `frame` and waits for the answer of type `answer`.
    func expect(_ frame: [UInt8], answer type: UInt16) async throws {
        _ = try await exchange(frame, answer: type)
    }

    /// Reads `count` bytes at `address`.
    func readBytes(at address: UInt16, count: Int) async throws -> (data: [UInt8], time: Date) {
        let result = try await exchange(OmronMemoryFrame.read(address: address, count: count), answer: OmronMemoryFrame.readAnswer)
        guard result.answer.address == address else {
            throw Failure(error: .wrongAddress(expected: address, bytes: result.answer.data), time: result.time)
        }
        return (result.answer.data, result.time)
    }

    /// Writes `data` at `address` and waits for the monitor's confirmation.
    func expectWrite(at address: UInt16, data: [UInt8]) async throws {
        _ = try await exchange(OmronMemoryFrame.write(address: address, data: data), answer: OmronMemoryFrame.writeAnswer)
    }
}
