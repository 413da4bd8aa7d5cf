import Logging

/// A message from the BlueZ transport for the daemon's log.
///
/// The transport has no logger of its own: it hands records to a ``BlueZLogSink`` the caller
/// provides (the daemon forwards them to its `Logger`). Each record has a stable ``kind`` so
/// the caller can count or filter them, e.g. `scan-busy` or `scan-silence`.
public struct BlueZLogRecord: Hashable, Sendable, CustomStringConvertible {
    /// Severity, in the shared level vocabulary of `Logging`.
    public typealias Level = Logger.Level

    public var level: Level
    /// A stable kebab-case key for the situation (`scan-busy`, `scan-silence`, `controller-gone`, …).
    public var kind: String
    /// One line for people; explains what happened and what the transport does about it.
    public var message: String

    public init(level: Level, kind: String, message: String) {
        self.level = level
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(level) \(kind): \(message)" }
}

/// Receives the transport's log records; called from the engines' executors, so it must be
/// thread-safe and quick.
public typealias BlueZLogSink = @Sendable (BlueZLogRecord) -> Void
