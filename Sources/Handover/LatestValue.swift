import Synchronization

/// The newest value one thread publishes for another to read when it next needs it (the
/// import's storing thread publishes the grants its reading thread takes the next batch under).
/// Reading never waits for more than the other thread's store of a value.
public final class LatestValue<Value: Sendable>: Sendable {
    private let current: Mutex<Value>

    public init(_ value: Value) {
        current = Mutex(value)
    }

    /// The value published last.
    public var value: Value {
        current.withLock { $0 }
    }

    /// Publishes `value` in place of the one before.
    public func publish(_ value: Value) {
        current.withLock { $0 = value }
    }
}
