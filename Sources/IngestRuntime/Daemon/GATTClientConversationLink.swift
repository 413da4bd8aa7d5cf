import AdapterKit
import BlueZTransport
import Foundation
import Transport

/// A conversation's link over the BlueZ GATT client: discovery, reads, writes and
/// subscriptions go to the client; notifications and indications are queued until the
/// conversation waits for them, at most ``maximumQueued`` of them (what the conversation
/// declares it may receive in one contact, ``GATTConversation/maximumValuesPerContact``).
/// Nothing is dropped: a device that sends more before the conversation reads them ends the
/// contact. The link then disconnects, forgets the queue and answers every later request with
/// ``GATTConversationError/tooManyValues(limit:)``, so the conversation can acknowledge or
/// erase nothing on the device; what it committed before stays.
actor GATTClientConversationLink: GATTConversationLink {
    /// Values kept for later waits.
    nonisolated let maximumQueued: Int

    nonisolated let peerAddress: BLEAddress
    private let client: GATTClient
    private var queued: [GATTValue] = []
    private var linkEnded = false
    private var waiter: (token: Int, continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>)?
    private var nextToken = 0
    /// Notifications and indications received in this contact.
    private(set) var receivedValues = 0
    /// Values that arrived with the queue full (counted from the first one past the bound);
    /// non-zero once the contact was ended for too many values.
    private(set) var refusedValues = 0
    private var database: GATTDatabase?
    /// Whether the link was asked to be encrypted already (once per connection).
    private var securityRaised = false

    /// A link over `client` keeping at most `maximumQueued` values waiting (bounded by
    /// ``GATTConversationLimits/queueBound(declared:)``).
    init(client: GATTClient, maximumQueued: Int = GATTConversationLimits.defaultValuesPerContact) {
        self.client = client
        self.maximumQueued = GATTConversationLimits.queueBound(declared: maximumQueued)
        peerAddress = client.peer.address
    }

    /// Whether the contact ended because the device sent more than ``maximumQueued`` values.
    var overflowed: Bool { refusedValues > 0 }

    /// Throws once the contact ended for too many values: no request reaches the device any more.
    private func refuseAfterOverflow() throws(GATTConversationError) {
        if overflowed { throw .tooManyValues(limit: maximumQueued) }
    }

    /// Starts taking the client's events; call once before the conversation runs.
    func start() {
        let events = client.events
        Task {
            for await event in events { self.absorb(event) }
            self.endOfEvents()
        }
    }

    func mtu() async -> Int { Int(await client.mtu) }

    func now() async -> Date { Date() }

    func discover() async throws(GATTConversationError) -> GATTDatabase {
        try refuseAfterOverflow()
        if let database { return database }
        do {
            _ = try await client.exchangeMTU()
            let services = try await client.discover()
            let table = Self.table(of: services)
            database = table
            return table
        } catch {
            throw Self.translate(error, operation: "discovery", characteristic: nil)
        }
    }

    func read(_ characteristic: BLEUUID) async throws(GATTConversationError) -> [UInt8] {
        try refuseAfterOverflow()
        let found = try await characteristicNamed(characteristic)
        guard found.properties.contains(.read) else {
            throw .operationNotPermitted(operation: "read", characteristic: characteristic)
        }
        return try await securely("read", characteristic) { () async throws(GATTError) in try await self.client.read(found) }
    }

    func write(_ value: [UInt8], to characteristic: BLEUUID, withResponse: Bool) async throws(GATTConversationError) {
        try refuseAfterOverflow()
        let found = try await characteristicNamed(characteristic)
        let needed: GATTCharacteristicProperties = withResponse ? .write : .writeWithoutResponse
        guard found.properties.contains(needed) else {
            throw .operationNotPermitted(operation: withResponse ? "write" : "write without response",
                                         characteristic: characteristic)
        }
        try await securely("write", characteristic) { () async throws(GATTError) in
            try await self.client.write(value, to: found, withResponse: withResponse)
        }
    }

    func subscribe(to characteristic: BLEUUID, mode: GATTNotificationMode) async throws(GATTConversationError) {
        try refuseAfterOverflow()
        let found = try await characteristicNamed(characteristic)
        let needed: GATTCharacteristicProperties = mode == .indications ? .indicate : .notify
        guard found.properties.contains(needed) else {
            throw .operationNotPermitted(operation: mode.rawValue, characteristic: characteristic)
        }
        try await securely("subscription", characteristic) { () async throws(GATTError) in
            try await self.client.subscribe(to: found, mode: mode == .indications ? .indications : .notifications)
        }
    }

    func unsubscribe(from characteristic: BLEUUID) async throws(GATTConversationError) {
        try refuseAfterOverflow()
        let found = try await characteristicNamed(characteristic)
        do {
            try await client.unsubscribe(from: found)
        } catch {
            throw Self.translate(error, operation: "unsubscription", characteristic: characteristic)
        }
    }

    func nextValue(timeout: Duration, matching: @escaping @Sendable (GATTValue) -> Bool)
        async throws(GATTConversationError) -> GATTValue
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            try refuseAfterOverflow()
            if let index = queued.firstIndex(where: matching) { return queued.remove(at: index) }
            if linkEnded { throw .disconnected("while waiting for a value") }
            if ContinuousClock.now >= deadline { throw .timedOut(waitingFor: "matching value", after: timeout) }
            await waitForArrival(until: deadline)
        }
    }

    func disconnect() async { await client.disconnect() }

    func endReason() async -> String? {
        if overflowed { return "the device sent more than \(maximumQueued) notifications before the conversation read them" }
        return linkEnded ? "the device disconnected" : nil
    }

    // MARK: - Events

    private func absorb(_ event: TransportEvent) {
        guard case .gattValue(let value) = event, value.kind == .notification || value.kind == .indication else { return }
        receivedValues += 1
        if overflowed {
            refusedValues += 1
            return
        }
        guard queued.count < maximumQueued else {
            // Dropping any of them would lose a reading the device then believes delivered: end the contact instead.
            refusedValues = 1
            queued.removeAll()
            Task { await client.disconnect() }
            wake()
            return
        }
        queued.append(value)
        wake()
    }

    private func endOfEvents() {
        linkEnded = true
        wake()
    }

    private func waitForArrival(until deadline: ContinuousClock.Instant) async {
        nextToken += 1
        let token = nextToken
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                self.wake(token: token)
            }
            waiter = (token, continuation, timer)
        }
    }

    private func wake(token: Int? = nil) {
        guard let current = waiter, token == nil || current.token == token else { return }
        waiter = nil
        current.timer.cancel()
        current.continuation.resume()
    }

    // MARK: - Helpers

    /// Runs a request; when the device answers Insufficient Authentication / Encryption (or
    /// key size), asks for an encrypted link once and repeats it. Still refused on an encrypted
    /// link, the device wants a passkey bond: ``GATTConversationError/pairingNeeded``.
    private func securely<T>(_ operation: String, _ characteristic: BLEUUID,
                             _ request: () async throws(GATTError) -> T) async throws(GATTConversationError) -> T {
        // Checked again right before the request goes out: the queue may have overflowed during discovery.
        try refuseAfterOverflow()
        let firstError: GATTError
        do {
            return try await request()
        } catch {
            firstError = error
        }
        guard case .attError(_, _, let code) = firstError, code.needsSecurity else {
            throw Self.translate(firstError, operation: operation, characteristic: characteristic)
        }
        if securityRaised {
            throw .pairingNeeded(device: peerAddress, operation: operation, characteristic: characteristic)
        }
        securityRaised = true
        do {
            try await client.raiseSecurity(to: .medium)
        } catch {
            throw .transport("\(peerAddress) wants an encrypted link for the \(operation) of \(characteristic): \(error)")
        }
        do {
            return try await request()
        } catch {
            if case .attError(_, _, let again) = error, again.needsSecurity {
                throw .pairingNeeded(device: peerAddress, operation: operation, characteristic: characteristic)
            }
            throw Self.translate(error, operation: operation, characteristic: characteristic)
        }
    }

    private func characteristicNamed(_ uuid: BLEUUID) async throws(GATTConversationError) -> GATTCharacteristic {
        _ = try await discover()
        let services = await client.services
        guard let found = services.lazy.flatMap(\.characteristics).first(where: { $0.uuid == uuid }) else {
            throw .characteristicMissing(uuid)
        }
        return found
    }

    private static func table(of services: [GATTService]) -> GATTDatabase {
        var table = GATTDatabase()
        for service in services {
            table.addService(.init(startHandle: service.startHandle, endHandle: service.endHandle, uuid: service.uuid))
            for characteristic in service.characteristics {
                table.addCharacteristic(.init(declarationHandle: characteristic.declarationHandle,
                                              properties: characteristic.properties.rawValue,
                                              valueHandle: characteristic.valueHandle, uuid: characteristic.uuid))
                for descriptor in characteristic.descriptors {
                    table.addAttributeType(descriptor.uuid, handle: descriptor.handle)
                }
            }
        }
        return table
    }

    private static func translate(_ error: GATTError, operation: String, characteristic: BLEUUID?) -> GATTConversationError {
        switch error {
        case .attError(_, _, let code):
            .attError(operation: operation, characteristic: characteristic ?? BLEUUID(0x0000), code: code.rawValue)
        case .timedOut(let request, let after): .timedOut(waitingFor: "answer to \(request)", after: after)
        case .disconnected(let end): .disconnected("\(end)")
        default: .transport("\(operation) failed: \(error)")
        }
    }
}
