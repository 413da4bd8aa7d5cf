import AdapterKit
import Foundation

/// One ANT serial message: `A4 | length | id | payload | checksum`, where length counts the payload only and the
/// checksum is the XOR of every byte before it, sync byte included. The same framing goes both ways over USB.
public struct ANTMessage: Hashable, Sendable, CustomStringConvertible {
    public static let sync: UInt8 = 0xA4
    /// The longest payload a USB stick sends (a broadcast with every extended field is 17 bytes); longer length
    /// bytes are taken as garbage.
    public static let maximumPayload = 32

    public var id: UInt8
    public var payload: [UInt8]

    public init(id: UInt8, payload: [UInt8]) {
        self.id = id
        self.payload = payload
    }

    /// The framed bytes.
    public var bytes: [UInt8] {
        let body = [Self.sync, UInt8(payload.count), id] + payload
        return body + [body.reduce(0, ^)]
    }

    public var description: String {
        String(format: "ANT 0x%02x [", id) + hexString(payload) + "]"
    }

    /// Reads exactly one framed message.
    public static func decode(_ frame: [UInt8]) throws(ANTFrameError) -> ANTMessage {
        guard let first = frame.first else { throw .truncated(expected: 4, found: 0, bytes: frame) }
        guard first == sync else { throw .missingSync(bytes: frame) }
        guard frame.count >= 4 else { throw .truncated(expected: 4, found: frame.count, bytes: frame) }
        let length = Int(frame[1])
        guard length <= maximumPayload else { throw .implausibleLength(length, bytes: frame) }
        guard frame.count >= length + 4 else { throw .truncated(expected: length + 4, found: frame.count, bytes: frame) }
        guard frame.count == length + 4 else { throw .trailingBytes(expected: length + 4, found: frame.count, bytes: frame) }
        let expected = frame.dropLast().reduce(0, ^)
        guard let found = frame.last, found == expected else {
            throw .badChecksum(expected: expected, found: frame[frame.count - 1], bytes: frame)
        }
        return ANTMessage(id: frame[2], payload: Array(frame[3..<(3 + length)]))
    }
}

/// A frame that could not be read. Every case carries the bytes.
public enum ANTFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Bytes where a sync byte (0xA4) should start a message; they are skipped.
    case missingSync(bytes: [UInt8])
    /// Fewer bytes than the length byte promises.
    case truncated(expected: Int, found: Int, bytes: [UInt8])
    /// A single frame with bytes after its checksum.
    case trailingBytes(expected: Int, found: Int, bytes: [UInt8])
    /// The length byte is larger than any ANT message.
    case implausibleLength(Int, bytes: [UInt8])
    /// The XOR of the bytes before the checksum (`expected`) differs from the checksum byte (`found`).
    case badChecksum(expected: UInt8, found: UInt8, bytes: [UInt8])

    public var description: String {
        switch self {
        case .missingSync(let bytes):
            "no sync byte: \(hexString(bytes))"
        case .truncated(let expected, let found, let bytes):
            "short message: \(found) of \(expected) bytes: \(hexString(bytes))"
        case .trailingBytes(let expected, let found, let bytes):
            "\(found) bytes where the frame has \(expected): \(hexString(bytes))"
        case .implausibleLength(let length, let bytes):
            "length byte \(length) is larger than any ANT message: \(hexString(bytes))"
        case .badChecksum(let expected, let found, let bytes):
            String(format: "bad checksum: 0x%02x expected, 0x%02x found: ", expected, found) + hexString(bytes)
        }
    }

    /// Short stable reason key for rejections.
    public var reason: String {
        switch self {
        case .missingSync: "no-sync"
        case .truncated: "short-message"
        case .trailingBytes: "trailing-bytes"
        case .implausibleLength: "bad-length"
        case .badChecksum: "bad-checksum"
        }
    }
}

/// Splits the IN byte stream of a stick into messages: one USB transfer may hold several messages or part of one.
/// An impossible length drops the sync byte and searches again from the next byte. A bad checksum drops the
/// whole frame when a sync byte (or the end of the data) follows it, else only its sync byte (it may have been a
/// stray 0xA4).
public struct ANTStreamDecoder: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Bytes waiting for the rest of their message.
    public var pending: [UInt8] { buffer }

    public mutating func append(_ bytes: [UInt8]) {
        buffer += bytes
    }

    /// The next message or frame error, nil when more bytes are needed.
    public mutating func next() -> Result<ANTMessage, ANTFrameError>? {
        guard !buffer.isEmpty else { return nil }
        if buffer[0] != ANTMessage.sync {
            let skipped = buffer.firstIndex(of: ANTMessage.sync) ?? buffer.count
            let garbage = Array(buffer[..<skipped])
            buffer.removeFirst(skipped)
            return .failure(.missingSync(bytes: garbage))
        }
        guard buffer.count >= 2 else { return nil }
        let length = Int(buffer[1])
        if length > ANTMessage.maximumPayload {
            let bytes = Array(buffer.prefix(2))
            buffer.removeFirst()
            return .failure(.implausibleLength(length, bytes: bytes))
        }
        guard buffer.count >= length + 4 else { return nil }
        let frame = Array(buffer[..<(length + 4)])
        do {
            let message = try ANTMessage.decode(frame)
            buffer.removeFirst(frame.count)
            return .success(message)
        } catch {
            let followed = buffer.count == frame.count || buffer[frame.count] == ANTMessage.sync
            buffer.removeFirst(followed ? frame.count : 1)
            return .failure(error)
        }
    }
}
