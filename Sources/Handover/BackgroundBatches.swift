import Foundation

/// Runs a producer on a thread of its own and hands what it makes to the caller batch by batch,
/// so that reading and decoding a file overlap with storing what was read before (on two cores
/// the work takes about as long as the slower half, not the sum of both).
///
/// At most `depth` batches wait to be taken: memory stays bounded whatever the input's size,
/// and a slow consumer holds the producer back. `close()` (also run when the value goes away)
/// stops the producer at its next hand-over and waits for its thread.
public final class BackgroundBatches<Batch: Sendable>: Sendable {
    /// What `put` throws once the consumer closed: the producer should end (rethrowing it).
    public struct Closed: Error {}

    private let channel: Channel<Batch>

    /// Starts `produce` on a thread named `name`; it hands each batch to `put`, which waits while
    /// `depth` batches are waiting. An error `produce` throws ends the batches (`waitForEnd()`
    /// returns it after the batches handed over before it).
    public init(name: String, depth: Int = 1,
                produce: @escaping @Sendable (_ put: (Batch) throws -> Void) throws -> Void) {
        let channel = Channel<Batch>(depth: max(1, depth))
        self.channel = channel
        // The thread holds the channel, not this object: dropping the object closes the channel.
        let thread = Thread {
            var failure: (any Error)?
            do {
                try produce { try channel.put($0) }
            } catch is Closed {
                // Stopped by `close()`.
            } catch {
                failure = error
            }
            channel.finish(failure)
        }
        thread.name = name
        thread.start()
    }

    deinit { channel.close() }

    /// The next batch, waiting for it; nil once the producer ended (or was closed): then
    /// `waitForEnd()` says how.
    public func next() -> Batch? { channel.next() }

    /// Waits until the producer has ended; the error that ended it, nil when it finished.
    public func waitForEnd() -> (any Error)? { channel.waitForEnd() }

    /// Whether the producer has ended (then `waitForEnd()` returns at once); does not wait.
    public var hasEnded: Bool { channel.hasEnded }

    /// Stops the producer (batches not yet taken are dropped) and waits for its thread.
    public func close() { channel.close() }
}

/// The state both threads share, guarded by `condition`.
private final class Channel<Batch: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var ready: [Batch] = []
    private var stopped = false
    private var finished = false
    private var failure: (any Error)?
    private let depth: Int

    init(depth: Int) { self.depth = depth }

    func put(_ batch: Batch) throws {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= depth, !stopped { condition.wait() }
        guard !stopped else { throw BackgroundBatches<Batch>.Closed() }
        ready.append(batch)
        condition.broadcast()
    }

    func next() -> Batch? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty, !finished { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let batch = ready.removeFirst()
        condition.broadcast()
        return batch
    }

    func finish(_ failure: (any Error)?) {
        condition.lock()
        self.failure = failure
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    func waitForEnd() -> (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        while !finished { condition.wait() }
        return failure
    }

    var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finished
    }

    func close() {
        condition.lock()
        stopped = true
        ready.removeAll()
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}

/// A value made on one thread and from then on used by a producer thread alone (a reader, a
/// byte source): what lets a non-Sendable value into `produce`.
public final class HandedOff<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}
