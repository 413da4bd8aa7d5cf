import AdapterKit
import ExternalAdapterProtocol
import Foundation
import Synchronization
import Transport

/// A protocol-2 plugin's conversation with one connected device: the plugin's process runs for
/// the connection and talks to the device through the conversation link (the BlueZ GATT client
/// live, a capture in replay), the same link built-in conversations use.
///
/// The plugin gets `connected` and the discovered `database`, then the notifications and
/// indications of the characteristics it subscribed to, and an answer (`result` or `failed`) to
/// each request by its id. Requests are checked by the runner (shape, size, rate, pending count,
/// device) before they reach the device, and run one at a time. Records the plugin prints are
/// delivered for commit as they come, and the plugin is told after each commit which of them
/// were committed (`committed`), so it erases the device's memory only after that.
///
/// The connection ends when the plugin asks (`disconnect`), prints `done`, exits, or is killed
/// for its output; or when the link ends: the plugin is told `disconnected` once its requests
/// have settled (a replayed capture's link has ended from the start: it only answers), its input
/// is closed, and it has `finishTimeout` to print its last records and exit. Before the plugin
/// printed anything, settling takes `startAllowance` (its process may still be starting), so a
/// plugin that claims a connection and stays silent holds a replay for that long, not for
/// `idleTimeout`.
final class PluginConversation: GATTConversation {
    /// After the link ended, `disconnected` waits until no request came for this long.
    static let settleTime: Duration = .milliseconds(300)
    /// After the link ended, `disconnected` waits this long for a plugin that has not printed
    /// a line yet (a slow start on a loaded machine).
    static let startAllowance: Duration = .seconds(5)
    /// With neither a request nor a value for this long, the conversation disconnects.
    static let idleTimeout: Duration = .seconds(600)

    private let adapter: ExternalAdapter
    private let device: BLEDeviceTraits
    private let timeZone: TimeZone

    init(adapter: ExternalAdapter, device: BLEDeviceTraits, timeZone: TimeZone) {
        self.adapter = adapter
        self.device = device
        self.timeZone = timeZone
    }

    /// What the conversation's loop waits for.
    enum Event: Sendable {
        case runner(PluginRunnerEvent)
        case value(GATTValue)
        case linkEnded(String)
        case tick
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        // A device whose table cannot be read is not given to the plugin.
        let database = try await link.discover()
        let (events, continuation) = AsyncStream<Event>.makeStream()
        let configuration = adapter.configuration
        let runner = adapter.makeRunner(for: .ble(device), timeZone: timeZone, conversation: true,
                                        listener: { continuation.yield(.runner($0)) })
        let pump = ValuePump(link: link, events: continuation, limit: configuration.maximumQueuedValues)
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                continuation.yield(.tick)
            }
        }
        defer {
            ticker.cancel()
            pump.stop()
            continuation.finish()
        }
        runner.start()
        runner.submitControl(ExternalConversationLine.connected(address: link.peerAddress, time: await link.now(),
                                                                mtu: await link.mtu()))
        runner.submitControl(ExternalConversationLine.database(database))

        var session = Session(runner: runner, link: link, database: database, pump: pump)
        var iterator = events.makeAsyncIterator()
        do {
            // Connected: requests, values and records until the plugin or the link ends it.
            talking: while let event = await iterator.next() {
                switch event {
                case .runner(.request(let request)):
                    session.lastActivity = .now
                    session.pluginSpoke = true
                    await session.answer(request)
                    runner.requestAnswered()
                case .runner(.output):
                    session.pluginSpoke = true
                    try await session.deliverOutput(deliver)
                case .runner(.done), .runner(.finished):
                    break talking
                case .value(let value):
                    pump.consumed()
                    session.lastActivity = .now
                    if !session.toldDisconnected { runner.submitControl(ExternalConversationLine.value(value)) }
                case .linkEnded(let reason):
                    session.linkEnded = session.linkEnded ?? reason
                case .tick:
                    if session.linkEnded == nil, let reason = await link.endReason() { session.linkEnded = reason }
                    let quiet = ContinuousClock.now - session.lastActivity
                    let settled = quiet >= (session.pluginSpoke ? Self.settleTime : Self.startAllowance)
                    if session.linkEnded != nil, settled, pump.inFlight == 0 { break talking }
                    if quiet >= Self.idleTimeout { break talking }
                }
                if session.toldDisconnected { break talking }
            }

            // Ending: the link is closed, the plugin told and its input ended; its last records come in.
            if session.linkEnded == nil { await link.disconnect() }
            pump.stop()
            if !session.toldDisconnected && !runner.isDone {
                runner.submitControl(ExternalConversationLine.disconnected(reason: session.linkEnded ?? "ended by ingestd",
                                                                           time: await link.now()))
            }
            runner.closeInput()
            let deadline = ContinuousClock.now + configuration.finishTimeout
            var stopped = false
            ending: while !runner.hasFinished, let event = await iterator.next() {
                switch event {
                case .runner(.request(let request)):
                    runner.submitControl(ExternalConversationLine.failed(
                        id: request.id, PluginRequestFailure(error: "not-connected", message: "the connection has ended")))
                    runner.requestAnswered()
                case .runner(.output):
                    try await session.deliverOutput(deliver)
                case .runner(.finished):
                    break
                case .value:
                    pump.consumed()
                case .runner(.done), .linkEnded:
                    continue
                case .tick:
                    if !stopped && ContinuousClock.now >= deadline {
                        stopped = true
                        runner.stop()
                    } else if ContinuousClock.now >= deadline + .seconds(2) {
                        break ending
                    }
                    continue
                }
                if runner.hasFinished { break ending }
            }
            try await session.deliverOutput(deliver)
        } catch {
            runner.stop()
            throw error
        }
        runner.stop()
    }

    /// The conversation's state and its steps.
    private struct Session {
        let runner: PluginRunner
        let link: any GATTConversationLink
        let database: GATTDatabase
        let pump: ValuePump
        var lastActivity = ContinuousClock.now
        /// Why the link ended, once it did.
        var linkEnded: String?
        var toldDisconnected = false
        /// The plugin printed a request or a record (it has started).
        var pluginSpoke = false

        init(runner: PluginRunner, link: any GATTConversationLink, database: GATTDatabase, pump: ValuePump) {
            self.runner = runner
            self.link = link
            self.database = database
            self.pump = pump
        }

        /// Runs one request on the link and answers it.
        mutating func answer(_ request: PluginRequest) async {
            let id = request.id
            do throws(GATTConversationError) {
                switch request.operation {
                case .read(let uuid):
                    let value = try await link.read(uuid)
                    runner.submitControl(ExternalConversationLine.result(id: id, value: value))
                case .write(let uuid, let value, let withResponse):
                    try await link.write(value, to: uuid, withResponse: withResponse)
                    runner.submitControl(ExternalConversationLine.result(id: id))
                case .subscribe(let uuid, let mode):
                    guard let characteristic = database.characteristic(uuid) else { throw .characteristicMissing(uuid) }
                    let chosen = mode ?? (characteristic.properties & 0x20 != 0 ? .indications : .notifications)
                    try await link.subscribe(to: uuid, mode: chosen)
                    pump.add(uuid)
                    runner.submitControl(ExternalConversationLine.result(id: id))
                case .unsubscribe(let uuid):
                    pump.remove(uuid)
                    try await link.unsubscribe(from: uuid)
                    runner.submitControl(ExternalConversationLine.result(id: id))
                case .disconnect:
                    await link.disconnect()
                    runner.submitControl(ExternalConversationLine.result(id: id))
                    runner.submitControl(ExternalConversationLine.disconnected(reason: "the plugin asked", time: await link.now()))
                    linkEnded = "the plugin asked"
                    toldDisconnected = true
                }
            } catch {
                runner.submitControl(ExternalConversationLine.failed(id: id, PluginRequestFailure(error)))
                if case .disconnected(let why) = error { linkEnded = linkEnded ?? why }
            }
        }

        /// Delivers what the plugin printed (records for commit, rejections for the log) and
        /// tells it which records were committed.
        func deliverOutput(_ deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
            var output = AdapterOutput()
            runner.drain(into: &output)
            guard !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty else { return }
            let receipt = try await deliver(output)
            guard !output.records.isEmpty else { return }
            for line in ExternalConversationLine.committed(uuids: output.records.map(\.recordUUID), receipt: receipt) {
                runner.submitControl(line)
            }
        }
    }
}

