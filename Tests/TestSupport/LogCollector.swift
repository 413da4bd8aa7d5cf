import Synchronization

/// Collects what a component hands to a log callback, from any thread, for a test to inspect.
public final class LogCollector<Entry: Sendable>: Sendable {
    private let entries = Mutex<[Entry]>([])

    public init() {}

    /// The callback to give the component under test.
    public var handler: @Sendable (Entry) -> Void {
        { [self] entry in self.entries.withLock { $0.append(entry) } }
    }

    /// Everything collected so far, in arrival order.
    public var all: [Entry] { entries.withLock { $0 } }
}
