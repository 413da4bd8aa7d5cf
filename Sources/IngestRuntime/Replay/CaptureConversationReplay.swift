import AdapterKit
import BLEWire
import Foundation
import Synchronization
import Transport

/// The connections of a capture whose devices a ``ConversingAdapter`` serves, collected while
/// the capture is read so that each conversation can be run against its connection afterwards.
struct CapturedConnections {
    /// One connection: its events after LE Connection Complete, and the GATT table discovery found.
    struct Connection {
        var peer: BLEAddress
        var handle: UInt16
        var start: Date
        var events: [TransportEvent] = []
        var database = GATTDatabase()
        /// Events past ``CapturedConnections/maximumEventsPerConnection`` were dropped.
        var truncated = false
    }

    /// A capture keeps at most this many events per connection for its conversation (a longer
    /// connection is cut and the cut is reported).
    static let maximumEventsPerConnection = 100_000

    private(set) var finished: [Connection] = []
    private var open: [UInt16: Connection] = [:]

    /// Takes one event.
    mutating func absorb(_ event: TransportEvent, decoder: HCITraceDecoder) {
        switch event {
        case .connected(let connection):
            // Every connection is kept: a device seen only through GATT is matched by the services
            // of its values, after its connection began; the runner keeps those whose adapter converses.
            if let previous = open.removeValue(forKey: connection.handle) { finished.append(previous) }
            open[connection.handle] = Connection(peer: connection.peerAddress, handle: connection.handle,
                                                 start: connection.time)
        case .disconnected(let disconnection):
            guard var connection = open.removeValue(forKey: disconnection.handle) else { return }
            connection.events.append(event)
            finished.append(connection)
        case .gattValue(let value):
            append(event, to: value.connection, decoder: decoder)
        case .subscriptionChanged(let subscription):
            append(event, to: subscription.connection, decoder: decoder)
        case .advertisement:
            break
        }
    }

    /// Ends the connections still open at the end of the capture.
    mutating func finish() {
        finished += open.values.sorted { $0.start < $1.start }
        open = [:]
    }

    private mutating func append(_ event: TransportEvent, to handle: UInt16, decoder: HCITraceDecoder) {
        guard open[handle] != nil else { return }
        if let database = decoder.peerDatabase(connection: handle) { open[handle]?.database = database }
        guard let count = open[handle]?.events.count, count < Self.maximumEventsPerConnection else {
            open[handle]?.truncated = true
            return
        }
        open[handle]?.events.append(event)
    }
}

/// A conversation's link answered from a captured connection.
///
/// Tolerant, as USB replay is: a write seeks forward to an identical captured write (same
/// characteristic, same bytes) and continues after it; a write the capture lacks is counted
/// (``writesNotInCapture``) and changes nothing. (Un)subscriptions seek their CCCD writes the
/// same way, on their own cursor. Reads and waits take the first captured read response, or
/// notification/indication that the condition accepts, not taken before and not before the
/// last matched write: each captured value answers once, in capture order, and the answer to a
/// command comes after it. A wait with nothing left fails as a disconnection when the capture
/// has the connection's end, else as "not in the capture". The clock is the time of the last
/// captured event used.
final class CaptureConversationLink: GATTConversationLink {
    private struct State {
        /// Where the search for the next write starts; values are not taken from before it.
        var writeCursor = 0
        var subscriptionCursor = 0
        var taken: Set<Int> = []
        var clock: Date
        var writesNotInCapture = 0
    }

    let peerAddress: BLEAddress
    private let events: [TransportEvent]
    private let database: GATTDatabase
    private let state: Mutex<State>

    init(_ connection: CapturedConnections.Connection) {
        peerAddress = connection.peer
        events = connection.events
        database = connection.database
        state = Mutex(State(clock: connection.start))
    }

    /// The session's writes that the capture does not have.
    var writesNotInCapture: Int { state.withLock { $0.writesNotInCapture } }

    /// The capture's clock, for `AdapterContext.now`.
    var clock: @Sendable () -> Date { { [self] in state.withLock { $0.clock } } }

