import AdapterKit
import Dispatch
import Foundation
import Synchronization
import Transport

extension ExternalAdapterMain {
    /// How long a delivered batch waits for its `committed` lines before the device is told to
    /// keep its records (a record the daemon rejected is never committed).
    public static let commitWait: Duration = .seconds(30)

    /// Runs a conversing adapter as a protocol-2 plugin that claims connectable devices
    /// (`"connect":true`): the daemon connects, and the adapter's conversation runs over the
    /// plugin protocol's requests, then the process exits. The whole `main.swift` is
    ///
    /// ```swift
    /// ExternalAdapterMain.run(conversing: DSD6BandAdapter())
    /// ```
    ///
    /// Such a plugin gets no advertisements (protocol 2 gives a connecting plugin the
    /// conversation only), so an adapter that also decodes broadcasts stays a protocol-1 plugin
    /// with ``run(_:)`` for those.
    public static func run(conversing adapter: some ConversingAdapter) -> Never {
        let status = serveConversations(adapter, arguments: Array(CommandLine.arguments.dropFirst()),
                                        readLine: { Swift.readLine(strippingNewline: true) },
                                        writeLine: StandardStream.output.writeLine,
                                        writeError: StandardStream.error.writeLine)
        exit(status)
    }

    /// ``run(conversing:)`` with its I/O passed in; returns the exit status. `readLine` is called
    /// from a thread of its own until it returns nil (the end of stdin).
    public static func serveConversations(_ adapter: some ConversingAdapter, arguments: [String],
                                          readLine: @escaping @Sendable () -> String?,
                                          writeLine: @escaping @Sendable (String) -> Void,
                                          writeError: (String) -> Void) -> Int32 {
        switch arguments {
        case ["--describe"]:
            writeLine(ExternalDescriptorCodec.encode(ExternalPluginDescription(
                descriptor: adapter.descriptor, protocolVersion: 2, connects: true)))
            return 0
        case ["--run"]:
            break
        default:
            writeError("usage: \(ExternalAdapterProtocol.executableName(for: adapter.descriptor.id)) --describe | --run"
                + "  (ingestd external adapter protocol 2, connecting)")
            return usageExitStatus
        }
        let link = PluginSideConversationLink(writeLine: writeLine)
        let reader = Thread {
            while let line = readLine() { link.receive(line) }
            link.inputEnded()
        }
        reader.start()
        let finished = DispatchSemaphore(value: 0)
        Task {
            await converse(adapter, over: link, writeLine: writeLine)
            writeLine(ExternalOutputLine.done)
            finished.signal()
        }
        finished.wait()
        return 0
    }

    /// Waits for the device, the connection and the table, then runs the conversation.
    private static func converse(_ adapter: some ConversingAdapter, over link: PluginSideConversationLink,
                                 writeLine: @escaping @Sendable (String) -> Void) async {
        guard let (traits, zone) = await link.connection() else { return }
        let id = adapter.descriptor.id
        let context = AdapterContext(timeZone: zone, source: id, now: link.clock)
        let conversation = adapter.makeConversation(for: traits, context: context)
        do {
            try await conversation.run(over: link) { output in
                for rejection in output.rejections {
                    writeLine(ExternalOutputLine.log(.warning, "\(rejection.reason): \(rejection.detail)"))
                }
                guard !output.records.isEmpty else { return DeliveryReceipt(stored: 0, held: 0) }
                let uuids = output.records.map(\.recordUUID)
                link.expectCommits(uuids)
                for record in output.records { writeLine(ExternalOutputLine.record(record)) }
                return await link.receipt(for: uuids, within: commitWait)
            }
        } catch {
            writeLine(ExternalOutputLine.log(.warning, "\(traits.address): conversation ended: \(error)"))
        }
    }
}

/// A conversation's link for a plugin: each step is a request line to the daemon, answered by
/// its `result` or `failed` line; notifications and indications queue (at most
/// ``maximumQueued``, the oldest dropped) until the conversation waits for them. The clock is
/// the last time the daemon wrote (the capture's in replay).
final class PluginSideConversationLink: GATTConversationLink, Sendable {
    /// Values kept for later waits.
    static let maximumQueued = 256

    private typealias Answer = Result<[UInt8]?, GATTConversationError>

    private struct Request {
        var operation: String
        var characteristic: BLEUUID?
        var continuation: CheckedContinuation<Answer, Never>
    }

    private struct State {
        var device: BLEDeviceTraits?
        var zone = TimeZone.current
        var address: BLEAddress?
        var mtu = 23
        var database: GATTDatabase?
        var clock: Date?
        var ended = false
        var nextID = 1
        var requests: [Int: Request] = [:]
        var queued: [GATTValue] = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        /// Counts the lines taken (and the end of input), so a wait knows whether it missed one.
        var generation = 0
        /// Waits whose time ran out before they began waiting.
        var expired: Set<Int> = []
        /// Committed uuids of delivered records: whether their batch was held.
        var committed: [UUID: Bool] = [:]
        var expected: Set<UUID> = []
    }

