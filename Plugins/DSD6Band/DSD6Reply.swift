import Foundation

/// One reply line of the DS-D6 band's AT protocol (`AT+TOPACE:5446`, `AT+BATT:14`,
/// `NT+TOPACE:0`), without its CR LF: the prefix (`AT` for answers, `NT` for pushed
/// notices, `BT` for the Bluetooth firmware), the command name and the value after the colon.
public struct DSD6Reply: Hashable, Sendable {
    public var prefix: String
    public var command: String
    public var value: String

    /// Parses one line; the error names the offending text.
    public init(line: String) throws(DSD6ReplyError) {
        guard let plus = line.firstIndex(of: "+"), let colon = line.firstIndex(of: ":"), plus < colon else {
            throw .notAReply(line)
        }
        prefix = String(line[..<plus])
        command = String(line[line.index(after: plus)..<colon])
        value = String(line[line.index(after: colon)...])
        guard ["AT", "NT", "BT"].contains(prefix), !command.isEmpty,
              command.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") })
        else { throw .notAReply(line) }
    }

    /// The value as a step count (`AT+TOPACE:5446`): 0…999,999 steps, digits only.
    public func stepCount() throws(DSD6ReplyError) -> Int {
        guard !value.isEmpty, value.count <= 6, value.allSatisfy({ $0.isASCII && $0.isNumber }), let steps = Int(value)
        else { throw .badNumber(command: command, value: value) }
        return steps
    }

    /// The value as a time-zone offset in seconds (`AT+TIMEZONE:3600`): -14 h…+14 h.
    public func timeZoneOffset() throws(DSD6ReplyError) -> Int {
        guard let seconds = Int(value), abs(seconds) <= 14 * 3600 else { throw .badNumber(command: command, value: value) }
        return seconds
    }
}

/// Why bytes from the band are not a usable reply.
public enum DSD6ReplyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not of the form `AT+NAME:value` (the line, as received).
    case notAReply(String)
    /// The value of a numeric reply is not a number in range.
    case badNumber(command: String, value: String)
    /// A line longer than ``DSD6LineAssembler/maximumLineLength`` without CR LF (its start).
    case lineTooLong(String)

    public var description: String {
        switch self {
        case .notAReply(let line): "not an AT reply: \"\(line)\""
        case .badNumber(let command, let value): "\(command) value \"\(value)\" is not a number in range"
        case .lineTooLong(let start): "a reply line longer than \(DSD6LineAssembler.maximumLineLength) bytes: \"\(start)…\""
        }
    }

    /// Short stable reason key for rejections.
    public var reason: String {
        switch self {
        case .notAReply: "not-a-reply"
        case .badNumber: "bad-number"
        case .lineTooLong: "line-too-long"
        }
    }
}

/// Joins the band's notifications (at most 20 bytes each) into CR LF terminated lines.
public struct DSD6LineAssembler: Sendable {
    /// A longer line is cut off and reported: the band's replies are short.
    public static let maximumLineLength = 128
    private var pending: [UInt8] = []

    public init() {}

    /// Adds one notification's bytes; returns the lines it completed (or the error of an overlong one).
    public mutating func add(_ bytes: [UInt8]) -> [Result<String, DSD6ReplyError>] {
        var lines: [Result<String, DSD6ReplyError>] = []
        for byte in bytes {
            if byte == 0x0A {
                if pending.last == 0x0D { pending.removeLast() }
                lines.append(.success(String(decoding: pending, as: UTF8.self)))
                pending.removeAll(keepingCapacity: true)
            } else if pending.count >= Self.maximumLineLength {
                lines.append(.failure(.lineTooLong(String(decoding: pending.prefix(24), as: UTF8.self))))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
            }
        }
        return lines
    }
}

/// The commands the conversation sends, as bytes with CR LF, split into writes of at most
/// `chunk` bytes (the vendor app splits at 20, the payload of a default-MTU write).
public enum DSD6Command {
    /// `AT+TOPACE=0`: the band answers `AT+TOPACE:<steps>`, its step count since its last reset.
    public static let stepCount = "AT+TOPACE=0"
    /// `AT+TIMEZONE`: the band answers `AT+TIMEZONE:<seconds east of UTC>`.
    public static let timeZone = "AT+TIMEZONE"
    /// `AT+SN`: the band answers `AT+SN:<serial number>`.
    public static let serialNumber = "AT+SN"
    /// `AT+DT=YYYYMMDDhhmmss`: sets the band's clock (local wall time).
    public static func setClock(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "AT+DT=%04d%02d%02d%02d%02d%02d", c.year ?? 2000, c.month ?? 1, c.day ?? 1,
                      c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    /// The writes carrying `command` and CR LF.
    public static func writes(_ command: String, chunk: Int = 20) -> [[UInt8]] {
        let bytes = Array((command + "\r\n").utf8)
        let size = max(1, chunk)
        return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }
}