    func discover() async throws(GATTConversationError) -> GATTDatabase { database }

    func mtu() async -> Int { 23 }

    func now() async -> Date { state.withLock { $0.clock } }

    func read(_ characteristic: BLEUUID) async throws(GATTConversationError) -> [UInt8] {
        guard let value = takeValue(where: { event in
            guard case .gattValue(let value) = event else { return false }
            return value.kind == .read && value.characteristicUUID == characteristic
        }) else { throw .notInCapture("read of \(characteristic)") }
        guard case .gattValue(let read) = value else { throw .notInCapture("read of \(characteristic)") }
        return read.value
    }

    func write(_ value: [UInt8], to characteristic: BLEUUID, withResponse: Bool) async throws(GATTConversationError) {
        seek(\.writeCursor) { event in
            guard case .gattValue(let written) = event else { return false }
            return (written.kind == .write || written.kind == .writeWithoutResponse)
                && written.characteristicUUID == characteristic && written.value == value
        }
    }

    func subscribe(to characteristic: BLEUUID, mode: GATTNotificationMode) async throws(GATTConversationError) {
        seek(\.subscriptionCursor) { event in
            guard case .subscriptionChanged(let subscription) = event else { return false }
            return subscription.characteristicUUID == characteristic && subscription.configuration != 0
        }
    }

    func unsubscribe(from characteristic: BLEUUID) async throws(GATTConversationError) {
        seek(\.subscriptionCursor) { event in
            guard case .subscriptionChanged(let subscription) = event else { return false }
            return subscription.characteristicUUID == characteristic && subscription.configuration == 0
        }
    }

    func nextValue(timeout: Duration, matching: @escaping @Sendable (GATTValue) -> Bool)
        async throws(GATTConversationError) -> GATTValue
    {
        let found = takeValue(where: { event in
            guard case .gattValue(let value) = event else { return false }
            return (value.kind == .notification || value.kind == .indication) && matching(value)
        })
        guard let found, case .gattValue(let value) = found else {
            let disconnected = events.contains { if case .disconnected = $0 { true } else { false } }
            if disconnected { throw .disconnected("the captured connection ended") }
            throw .notInCapture("matching notification or indication")
        }
        return value
    }

    func disconnect() async {}

    func endReason() async -> String? { "the captured connection has nothing more unasked" }

    /// Moves the cursor at `cursor` past the first event from it on that `accepts`; counts a
    /// write the capture lacks when there is none.
    private func seek(_ cursor: WritableKeyPath<State, Int>, where accepts: (TransportEvent) -> Bool) {
        state.withLock { state in
            guard let index = events[state[keyPath: cursor]...].firstIndex(where: accepts) else {
                state.writesNotInCapture += 1
                return
            }
            state[keyPath: cursor] = index + 1
            state.clock = Self.time(of: events[index]) ?? state.clock
        }
    }

    /// Takes the first event not taken yet, from the write cursor on, that `accepts`.
    private func takeValue(where accepts: (TransportEvent) -> Bool) -> TransportEvent? {
        state.withLock { state in
            var index = state.writeCursor
            while index < events.count {
                if !state.taken.contains(index), accepts(events[index]) {
                    state.taken.insert(index)
                    state.clock = max(state.clock, Self.time(of: events[index]) ?? state.clock)
                    return events[index]
                }
                index += 1
            }
            return nil
        }
    }

    private static func time(of event: TransportEvent) -> Date? {
        switch event {
        case .gattValue(let value): value.time
        case .subscriptionChanged(let subscription): subscription.time
        case .disconnected(let disconnection): disconnection.time
        case .connected(let connection): connection.time
        case .advertisement(let advertisement): advertisement.time
        }
    }
}

/// How one replayed conversation went, for the summary.
struct ConversationReport {
    var device: BLEAddress
    var adapter: String
    var writesNotInCapture: Int
    /// Why the conversation ended early, when it did.
    var failure: String?
    /// The captured connection had more events than a conversation is given; the rest were dropped.
    var truncated = false
}
