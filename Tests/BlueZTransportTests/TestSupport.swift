import BlueZTransport
import Foundation
import Synchronization
import TestSupport
import Testing
import Transport

/// A wait in a test that did not end in time: the test fails instead of hanging.
struct TestWaitTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Collects log records from an engine.
typealias LogCollector = TestSupport.LogCollector<BlueZLogRecord>

extension TestSupport.LogCollector<BlueZLogRecord> {
    /// The sink to give an engine.
    var sink: BlueZLogSink { handler }

    func count(kind: String) -> Int { all.filter { $0.kind == kind }.count }
}

/// Records what a packet tap sees.
final class PacketLog: Sendable {
    private let packets = Mutex<[(PacketDirection, [UInt8])]>([])

    var record: PacketTap { { direction, bytes in self.packets.withLock { $0.append((direction, bytes)) } } }

    var all: [(PacketDirection, [UInt8])] { packets.withLock { $0 } }
}

/// Takes the next `count` elements of `stream`, failing after `limit` instead of hanging.
/// Fewer elements come back when the stream finishes first.
func take<Element: Sendable>(_ count: Int, from stream: AsyncStream<Element>, within limit: Duration = .seconds(10))
    async throws -> [Element]
{
    try await withThrowingTaskGroup(of: [Element]?.self) { group in
        group.addTask {
            var taken: [Element] = []
            var iterator = stream.makeAsyncIterator()
            while taken.count < count, let next = await iterator.next() { taken.append(next) }
            return taken
        }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw TestWaitTimeout(what: "\(count) elements")
        }
        return result
    }
}

/// All remaining elements of `stream` until it finishes, failing after `limit`.
func drain<Element: Sendable>(_ stream: AsyncStream<Element>, within limit: Duration = .seconds(10)) async throws -> [Element] {
    try await take(Int.max, from: stream, within: limit)
}

extension TransportEvent {
    var advertisement: BLEAdvertisement? {
        if case .advertisement(let value) = self { value } else { nil }
    }

    var gattValue: GATTValue? {
        if case .gattValue(let value) = self { value } else { nil }
    }

    var subscription: GATTSubscription? {
        if case .subscriptionChanged(let value) = self { value } else { nil }
    }

    var disconnection: BLEDisconnection? {
        if case .disconnected(let value) = self { value } else { nil }
    }

    var connection: BLEConnection? {
        if case .connected(let value) = self { value } else { nil }
    }
}
