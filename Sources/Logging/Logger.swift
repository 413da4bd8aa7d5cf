/// A labelled logger in the shape of swift-log: a value carrying a level threshold and metadata,
/// handing records at or above the threshold to a `LogHandler`.
///
/// There is no global logger: the command-line runner creates one and passes it in the
/// `CommandContext`; code that needs a logger takes it as a parameter. Copies are independent:
/// changing the level or metadata of a copy leaves the original alone.
///
/// ```swift
/// var logger = context.logger
/// logger[metadataKey: "device"] = "AA:BB:CC:DD:EE:FF"
/// logger.warning("history read failed, retrying")
/// ```
public struct Logger: Sendable {
    /// Names the component logging, e.g. `ingestd`.
    public var label: String
    /// Messages below this level are dropped without being built.
    public var logLevel: Level
    /// Key-value pairs attached to every message from this logger.
    public var metadata: Metadata
    /// Receives the records that pass the level threshold.
    public var handler: any LogHandler

    public init(label: String, handler: any LogHandler, logLevel: Level = .info, metadata: Metadata = [:]) {
        self.label = label
        self.handler = handler
        self.logLevel = logLevel
        self.metadata = metadata
    }

    /// One metadata entry of this logger; `nil` removes it.
    public subscript(metadataKey key: String) -> MetadataValue? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Whether a message at `level` would reach the handler.
    public func isEnabled(_ level: Level) -> Bool {
        level >= logLevel
    }

    /// Logs `message` at `level`; the message and metadata are only built when the level passes.
    /// Metadata given here overrides the logger's own entries with the same key.
    public func log(
        level: Level,
        _ message: @autoclosure () -> Message,
        metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {
        guard isEnabled(level) else { return }
        var merged = self.metadata
        if let extra = metadata() {
            merged.merge(extra) { _, new in new }
        }
        handler.log(LogRecord(
            level: level,
            label: label,
            message: message().text,
            metadata: merged,
            file: file,
            function: function,
            line: line
        ))
    }

    /// Logs at `.trace`: fine-grained detail such as every frame received.
    public func trace(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .trace, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.debug`: information for diagnosing problems.
    public func debug(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .debug, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.info`: ordinary progress, such as a device connecting.
    public func info(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .info, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.notice`: normal but significant events.
    public func notice(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .notice, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.warning`: something went wrong but work continues.
    public func warning(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .warning, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.error`: an operation failed.
    public func error(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .error, message(), metadata: metadata(), file: file, function: function, line: line)
    }

    /// Logs at `.critical`: the program cannot continue as intended.
    public func critical(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(level: .critical, message(), metadata: metadata(), file: file, function: function, line: line)
    }
}

extension Logger {
    /// Severity of a message, from most verbose to most severe.
    public enum Level: String, CaseIterable, Comparable, Sendable, Codable {
        case trace
        case debug
        case info
        case notice
        case warning
        case error
        case critical

        /// The syslog priority (RFC 5424 severity) journald understands in a `<N>` prefix.
        public var syslogPriority: Int {
            switch self {
            case .trace, .debug: 7
            case .info: 6
            case .notice: 5
            case .warning: 4
            case .error: 3
            case .critical: 2
            }
        }

        private var rank: Int {
            switch self {
            case .trace: 0
            case .debug: 1
            case .info: 2
            case .notice: 3
            case .warning: 4
            case .error: 5
            case .critical: 6
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.rank < rhs.rank
        }
    }

    /// The text of a log message, written as a string literal or interpolation.
    public struct Message: ExpressibleByStringLiteral, ExpressibleByStringInterpolation,
        CustomStringConvertible, Equatable, Sendable
    {
        /// The message as written.
        public var text: String

        public init(_ text: String) {
            self.text = text
        }

        public init(stringLiteral value: String) {
            self.text = value
        }

        public var description: String { text }
    }

    /// Key-value pairs attached to a message.
    public typealias Metadata = [String: MetadataValue]

    /// One metadata value: a string, something printable, or a nested list or dictionary.
    public enum MetadataValue: Sendable, CustomStringConvertible, Equatable,
        ExpressibleByStringLiteral, ExpressibleByStringInterpolation,
        ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
    {
        case string(String)
        case stringConvertible(any CustomStringConvertible & Sendable)
        case array([MetadataValue])
        case dictionary(Metadata)

        public init(stringLiteral value: String) {
            self = .string(value)
        }

        public init(arrayLiteral elements: MetadataValue...) {
            self = .array(elements)
        }

        public init(dictionaryLiteral elements: (String, MetadataValue)...) {
            self = .dictionary(Dictionary(elements) { _, last in last })
        }

        /// Lists print as `[a, b]`, dictionaries as `[key: value]` with keys sorted.
        public var description: String {
            switch self {
            case .string(let string):
                string
            case .stringConvertible(let value):
                value.description
            case .array(let values):
                "[" + values.map(\.description).joined(separator: ", ") + "]"
            case .dictionary(let entries):
                "["
                    + entries.sorted { $0.key < $1.key }
                    .map { "\($0.key): \($0.value.description)" }
                    .joined(separator: ", ")
                    + "]"
            }
        }

        public static func == (lhs: MetadataValue, rhs: MetadataValue) -> Bool {
            switch (lhs, rhs) {
            case (.array(let left), .array(let right)):
                left == right
            case (.dictionary(let left), .dictionary(let right)):
                left == right
            case (.array, _), (.dictionary, _), (_, .array), (_, .dictionary):
                false
            default:
                lhs.description == rhs.description
            }
        }
    }
}

/// One message that passed a logger's level threshold, as handed to a `LogHandler`.
public struct LogRecord: Sendable, Equatable {
    public var level: Logger.Level
    /// The label of the logger that produced the record.
    public var label: String
    public var message: String
    /// The logger's metadata merged with the metadata given at the call.
    public var metadata: Logger.Metadata
    public var file: String
    public var function: String
    public var line: UInt

    public init(
        level: Logger.Level, label: String, message: String, metadata: Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
        self.file = file
        self.function = function
        self.line = line
    }
}

/// Where log records go. Implementations must be safe to call from many tasks at once.
public protocol LogHandler: Sendable {
    /// Emits one record; called only for records at or above the logger's level.
    func log(_ record: LogRecord)
}
