import AdapterKit
import Foundation

/// The Omron HID report framing: every report is 8 bytes, byte 0 says how many of the next 7 are valid.
/// Longer messages span several reports.
public enum OmronReport {
    /// Bytes in one report, count byte included.
    public static let size = 8
    /// Message bytes one report carries.
    public static let capacity = 7

    /// `message` cut into output reports, the unused tail of each report zeroed.
    public static func reports(for message: [UInt8]) -> [[UInt8]] {
        var reports: [[UInt8]] = []
        var start = 0
        repeat {
            let chunk = message[start..<min(start + capacity, message.count)]
            var report = [UInt8(chunk.count)] + chunk
            report += [UInt8](repeating: 0, count: size - report.count)
            reports.append(report)
            start += capacity
        } while start < message.count
        return reports
    }

    /// The valid bytes of an input report. An empty report (count 0) gives `[]`.
    public static func payload(of report: [UInt8]) throws(OmronProtocolError) -> [UInt8] {
        guard let count = report.first else { throw .emptyReport }
        guard count <= capacity else { throw .badReportCount(count: count, report: report) }
        guard report.count > Int(count) else {
            throw .truncatedReport(count: count, length: report.count, report: report)
        }
        return Array(report[1..<(1 + Int(count))])
    }
}

/// How long the answer to a command is.
public enum OmronReplyShape: Hashable, Sendable {
    /// "OK" and a fixed number of bytes after it; the total length is given.
    case fixed(Int)
    /// `OK 00 n <n bytes> checksum`.
    case lengthPrefixed
    /// Just "OK" (or another short status such as "OFF\r\n").
    case status
}

/// A command to the device: a three-letter verb, argument bytes and their XOR as a last byte.
public struct OmronCommand: Hashable, Sendable, CustomStringConvertible {
    /// The three ASCII letters, e.g. `GTD`.
    public var verb: String
    public var arguments: [UInt8]
    public var replyShape: OmronReplyShape

    public init(verb: String, arguments: [UInt8], replyShape: OmronReplyShape) {
        self.verb = verb
        self.arguments = arguments
        self.replyShape = replyShape
    }

    /// The bytes sent: verb, arguments, XOR of the arguments.
    public var bytes: [UInt8] {
        Array(verb.utf8) + arguments + [arguments.reduce(0, ^)]
    }

    /// `VER00`, `GTD 00 00 03 02 01`: the bytes after the verb as text when they are digits, else in hex.
    public var description: String {
        let tail = Array(bytes.dropFirst(verb.utf8.count))
        if tail.allSatisfy({ (0x30...0x39).contains($0) }) { return verb + String(decoding: tail, as: UTF8.self) }
        return "\(verb) \(hexString(tail))"
    }

    /// `VER00`: the model/version string. The reply is 15 bytes on every Omron device seen.
    public static let version = OmronCommand(verb: "VER", arguments: [0x30], replyShape: .fixed(15))
    /// `SRL00`: the serial number, length-prefixed on the HJ-720IT.
    public static let serialNumber = OmronCommand(verb: "SRL", arguments: [0x30], replyShape: .lengthPrefixed)
    /// `PRF00`: the user profile (weight, stride) in the device's units.
    public static let profile = OmronCommand(verb: "PRF", arguments: [0x30], replyShape: .fixed(14))
    /// `CNT00`: how many days are stored and how many are not yet transferred.
    public static let dataCount = OmronCommand(verb: "CNT", arguments: [0x30], replyShape: .fixed(8))
    /// `CTD00`: clear the transferred data (resets the device's count of days not yet transferred).
    public static let clearData = OmronCommand(verb: "CTD", arguments: [0x30], replyShape: .status)
    /// `END`: ends the session; the device switches off.
    public static let end = OmronCommand(verb: "END", arguments: [0xFF], replyShape: .status)

    /// `GTD 00 00 <day> <block>`: one block of one day. Blocks 1-3 hold hours 0-7, 8-15 and 16-23;
    /// block 4 is the day's summary. Day 0 is today, 1 yesterday, and so on.
    public static func dayBlock(day: UInt8, block: UInt8) -> OmronCommand {
        OmronCommand(verb: "GTD", arguments: [0x00, 0x00, day, block], replyShape: .lengthPrefixed)
    }
}

