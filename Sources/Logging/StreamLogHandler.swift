import Foundation
import Synchronization

/// The default `LogHandler`: one line per message on a `TextWriter` (normally stderr).
///
/// Timestamped style: `2026-11-29T13:00:00Z warning ingestd: device=AA:BB:CC:DD:EE:FF message`.
/// Journald style replaces the timestamp with the syslog priority journald reads from the start
/// of each line: `<4>warning ingestd: device=AA:BB:CC:DD:EE:FF message`.
/// Metadata appear sorted by key; values with spaces, quotes or `=` are quoted. Newlines in
/// the message are written as `\n` so a message is always exactly one line.
public struct StreamLogHandler: LogHandler {
    /// How each line starts.
    public enum Style: Sendable, Equatable {
        /// An ISO 8601 UTC timestamp with seconds: for terminals and files.
        case timestamped
        /// A `<N>` syslog priority: for stderr connected to the systemd journal.
        case journald
    }

    public let writer: any TextWriter
    public let style: Style
    private let now: @Sendable () -> Date

    /// - Parameter now: the clock for timestamps; tests pass a fixed date.
    public init(writer: any TextWriter, style: Style, now: @escaping @Sendable () -> Date = { Date() }) {
        self.writer = writer
        self.style = style
        self.now = now
    }

    /// The style for a process with this environment: journald when `JOURNAL_STREAM` is set.
    ///
    /// When `standardErrorIdentity` (the `device:inode` of fd 2) is given, journald style is
    /// chosen only if it matches `JOURNAL_STREAM`, so a child whose stderr was redirected to a
    /// file keeps timestamps.
    public static func style(environment: [String: String], standardErrorIdentity: String? = nil) -> Style {
        guard let journalStream = environment["JOURNAL_STREAM"], !journalStream.isEmpty else {
            return .timestamped
        }
        if let identity = standardErrorIdentity, identity != journalStream {
            return .timestamped
        }
        return .journald
    }

    public func log(_ record: LogRecord) {
        writer.write(format(record) + "\n")
    }

    /// The line for `record`, without its terminating newline.
    public func format(_ record: LogRecord) -> String {
        var line: String
        switch style {
        case .timestamped:
            line = Self.timestamp(now()) + " "
        case .journald:
            line = "<\(record.level.syslogPriority)>"
        }
        line += record.level.rawValue
        line += " "
        line += record.label
        line += ":"
        for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quotedIfNeeded(value.description))"
        }
        line += " "
        line += Self.escapingNewlines(record.message)
        return line
    }

    /// `date` as `YYYY-MM-DDTHH:MM:SSZ` in UTC.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
    }

    private static func quotedIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty
            || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || $0.isNewline }
        guard needsQuotes else { return value }
        var quoted = "\""
        for character in value {
            switch character {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n", "\r\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            default: quoted.append(character)
            }
        }
        return quoted + "\""
    }

    private static func escapingNewlines(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        return text
            .replacingOccurrences(of: "\r\n", with: "\\n")
            .replacingOccurrences(of: "\n", with: "\\n")
            .replacingOccurrences(of: "\r", with: "\\r")
    }
}

/// A `LogHandler` that keeps every record in memory, for tests.
public final class RecordingLogHandler: LogHandler {
    private let storage = Mutex<[LogRecord]>([])

    public init() {}

    public func log(_ record: LogRecord) {
        storage.withLock { $0.append(record) }
    }

    /// Every record received so far, in order.
    public var records: [LogRecord] {
        storage.withLock { $0 }
    }
}