    private let state = Mutex(State())
    private let writeLine: @Sendable (String) -> Void

    init(writeLine: @escaping @Sendable (String) -> Void) {
        self.writeLine = writeLine
    }

    var peerAddress: BLEAddress { state.withLock { $0.address ?? $0.device?.address ?? BLEAddress(truncatingIfNeeded: 0) } }

    /// The conversation's clock, for `AdapterContext.now`.
    var clock: @Sendable () -> Date { { [self] in state.withLock { $0.clock } ?? Date() } }

    // MARK: - Daemon lines

    /// Takes one line of stdin.
    func receive(_ line: String) {
        if line.allSatisfy(\.isWhitespace) { return }
        let message: ExternalConversationInput
        do {
            message = try ExternalConversationInputCodec.decode(line)
        } catch {
            if case .device(.ble(let traits), let zone)? = try? ExternalInputCodec.decode(line) {
                state.withLock { state in
                    state.device = traits
                    if let zone { state.zone = zone }
                }
                wakeAll()
            } else {
                writeLine(ExternalOutputLine.log(.warning, "ignored input line: \(error)"))
            }
            return
        }
        var answered: (CheckedContinuation<Answer, Never>, Answer)?
        state.withLock { state in
            switch message {
            case .connected(let address, let time, let mtu):
                state.address = address
                state.mtu = mtu
                state.clock = time
            case .database(let database):
                state.database = database
            case .value(var value):
                value.peerAddress = state.address
                state.clock = max(state.clock ?? value.time, value.time)
                if state.queued.count >= Self.maximumQueued { state.queued.removeFirst() }
                state.queued.append(value)
            case .result(.number(let id), let value):
                if let request = state.requests.removeValue(forKey: id) { answered = (request.continuation, .success(value)) }
            case .failed(.number(let id), let failure):
                if let request = state.requests.removeValue(forKey: id) {
                    answered = (request.continuation, .failure(Self.error(failure, request: request, peer: state.address)))
                }
            case .committed(let uuids, _, let held, let deviceMayForget):
                for uuid in uuids where state.expected.contains(uuid) {
                    state.committed[uuid] = held > 0 || !deviceMayForget
                }
            case .disconnected(_, let time):
                state.ended = true
                state.clock = max(state.clock ?? time, time)
            case .result, .failed:
                break  // an id this link never sends
            }
        }
        if let (continuation, answer) = answered { continuation.resume(returning: answer) }
        if case .disconnected = message { failPendingRequests() }
        wakeAll()
    }

    /// stdin ended: the daemon is done with the device.
    func inputEnded() {
        state.withLock { $0.ended = true }
        failPendingRequests()
        wakeAll()
    }

    /// The device line, the connection and the table, once all arrived (nil when stdin ended first).
    func connection() async -> (BLEDeviceTraits, TimeZone)? {
        while true {
            let (ready, seen) = state.withLock { state -> ((BLEDeviceTraits, TimeZone)??, Int) in
                if let device = state.device, state.address != nil, state.database != nil {
                    return (.some((device, state.zone)), state.generation)
                }
                return (state.ended ? .some(nil) : nil, state.generation)
            }
            if let ready { return ready }
            await waitForLine(after: seen, atMost: .seconds(1))
        }
    }

    // MARK: - Commits

    /// Records about to be printed: their `committed` lines are looked for.
    func expectCommits(_ uuids: [UUID]) {
        state.withLock { $0.expected.formUnion(uuids) }
    }

    /// The receipt of a delivered batch: stored when every record was committed without a hold;
    /// held (the device keeps them) when one was held, or is not committed within `limit`, or
    /// stdin ended first.
    func receipt(for uuids: [UUID], within limit: Duration) async -> DeliveryReceipt {
        let deadline = ContinuousClock.now + limit
        while true {
            let (outcome, seen) = state.withLock { state -> (DeliveryReceipt?, Int) in
                let held = uuids.filter { state.committed[$0] ?? true }.count
                let answered = uuids.allSatisfy { state.committed[$0] != nil }
                guard answered || state.ended || ContinuousClock.now >= deadline else { return (nil, state.generation) }
                for uuid in uuids {
                    state.committed[uuid] = nil
                    state.expected.remove(uuid)
                }
                return (DeliveryReceipt(stored: uuids.count - held, held: held), state.generation)
            }
            if let outcome { return outcome }
            await waitForLine(after: seen, atMost: min(.milliseconds(250), max(.zero, deadline - .now)))
        }
    }

    // MARK: - GATTConversationLink

    func discover() async throws(GATTConversationError) -> GATTDatabase {
        guard let database = state.withLock({ $0.database }) else { throw .disconnected("no database from the daemon") }
        return database
    }

    func mtu() async -> Int { state.withLock { $0.mtu } }

