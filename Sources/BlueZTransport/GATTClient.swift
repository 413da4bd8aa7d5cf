import BLEWire
import Foundation
import Transport

/// The peer of a GATT connection, as the transport events name it.
public struct GATTPeer: Hashable, Sendable {
    public var address: BLEAddress
    public var addressType: BLEAddressType
    /// The HCI connection handle (from L2CAP_CONNINFO on a real socket).
    public var connectionHandle: UInt16

    public init(address: BLEAddress, addressType: BLEAddressType, connectionHandle: UInt16) {
        self.address = address
        self.addressType = addressType
        self.connectionHandle = connectionHandle
    }
}

/// Settings of a ``GATTClient``.
public struct GATTClientConfiguration: Hashable, Sendable {
    /// The ATT transaction timeout: a request without response for this long fails and the link
    /// is closed (the spec's value is 30 s).
    public var requestTimeout: Duration
    /// The receive MTU offered in Exchange MTU (23…517).
    public var preferredMTU: UInt16

    public init(requestTimeout: Duration = .seconds(30), preferredMTU: UInt16 = 517) {
        self.requestTimeout = requestTimeout
        self.preferredMTU = min(517, max(23, preferredMTU))
    }
}

/// An ATT/GATT client engine over a packet descriptor carrying ATT PDUs: an L2CAP LE socket on
/// the ATT fixed channel (CID 4) for real (see ``L2CAPSocket``), a socketpair to a simulated
/// peripheral in tests.
///
/// It exchanges the MTU, discovers primary services, characteristics and descriptors, reads
/// values, writes Client Characteristic Configuration descriptors, confirms indications and
/// notices the end of the link. Everything it learns about the peer's data comes out of
/// ``events`` as the same ``TransportEvent`` values a replayed capture produces:
/// `connected` when started, `gattValue` for reads, notifications and indications (with the
/// service and characteristic UUIDs found by discovery), `subscriptionChanged` for CCCD writes,
/// and `disconnected` last, after which the stream finishes.
///
/// One request is outstanding at a time (callers are queued); notifications and indications
/// are handled while a request waits.
public actor GATTClient {
    /// The connection's events; finishes after `disconnected`.
    public nonisolated let events: AsyncStream<TransportEvent>
    /// Who is on the other end.
    public nonisolated let peer: GATTPeer
    /// The ATT MTU in use (23 until an exchange agrees on more).
    public private(set) var mtu: UInt16 = 23
    /// What discovery found so far.
    public private(set) var services: [GATTService] = []
    /// How the link ended, once it has.
    public private(set) var linkEnd: PacketChannelEnd?

    private struct PendingRequest {
        var token: Int
        var request: ATTOpcode
        var response: ATTOpcode
        var continuation: CheckedContinuation<Result<[UInt8], GATTError>, Never>
        var timeout: Task<Void, Never>?
    }

    private let channel: PacketChannel
    private let configuration: GATTClientConfiguration
    private let log: BlueZLogSink
    private let now: @Sendable () -> Date
    private let tap: PacketTap?
    private let securityRaiser: (@Sendable (BLESecurityLevel) async throws -> Void)?
    private let eventContinuation: AsyncStream<TransportEvent>.Continuation
    private var started = false
    private var pending: PendingRequest?
    private var requestInProgress = false
    private var requestWaiters: [CheckedContinuation<Void, Never>] = []
    private var nextToken = 0
    private var readerTask: Task<Void, Never>?
    /// Value handle → (service UUID, characteristic UUID), rebuilt after discovery.
    private var valueHandles: [UInt16: (service: BLEUUID, characteristic: BLEUUID)] = [:]
    private var unexpectedPDUs = 0

    /// Creates a client on a connected channel; nothing is sent before ``start()``.
    /// - Parameters:
    ///   - now: the clock stamped on events.
    ///   - tap: sees every ATT PDU sent and received.
    ///   - securityRaiser: raises the link's security (`BT_SECURITY` on a real socket); nil
    ///     where the link cannot be encrypted.
    public init(channel: PacketChannel, peer: GATTPeer, configuration: GATTClientConfiguration = GATTClientConfiguration(),
                log: @escaping BlueZLogSink = { _ in }, now: @escaping @Sendable () -> Date = { Date() },
                tap: PacketTap? = nil, securityRaiser: (@Sendable (BLESecurityLevel) async throws -> Void)? = nil) {
        self.securityRaiser = securityRaiser
        self.channel = channel
        self.peer = peer
        self.configuration = configuration
        self.log = log
        self.now = now
        self.tap = tap
        (events, eventContinuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
    }

    /// Asks for an encrypted link (the device answered Insufficient Authentication or
    /// Encryption); the kernel pairs "Just Works" or uses the stored bond.
    public func raiseSecurity(to level: BLESecurityLevel) async throws(GATTError) {
        guard let securityRaiser else { throw .securityUnavailable }
        do {
            try await securityRaiser(level)
        } catch {
            throw .securityRefused("\(error)")
        }
        log(BlueZLogRecord(level: .info, kind: "gatt-security", message: "\(peer.address): asked for an encrypted link"))
    }

    /// Emits `connected` and starts reading PDUs.
    public func start() {
        guard !started else { return }
        started = true
        eventContinuation.yield(.connected(BLEConnection(
            time: now(), handle: peer.connectionHandle, peerAddress: peer.address, peerAddressType: peer.addressType,
            role: .central)))
        let channel = self.channel
        readerTask = Task {
            for await event in channel.events { self.receive(event) }
        }
    }

    /// Closes the link; `disconnected` (reason 0x16, local host) follows on ``events``.
    public func disconnect() async {
        channel.close()
        if let readerTask {
            await readerTask.value
        } else {
            linkEnded(.closedLocally)
        }
    }

    /// Waits until the link has ended and returns how.
    public func waitUntilDisconnected() async -> PacketChannelEnd {
        await readerTask?.value
        return linkEnd ?? .closedLocally
    }

    // MARK: - Procedures

    /// Exchange MTU: offers ``GATTClientConfiguration/preferredMTU`` and uses the smaller of
    /// both receive MTUs. A peer that does not support the request keeps the default 23.
    @discardableResult
    public func exchangeMTU() async throws(GATTError) -> UInt16 {
        let response: [UInt8]
        do {
            response = try await request(ATTPDU.exchangeMTURequest(configuration.preferredMTU),
                                         expecting: .exchangeMTUResponse)
        } catch .attError(_, _, .requestNotSupported) {
            return mtu
        }
        guard response.count >= 3 else {
            throw .malformedPDU(opcode: .exchangeMTUResponse, bytes: response, offset: response.count,
                                reason: "server MTU missing")
        }
        mtu = max(23, min(configuration.preferredMTU, response.uint16(at: 1)))
        return mtu
    }

    /// Discovers primary services, then each service's characteristics, then each
    /// characteristic's descriptors; keeps and returns the result.
    @discardableResult
    public func discover() async throws(GATTError) -> [GATTService] {
        var found = try await discoverPrimaryServices()
        for index in found.indices {
            found[index].characteristics = try await discoverCharacteristics(of: found[index])
            for characteristicIndex in found[index].characteristics.indices {
                found[index].characteristics[characteristicIndex].descriptors =
                    try await discoverDescriptors(of: found[index].characteristics[characteristicIndex])
            }
        }
        services = found
        rebuildValueHandles()
        return found
    }

    /// Read By Group Type over the whole handle range for primary services (0x2800), until
    /// Attribute Not Found or the last handle.
    public func discoverPrimaryServices() async throws(GATTError) -> [GATTService] {
        var result: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            let response: [UInt8]
            do {
                response = try await request(
                    ATTPDU.readByGroupTypeRequest(start: start, end: 0xFFFF, type: 0x2800),
                    expecting: .readByGroupTypeResponse)
            } catch .attError(_, _, .attributeNotFound) {
                break
            }
            let entries = try Self.entries(of: response, opcode: .readByGroupTypeResponse, allowedLengths: [6, 20])
            var lastEnd = start
            for (offset, entry) in entries {
                let serviceStart = entry.uint16(at: 0)
                let serviceEnd = entry.uint16(at: 2)
                guard serviceStart >= start, serviceEnd >= serviceStart,
                      let uuid = BLEUUID(littleEndianBytes: entry[4...])
                else {
                    throw .malformedPDU(opcode: .readByGroupTypeResponse, bytes: response, offset: offset,
                                        reason: "service range 0x\(String(serviceStart, radix: 16))-0x\(String(serviceEnd, radix: 16)) before the requested start 0x\(String(start, radix: 16)) or inverted")
                }
                result.append(GATTService(uuid: uuid, startHandle: serviceStart, endHandle: serviceEnd))
                lastEnd = serviceEnd
            }
            if lastEnd == 0xFFFF { break }
            start = lastEnd + 1
        }
        return result
    }

    /// Read By Type for characteristic declarations (0x2803) inside the service's range.
    public func discoverCharacteristics(of service: GATTService) async throws(GATTError) -> [GATTCharacteristic] {
        var declarations: [(handle: UInt16, properties: UInt8, valueHandle: UInt16, uuid: BLEUUID)] = []
        var start = service.startHandle
        while start <= service.endHandle {
            let response: [UInt8]
            do {
                response = try await request(
                    ATTPDU.readByTypeRequest(start: start, end: service.endHandle, type: 0x2803),
                    expecting: .readByTypeResponse)
            } catch .attError(_, _, .attributeNotFound) {
                break
            }
            let entries = try Self.entries(of: response, opcode: .readByTypeResponse, allowedLengths: [7, 21])
            var last = start
            for (offset, entry) in entries {
                let handle = entry.uint16(at: 0)
                let valueHandle = entry.uint16(at: 3)
                guard handle >= start, handle <= service.endHandle, valueHandle > handle,
                      let uuid = BLEUUID(littleEndianBytes: entry[5...])
                else {
                    throw .malformedPDU(opcode: .readByTypeResponse, bytes: response, offset: offset,
                                        reason: "declaration 0x\(String(handle, radix: 16)) with value handle 0x\(String(valueHandle, radix: 16)) outside the service range or not after its declaration")
                }
                declarations.append((handle, entry[2], valueHandle, uuid))
                last = handle
            }
            if last == 0xFFFF { break }
            start = last + 1
        }
        return declarations.enumerated().map { index, declaration in
            let end = index + 1 < declarations.count ? declarations[index + 1].handle - 1 : service.endHandle
            return GATTCharacteristic(
                uuid: declaration.uuid, declarationHandle: declaration.handle, valueHandle: declaration.valueHandle,
                endHandle: max(end, declaration.valueHandle),
                properties: GATTCharacteristicProperties(rawValue: declaration.properties))
        }
    }

    /// Find Information over the handles after the characteristic's value.
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws(GATTError) -> [GATTDescriptor] {
        guard characteristic.valueHandle < characteristic.endHandle else { return [] }
        var result: [GATTDescriptor] = []
        var start = characteristic.valueHandle + 1
        while start <= characteristic.endHandle {
            let response: [UInt8]
            do {
                response = try await request(
                    ATTPDU.findInformationRequest(start: start, end: characteristic.endHandle),
                    expecting: .findInformationResponse)
            } catch .attError(_, _, .attributeNotFound) {
                break
            }
            guard response.count >= 2 else {
                throw .malformedPDU(opcode: .findInformationResponse, bytes: response, offset: response.count,
                                    reason: "format byte missing")
            }
            let width: Int
            switch response[1] {
            case 1: width = 2
            case 2: width = 16
            default:
                throw .malformedPDU(opcode: .findInformationResponse, bytes: response, offset: 1,
                                    reason: "unknown format \(response[1]) (1 = 16-bit, 2 = 128-bit UUIDs)")
            }
            let entryLength = 2 + width
            guard response.count > 2, (response.count - 2) % entryLength == 0 else {
                throw .malformedPDU(opcode: .findInformationResponse, bytes: response, offset: 2,
                                    reason: "\(response.count - 2) bytes of entries, not a multiple of \(entryLength)")
            }
            var last = start
            for offset in stride(from: 2, to: response.count, by: entryLength) {
                let handle = response.uint16(at: offset)
                guard handle >= start, handle <= characteristic.endHandle,
                      let uuid = BLEUUID(littleEndianBytes: response[(offset + 2)..<(offset + entryLength)])
                else {
                    throw .malformedPDU(opcode: .findInformationResponse, bytes: response, offset: offset,
                                        reason: "handle 0x\(String(handle, radix: 16)) outside the requested range")
                }
                result.append(GATTDescriptor(handle: handle, uuid: uuid))
                last = handle
            }
            if last == 0xFFFF { break }
            start = last + 1
        }
        return result
    }

    /// Reads a characteristic's value (with Read Blob for values longer than MTU - 1) and emits
    /// it as a `gattValue` of kind `read`.
    public func read(_ characteristic: GATTCharacteristic) async throws(GATTError) -> [UInt8] {
        let value = try await readValue(handle: characteristic.valueHandle)
        emitValue(handle: characteristic.valueHandle, value: value, kind: .read)
        return value
    }

    /// Reads the first characteristic with this UUID found by discovery; nil if there is none.
    public func read(characteristic uuid: BLEUUID) async throws(GATTError) -> [UInt8]? {
        guard let characteristic = services.lazy.flatMap(\.characteristics).first(where: { $0.uuid == uuid })
        else { return nil }
        return try await read(characteristic)
    }

    /// Reads any attribute value by handle (no event is emitted).
    public func readValue(handle: UInt16) async throws(GATTError) -> [UInt8] {
        let first = try await request(ATTPDU.readRequest(handle: handle), expecting: .readResponse)
        var value = Array(first.dropFirst())
        let fullPart = Int(mtu) - 1
        guard value.count == fullPart else { return value }
        while value.count < 512 {
            let part: [UInt8]
            do {
                part = try await request(ATTPDU.readBlobRequest(handle: handle, offset: UInt16(value.count)),
                                         expecting: .readBlobResponse)
            } catch .attError(_, _, .attributeNotLong) {
                break
            } catch .attError(_, _, .invalidOffset) {
                break
            }
            value.append(contentsOf: part.dropFirst())
            if part.count - 1 < fullPart { break }
        }
        return value
    }

    /// Writes the characteristic's CCCD to enable notifications or indications, and emits
    /// `subscriptionChanged`.
    public func subscribe(to characteristic: GATTCharacteristic, mode: GATTSubscriptionMode) async throws(GATTError) {
        try await writeClientConfiguration(of: characteristic, value: mode.configurationValue)
    }

    /// Writes `00 00` to the characteristic's CCCD and emits `subscriptionChanged`.
    public func unsubscribe(from characteristic: GATTCharacteristic) async throws(GATTError) {
        try await writeClientConfiguration(of: characteristic, value: 0)
    }

    /// Enables indications (when the characteristic has the indicate property) or
    /// notifications (notify property) for every discovered characteristic whose UUID is in
    /// `characteristics`, discovering first if nothing was discovered yet. A peer refusing one
    /// CCCD write (e.g. it wants a bond) is reported in the outcome and the others go on;
    /// timeouts and disconnection end the whole call.
    @discardableResult
    public func subscribeToAll(characteristics: Set<BLEUUID>) async throws(GATTError) -> [GATTSubscriptionOutcome] {
        if services.isEmpty { try await discover() }
        var outcomes: [GATTSubscriptionOutcome] = []
        for service in services {
            for characteristic in service.characteristics where characteristics.contains(characteristic.uuid) {
                let mode: GATTSubscriptionMode
                if characteristic.properties.contains(.indicate) {
                    mode = .indications
                } else if characteristic.properties.contains(.notify) {
                    mode = .notifications
                } else {
                    outcomes.append(.init(serviceUUID: service.uuid, characteristic: characteristic, result: .notSubscribable))
                    continue
                }
                guard characteristic.clientConfigurationHandle != nil else {
                    outcomes.append(.init(serviceUUID: service.uuid, characteristic: characteristic,
                                          result: .noClientConfiguration))
                    continue
                }
                do {
                    try await subscribe(to: characteristic, mode: mode)
                    outcomes.append(.init(serviceUUID: service.uuid, characteristic: characteristic,
                                          result: .subscribed(mode)))
                } catch .attError(_, _, let code) {
                    log(BlueZLogRecord(
                        level: .notice, kind: "gatt-subscribe-refused",
                        message: "\(peer.address) refused the subscription to \(characteristic.uuid): \(code)"
                            + (code.needsSecurity ? "; the device wants an encrypted link (pair it first)" : "")))
                    outcomes.append(.init(serviceUUID: service.uuid, characteristic: characteristic, result: .refused(code)))
                }
            }
        }
        return outcomes
    }

    /// The usual start of a session with a health device: Exchange MTU, full discovery, a read
    /// of each discovered characteristic in `reading` that has the read property (values come
    /// out as `read` events; a refused read is logged and skipped), then
    /// ``subscribeToAll(characteristics:)`` for `subscribingTo`.
    @discardableResult
    public func prepare(reading: Set<BLEUUID> = [], subscribingTo: Set<BLEUUID>) async throws(GATTError)
        -> [GATTSubscriptionOutcome]
    {
        try await exchangeMTU()
        try await discover()
        for service in services {
            for characteristic in service.characteristics
            where reading.contains(characteristic.uuid) && characteristic.properties.contains(.read) {
                do {
                    _ = try await read(characteristic)
                } catch .attError(_, _, let code) {
                    log(BlueZLogRecord(level: .info, kind: "gatt-read-refused",
                                       message: "\(peer.address) refused reading \(characteristic.uuid): \(code)"))
                }
            }
        }
        return try await subscribeToAll(characteristics: subscribingTo)
    }

    /// Writes a characteristic's value: a Write Request answered by a Write Response
    /// (`withResponse`), or a Write Command. A Write Command must fit one PDU (MTU - 3 bytes);
    /// a longer value with response is written as a long write (``writeLong(_:handle:)``), up to
    /// 512 bytes; other lengths are refused with ``GATTError/valueTooLong(length:limit:)``. Emits
    /// a `gattValue` of kind `write` or `writeWithoutResponse`, as a capture shows it.
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic, withResponse: Bool) async throws(GATTError) {
        let limit = Int(mtu) - 3
        if withResponse, value.count > limit {
            try await writeLong(value, handle: characteristic.valueHandle)
        } else if value.count > limit {
            throw .valueTooLong(length: value.count, limit: limit)
        } else if withResponse {
            _ = try await request(ATTPDU.writeRequest(handle: characteristic.valueHandle, value: value),
                                  expecting: .writeResponse)
        } else {
            guard started else { throw .notStarted }
            if let linkEnd { throw .disconnected(linkEnd) }
            do throws(PacketChannelError) {
                try send(ATTPDU.writeCommand(handle: characteristic.valueHandle, value: value))
            } catch {
                throw .channel(error)
            }
        }
        emitValue(handle: characteristic.valueHandle, value: value, kind: withResponse ? .write : .writeWithoutResponse)
    }

    /// A long write: the value in Prepare Write Requests of MTU - 5 bytes each (every echo must
    /// match what was sent), then Execute Write. A mismatching echo or a refused part cancels
    /// the queued parts (Execute Write with flags 0) and throws.
    public func writeLong(_ value: [UInt8], handle: UInt16) async throws(GATTError) {
        guard value.count <= ATTPDU.maximumAttributeValueLength else {
            throw .valueTooLong(length: value.count, limit: ATTPDU.maximumAttributeValueLength)
        }
        let partLength = Int(mtu) - 5
        var offset = 0
        repeat {
            let part = Array(value[offset..<min(offset + partLength, value.count)])
            let sent = ATTPDU.prepareWriteRequest(handle: handle, offset: UInt16(offset), part: part)
            let echo: [UInt8]
            do {
                echo = try await request(sent, expecting: .prepareWriteResponse)
            } catch {
                if case .attError = error { _ = try? await request(ATTPDU.executeWriteRequest(execute: false), expecting: .executeWriteResponse) }
                throw error
            }
            guard Array(echo.dropFirst()) == Array(sent.dropFirst()) else {
                _ = try? await request(ATTPDU.executeWriteRequest(execute: false), expecting: .executeWriteResponse)
                throw .malformedPDU(opcode: .prepareWriteResponse, bytes: echo, offset: 0,
                                    reason: "the echo of the part at offset \(offset) differs from what was sent")
            }
            offset += part.count
        } while offset < value.count
        _ = try await request(ATTPDU.executeWriteRequest(execute: true), expecting: .executeWriteResponse)
    }

    private func writeClientConfiguration(of characteristic: GATTCharacteristic, value: UInt16) async throws(GATTError) {
        guard let descriptor = characteristic.clientConfigurationHandle else {
            throw .noClientConfiguration(characteristic: characteristic.uuid)
        }
        _ = try await request(ATTPDU.writeRequest(handle: descriptor, value: value.littleEndianBytes(count: 2)),
                              expecting: .writeResponse)
        let owner = valueHandles[characteristic.valueHandle]
        eventContinuation.yield(.subscriptionChanged(GATTSubscription(
            time: now(), connection: peer.connectionHandle, peerAddress: peer.address,
            serviceUUID: owner?.service, characteristicUUID: characteristic.uuid,
            characteristicHandle: characteristic.valueHandle, descriptorHandle: descriptor, configuration: value)))
    }

    // MARK: - Requests

    /// Sends a request and waits for its response (returned whole, opcode included) or an
    /// Error Response for it (thrown as ``GATTError/attError(request:handle:code:)``).
    private func request(_ pdu: [UInt8], expecting response: ATTOpcode) async throws(GATTError) -> [UInt8] {
        guard started else { throw .notStarted }
        if requestInProgress {
            await withCheckedContinuation { requestWaiters.append($0) }
        }
        requestInProgress = true
        defer {
            if requestWaiters.isEmpty {
                requestInProgress = false
            } else {
                requestWaiters.removeFirst().resume()
            }
        }
        if let linkEnd { throw .disconnected(linkEnd) }
        nextToken += 1
        let token = nextToken
        let requestOpcode = ATTOpcode(rawValue: pdu[0])
        let timeout = configuration.requestTimeout
        let result = await withCheckedContinuation { continuation in
            do throws(PacketChannelError) {
                try send(pdu)
            } catch {
                continuation.resume(returning: Result<[UInt8], GATTError>.failure(.channel(error)))
                return
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { self.requestTimedOut(token: token) }
            }
            pending = PendingRequest(token: token, request: requestOpcode, response: response,
                                     continuation: continuation, timeout: timer)
        }
        return try result.get()
    }

    private func requestTimedOut(token: Int) {
        guard let pending, pending.token == token else { return }
        self.pending = nil
        log(BlueZLogRecord(
            level: .warning, kind: "gatt-timeout",
            message: "\(peer.address) did not answer \(pending.request) within \(configuration.requestTimeout); "
                + "closing the link"))
        pending.continuation.resume(returning: .failure(.timedOut(request: pending.request,
                                                                   after: configuration.requestTimeout)))
        // After an ATT transaction timeout no further ATT PDU may be sent on this bearer.
        channel.close()
    }

    // MARK: - Incoming PDUs

    private func receive(_ event: PacketChannelEvent) {
        switch event {
        case .packet(let pdu):
            receive(pdu: pdu)
        case .end(let end):
            linkEnded(end)
        }
    }

    private func send(_ pdu: [UInt8]) throws(PacketChannelError) {
        try channel.send(pdu)
        tap?(.sent, pdu)
    }

    private func receive(pdu: [UInt8]) {
        tap?(.received, pdu)
        guard let first = pdu.first else { return }
        let opcode = ATTOpcode(rawValue: first)
        switch opcode {
        case .handleValueNotification, .handleValueIndication:
            guard pdu.count >= 3 else {
                unexpectedPDUs += 1
                return
            }
            let isIndication = opcode == .handleValueIndication
            emitValue(handle: pdu.uint16(at: 1), value: Array(pdu[3...]), kind: isIndication ? .indication : .notification)
            if isIndication { try? send(ATTPDU.handleValueConfirmation) }
        case .errorResponse:
            guard pdu.count >= 5, let pending, pending.request.rawValue == pdu[1] else {
                unexpectedPDUs += 1
                return
            }
            resolve(.failure(.attError(request: pending.request, handle: pdu.uint16(at: 2),
                                       code: ATTErrorCode(rawValue: pdu[4]))))
        case .exchangeMTURequest:
            // The peripheral asks for our receive MTU; answer and agree on the smaller one.
            if pdu.count >= 3 {
                mtu = max(23, min(configuration.preferredMTU, pdu.uint16(at: 1)))
            }
            try? send(ATTPDU.exchangeMTUResponse(configuration.preferredMTU))
        default:
            if let pending, pending.response == opcode {
                resolve(.success(pdu))
            } else if opcode.isRequest {
                // This client hosts no GATT server.
                let handle = pdu.count >= 3 ? pdu.uint16(at: 1) : 0
                try? send(ATTPDU.errorResponse(request: first, handle: handle, code: .requestNotSupported))
            } else {
                unexpectedPDUs += 1
            }
        }
    }

    private func resolve(_ result: Result<[UInt8], GATTError>) {
        guard let pending else { return }
        self.pending = nil
        pending.timeout?.cancel()
        pending.continuation.resume(returning: result)
    }

    private func emitValue(handle: UInt16, value: [UInt8], kind: GATTValueKind) {
        let owner = valueHandles[handle]
        eventContinuation.yield(.gattValue(GATTValue(
            time: now(), connection: peer.connectionHandle, peerAddress: peer.address,
            serviceUUID: owner?.service, characteristicUUID: owner?.characteristic, handle: handle,
            value: value, kind: kind)))
    }

    private func linkEnded(_ end: PacketChannelEnd) {
        guard linkEnd == nil else { return }
        linkEnd = end
        if let pending {
            self.pending = nil
            pending.timeout?.cancel()
            pending.continuation.resume(returning: .failure(.disconnected(end)))
        }
        eventContinuation.yield(.disconnected(BLEDisconnection(
            time: now(), handle: peer.connectionHandle, peerAddress: peer.address, reason: Self.hciReason(for: end))))
        eventContinuation.finish()
    }

    /// The HCI disconnection reason behind a socket's end, as the kernel maps reasons to errno
    /// values: ETIMEDOUT 0x08 (supervision timeout), ECONNABORTED 0x16 (local host), EACCES
    /// 0x05 (authentication failure); a peer's close or ECONNRESET is 0x13 (remote user).
    static func hciReason(for end: PacketChannelEnd) -> UInt8 {
        let reason: HCIStatus = switch end {
        case .closedLocally: .localHostTerminated
        case .closedByPeer: .remoteUserTerminated
        case .failed(let code):
            switch code {
            case ETIMEDOUT: .connectionTimeout
            case ECONNABORTED: .localHostTerminated
            case EACCES: .authenticationFailure
            default: .remoteUserTerminated
            }
        }
        return reason.rawValue
    }

    private func rebuildValueHandles() {
        valueHandles = [:]
        for service in services {
            for characteristic in service.characteristics {
                valueHandles[characteristic.valueHandle] = (service.uuid, characteristic.uuid)
            }
        }
    }

    /// Splits a Read By Type / Read By Group Type response (opcode, length, entries) into its
    /// entries with their offsets.
    private static func entries(of response: [UInt8], opcode: ATTOpcode, allowedLengths: Set<Int>)
        throws(GATTError) -> [(offset: Int, entry: [UInt8])]
    {
        guard response.count >= 2 else {
            throw .malformedPDU(opcode: opcode, bytes: response, offset: response.count, reason: "length byte missing")
        }
        let length = Int(response[1])
        guard allowedLengths.contains(length) else {
            throw .malformedPDU(opcode: opcode, bytes: response, offset: 1,
                                reason: "entry length \(length), expected one of \(allowedLengths.sorted())")
        }
        guard response.count > 2, (response.count - 2) % length == 0 else {
            throw .malformedPDU(opcode: opcode, bytes: response, offset: 2,
                                reason: "\(response.count - 2) bytes of entries, not a multiple of \(length)")
        }
        return stride(from: 2, to: response.count, by: length).map { ($0, Array(response[$0..<($0 + length)])) }
    }
}
