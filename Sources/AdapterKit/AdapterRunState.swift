import Synchronization

/// What one run (the daemon's run, one replay, one capture) lets an adapter share among the
/// sessions and conversations it makes in that run: for instance a weighing a scale advertised,
/// which the same scale's conversation then reads again. Each value is made on first use, kept per
/// adapter and kind, and goes with the run, so two runs (two replays in one process, a daemon
/// restarted) never see each other's. A context made outside a run gets a fresh one of its own.
///
/// Bounded: at most ``maximumValues`` values; past that, `make`'s value is returned without being
/// kept (so it is shared by nobody). What a value holds is bounded by the adapter that owns it.
public final class AdapterRunState: Sendable {
    /// The most values one run keeps (one or two per adapter that uses any).
    public static let maximumValues = 1_024

    private struct Key: Hashable {
        var adapter: String
        var kind: ObjectIdentifier
    }

    private let values = Mutex<[Key: any Sendable]>([:])

    public init() {}

    /// This run's value of kind `Value` for `adapter`, made by `make` the first time it is asked for.
    public func shared<Value: Sendable>(_ kind: Value.Type = Value.self, adapter: String, make: () -> Value) -> Value {
        let key = Key(adapter: adapter, kind: ObjectIdentifier(kind))
        return values.withLock { values in
            if let known = values[key] as? Value { return known }
            let made = make()
            if values.count < Self.maximumValues { values[key] = made }
            return made
        }
    }

    /// How many values the run keeps.
    public var count: Int { values.withLock { $0.count } }
}