/// Why a report or a reply could not be used. Every case carries the bytes concerned.
public enum OmronProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A read returned no bytes at all.
    case emptyReport
    /// The count byte is larger than a report can hold.
    case badReportCount(count: UInt8, report: [UInt8])
    /// The report is shorter than its count byte says.
    case truncatedReport(count: UInt8, length: Int, report: [UInt8])
    /// The reply does not start with "OK" (or "NO").
    case garbled(command: String, reply: [UInt8])
    /// The reply ended (a short report) before the length the command's reply has.
    case shortReply(command: String, expected: Int, found: Int, reply: [UInt8])
    /// More bytes arrived than the reply can have.
    case overlongReply(command: String, expected: Int, found: Int, reply: [UInt8])
    /// The XOR of the bytes after "OK" is not zero: `expected` is the XOR of the bytes before the checksum
    /// byte, `found` the checksum byte.
    case badChecksum(command: String, expected: UInt8, found: UInt8, reply: [UInt8])
    /// A length-prefixed reply whose length byte disagrees with the bytes received.
    case badDeclaredLength(command: String, declared: Int, available: Int, reply: [UInt8])

    public var description: String {
        switch self {
        case .emptyReport:
            "empty input report"
        case .badReportCount(let count, let report):
            "input report count byte \(count) is larger than 7: \(hexString(report))"
        case .truncatedReport(let count, let length, let report):
            "input report of \(length) bytes announces \(count): \(hexString(report))"
        case .garbled(let command, let reply):
            "reply to \(command) does not start with OK: \(hexString(reply))"
        case .shortReply(let command, let expected, let found, let reply):
            "reply to \(command) ended after \(found) of \(expected) bytes: \(hexString(reply))"
        case .overlongReply(let command, let expected, let found, let reply):
            "reply to \(command) has \(found) bytes, more than \(expected): \(hexString(reply))"
        case .badChecksum(let command, let expected, let found, let reply):
            String(format: "reply to %@: checksum 0x%02x expected, 0x%02x found: ", command, expected, found)
                + hexString(reply)
        case .badDeclaredLength(let command, let declared, let available, let reply):
            "reply to \(command) declares \(declared) data bytes but carries \(available): \(hexString(reply))"
        }
    }
}

/// A complete answer to a command.
public enum OmronReply: Hashable, Sendable {
    /// "OK" with the bytes after it (status byte first, checksum last; checked).
    case ok(body: [UInt8])
    /// "NO": the device refused; the command may be sent again.
    case refused
    /// A status the device sends instead of "OK" at the end of a session ("OFF\r\n", "END\r\n").
    case status(String)

    /// Checks a complete reply to `command`.
    public static func parse(_ reply: [UInt8], for command: OmronCommand) throws(OmronProtocolError) -> OmronReply {
        if reply == Array("NO".utf8) { return .refused }
        if command.replyShape == .status, reply.count > 2, reply.starts(with: Array("OFF".utf8) ) || reply.starts(with: Array("END".utf8)) {
            return .status(String(decoding: reply, as: UTF8.self))
        }
        guard reply.count >= 2, reply[0] == 0x4F, reply[1] == 0x4B else {
            throw .garbled(command: command.description, reply: reply)
        }
        let body = Array(reply.dropFirst(2))
        switch command.replyShape {
        case .fixed(let total):
            if reply.count < total {
                throw .shortReply(command: command.description, expected: total, found: reply.count, reply: reply)
            }
            if reply.count > total {
                throw .overlongReply(command: command.description, expected: total, found: reply.count, reply: reply)
            }
        case .lengthPrefixed:
            guard body.count >= 3 else {
                throw .shortReply(command: command.description, expected: 5, found: reply.count, reply: reply)
            }
            let declared = Int(body[1])
            if body.count != declared + 3 {
                throw .badDeclaredLength(command: command.description, declared: declared,
                                         available: body.count - 3, reply: reply)
            }
        case .status:
            break
        }
        if let checksum = body.last, body.count >= 2 {
            let expected = body.dropLast().reduce(0, ^)
            guard expected == checksum else {
                throw .badChecksum(command: command.description, expected: expected, found: checksum, reply: reply)
            }
        }
        return .ok(body: body)
    }
}

/// Collects the input reports of one reply until it is complete.
public struct OmronReplyAssembler: Sendable {
    public let command: OmronCommand
    public private(set) var bytes: [UInt8] = []

    public init(command: OmronCommand) {
        self.command = command
    }

    /// Adds one input report; returns the whole reply once it is complete. Empty reports (count 0), which the
    /// device sends after a mode change, are ignored.
    public mutating func add(report: [UInt8]) throws(OmronProtocolError) -> [UInt8]? {
        let payload = try OmronReport.payload(of: report)
        if payload.isEmpty && bytes.isEmpty { return nil }
        bytes += payload
        let lastReportWasShort = payload.count < OmronReport.capacity
        if bytes.count >= 2, bytes[0] == 0x4E, bytes[1] == 0x4F { return bytes }   // "NO"
        if bytes.count >= 2, !(bytes[0] == 0x4F && bytes[1] == 0x4B), command.replyShape != .status {
            throw .garbled(command: command.description, reply: bytes)
        }
        switch command.replyShape {
        case .fixed(let total):
            if bytes.count > total {
                throw .overlongReply(command: command.description, expected: total, found: bytes.count, reply: bytes)
            }
            return bytes.count == total || lastReportWasShort ? bytes : nil
        case .lengthPrefixed:
            if bytes.count >= 4 {
                let total = 5 + Int(bytes[3])
                if bytes.count > total {
                    throw .overlongReply(command: command.description, expected: total, found: bytes.count, reply: bytes)
                }
                if bytes.count == total { return bytes }
            }
            return lastReportWasShort ? bytes : nil
        case .status:
            return lastReportWasShort ? bytes : nil
        }
    }
}