/// Takes the notifications and indications of the subscribed characteristics from the link
/// and hands them to the conversation's loop, at most `limit` waiting at a time (more are
/// dropped and counted). It runs while something is subscribed; the link's end is reported.
final class ValuePump: Sendable {
    private struct State {
        var subscribed: Set<BLEUUID> = []
        var task: Task<Void, Never>?
        var stopped = false
    }

    private let link: any GATTConversationLink
    private let events: AsyncStream<PluginConversation.Event>.Continuation
    private let limit: Int
    private let state = Mutex(State())
    private let waiting = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)

    init(link: any GATTConversationLink, events: AsyncStream<PluginConversation.Event>.Continuation, limit: Int) {
        self.link = link
        self.events = events
        self.limit = limit
    }

    /// Values handed out and not consumed yet.
    var inFlight: Int { waiting.load(ordering: .acquiring) }
    /// Values dropped because `limit` were waiting.
    var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// The loop took one value.
    func consumed() { waiting.subtract(1, ordering: .acquiringAndReleasing) }

    /// Starts taking `characteristic`'s values (and starts the pump if it is idle).
    func add(_ characteristic: BLEUUID) {
        state.withLock { state in
            state.subscribed.insert(characteristic)
            guard state.task == nil, !state.stopped else { return }
            state.task = Task { [self] in await pump() }
        }
    }

    func remove(_ characteristic: BLEUUID) {
        state.withLock { _ = $0.subscribed.remove(characteristic) }
    }

    func stop() {
        let task = state.withLock { state in
            state.stopped = true
            return state.task
        }
        task?.cancel()
    }

    private func wanted(_ value: GATTValue) -> Bool {
        guard let uuid = value.characteristicUUID else { return false }
        return state.withLock { $0.subscribed.contains(uuid) }
    }

    private func pump() async {
        defer { state.withLock { $0.task = nil } }
        while !Task.isCancelled {
            guard state.withLock({ !$0.subscribed.isEmpty && !$0.stopped }) else { return }
            do {
                let value = try await link.nextValue(timeout: .seconds(1)) { [self] in wanted($0) }
                if waiting.load(ordering: .acquiring) >= limit {
                    droppedCount.add(1, ordering: .relaxed)
                } else {
                    waiting.add(1, ordering: .acquiringAndReleasing)
                    events.yield(.value(value))
                }
            } catch {
                if case .timedOut = error { continue }
                events.yield(.linkEnded("\(error)"))
                return
            }
        }
    }
}