    func now() async -> Date { clock() }

    func read(_ characteristic: BLEUUID) async throws(GATTConversationError) -> [UInt8] {
        try await send("read", characteristic) { id in
            PluginRequest(id: .number(id), operation: .read(characteristic))
        } ?? []
    }

    func write(_ value: [UInt8], to characteristic: BLEUUID, withResponse: Bool) async throws(GATTConversationError) {
        _ = try await send("write", characteristic) { id in
            PluginRequest(id: .number(id), operation: .write(characteristic, value: value, withResponse: withResponse))
        }
    }

    func subscribe(to characteristic: BLEUUID, mode: GATTNotificationMode) async throws(GATTConversationError) {
        _ = try await send("subscribe", characteristic) { id in
            PluginRequest(id: .number(id), operation: .subscribe(characteristic, mode: mode))
        }
    }

    func unsubscribe(from characteristic: BLEUUID) async throws(GATTConversationError) {
        _ = try await send("unsubscribe", characteristic) { id in
            PluginRequest(id: .number(id), operation: .unsubscribe(characteristic))
        }
    }

    func nextValue(timeout: Duration, matching: @escaping @Sendable (GATTValue) -> Bool)
        async throws(GATTConversationError) -> GATTValue
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (found, ended, seen) = state.withLock { state -> (GATTValue?, Bool, Int) in
                if let index = state.queued.firstIndex(where: matching) {
                    return (state.queued.remove(at: index), false, state.generation)
                }
                return (nil, state.ended, state.generation)
            }
            if let found { return found }
            if ended { throw .disconnected("while waiting for a value") }
            let now = ContinuousClock.now
            if now >= deadline { throw .timedOut(waitingFor: "matching value", after: timeout) }
            await waitForLine(after: seen, atMost: deadline - now)
        }
    }

    func disconnect() async {
        _ = try? await send("disconnect", nil) { id in PluginRequest(id: .number(id), operation: .disconnect) }
    }

    func endReason() async -> String? { state.withLock { $0.ended } ? "the daemon said the connection ended" : nil }

    // MARK: - Requests and waits

    /// Prints one request and waits for its answer (a read's value, nil otherwise).
    private func send(_ operation: String, _ characteristic: BLEUUID?, _ make: (Int) -> PluginRequest)
        async throws(GATTConversationError) -> [UInt8]?
    {
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            let line = state.withLock { state -> String? in
                guard !state.ended else { return nil }
                let id = state.nextID
                state.nextID += 1
                state.requests[id] = Request(operation: operation, characteristic: characteristic, continuation: continuation)
                return PluginRequestCodec.encode(make(id))
            }
            guard let line else {
                continuation.resume(returning: .failure(.disconnected("the daemon ended the connection")))
                return
            }
            writeLine(line)
        }
        return try answer.get()
    }

    private func failPendingRequests() {
        let pending = state.withLock { state in
            defer { state.requests = [:] }
            return Array(state.requests.values)
        }
        for request in pending {
            request.continuation.resume(returning: .failure(.disconnected("the daemon ended the connection")))
        }
    }

    /// Returns once a line arrived after the state was looked at (`seen`: its generation then),
    /// or after `limit`.
    private func waitForLine(after seen: Int, atMost limit: Duration) async {
        let token = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            if !Task.isCancelled { self.wake(token) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let missed = state.withLock { state -> Bool in
                if state.generation != seen || state.expired.remove(token) != nil { return true }
                state.waiters[token] = continuation
                return false
            }
            if missed { continuation.resume() }
        }
        timer.cancel()
        _ = state.withLock { $0.expired.remove(token) }
    }

    private func wake(_ token: Int) {
        let waiter = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: token) else {
                state.expired.insert(token)
                return CheckedContinuation<Void, Never>?.none
            }
            return waiter
        }
        waiter?.resume()
    }

    private func wakeAll() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The conversation error for a `failed` line.
    private static func error(_ failure: PluginRequestFailure, request: Request, peer: BLEAddress?) -> GATTConversationError {
        let characteristic = request.characteristic ?? BLEUUID(0x0000)
        switch failure.error {
        case "att-error": return .attError(operation: request.operation, characteristic: characteristic, code: failure.code ?? 0)
        case "timeout": return .timedOut(waitingFor: "the answer to \(request.operation): \(failure.message)", after: .zero)
        case "disconnected", "not-connected": return .disconnected(failure.message)
        case "no-such-characteristic": return .characteristicMissing(characteristic)
        case "not-permitted": return .operationNotPermitted(operation: request.operation, characteristic: characteristic)
        case "pairing-needed":
            return .pairingNeeded(device: peer ?? BLEAddress(truncatingIfNeeded: 0), operation: request.operation,
                                  characteristic: characteristic)
        case "not-in-capture": return .notInCapture(failure.message)
        default: return .transport("\(failure.error): \(failure.message)")
        }
    }
}
