import AdapterKit
import Foundation

/// The frames of the Omron memory protocol (written to the monitor's TX characteristics, answered
/// on its RX characteristics): `length · type (2) · address (2, big-endian) · count · data ·
/// 0x00 · check`, where the check makes the XOR of all bytes zero. See README.md.
public enum OmronMemoryFrame {
    /// Opens a memory session (answered with type `80 00`).
    public static let startSession: [UInt8] = [0x08, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x18]
    /// Closes it (answered with type `8F 00` and a status byte, 0 for success).
    public static let endSession: [UInt8] = [0x08, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07]

    /// Answer types.
    public static let startAnswer: UInt16 = 0x8000
    public static let readAnswer: UInt16 = 0x8100
    public static let writeAnswer: UInt16 = 0x81C0
    public static let endAnswer: UInt16 = 0x8F00

    /// Reads `count` bytes at `address` (answered with type `81 00`, the address and the bytes).
    public static func read(address: UInt16, count: Int) -> [UInt8] {
        sealed([0x08, 0x01, 0x00, UInt8(address >> 8), UInt8(address & 0xFF), UInt8(count)])
    }

    /// Writes `data` at `address` (answered with type `81 C0` and the address).
    public static func write(address: UInt16, data: [UInt8]) -> [UInt8] {
        sealed([UInt8(data.count + 8), 0x01, 0xC0, UInt8(address >> 8), UInt8(address & 0xFF), UInt8(data.count)] + data)
    }

    /// `body` followed by 0x00 and the XOR check.
    static func sealed(_ body: [UInt8]) -> [UInt8] {
        body + [0x00, body.reduce(0, ^)]
    }

    /// One answer of the monitor, whole (its pieces joined).
    public struct Answer: Sendable, Equatable {
        public var type: UInt16
        public var address: UInt16
        /// The data bytes (for the end-of-session answer: the status byte).
        public var data: [UInt8]

        /// Parses a whole answer; `bytes` is cut to its length byte.
        public init(_ bytes: [UInt8]) throws(OmronFrameError) {
            guard let length = bytes.first, length >= 8 else { throw .tooShort(bytes: bytes) }
            guard bytes.count >= Int(length) else { throw .tooShort(bytes: bytes) }
            let frame = Array(bytes.prefix(Int(length)))
            guard frame.reduce(0, ^) == 0 else { throw .badCheck(bytes: frame) }
            type = UInt16(frame[1]) << 8 | UInt16(frame[2])
            address = UInt16(frame[3]) << 8 | UInt16(frame[4])
            let count = Int(frame[5])
            if type == OmronMemoryFrame.endAnswer {
                data = [frame[6]]
            } else if 6 + count + 2 <= frame.count {
                data = Array(frame[6..<(6 + count)])
            } else if type == OmronMemoryFrame.readAnswer {
                throw .countBeyondFrame(count: count, bytes: frame)
            } else {
                // The session-start answer echoes the request's count without data (as the public decoders accept).
                data = []
            }
        }
    }
}

/// Why an answer of the monitor could not be used; each case carries the bytes.
public enum OmronFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(bytes: [UInt8])
    case badCheck(bytes: [UInt8])
    case countBeyondFrame(count: Int, bytes: [UInt8])
    case unexpectedAnswer(expected: UInt16, bytes: [UInt8])
    case wrongAddress(expected: UInt16, bytes: [UInt8])

    /// The short stable reason key of rejections.
    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .badCheck: "bad-checksum"
        case .countBeyondFrame: "bad-length"
        case .unexpectedAnswer: "unexpected-answer"
        case .wrongAddress: "wrong-address"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let bytes): "answer shorter than its length byte or than 8 bytes: \(hexString(bytes))"
        case .badCheck(let bytes): "answer fails its XOR check: \(hexString(bytes))"
        case .countBeyondFrame(let count, let bytes): "answer announces \(count) data bytes beyond its length: \(hexString(bytes))"
        case .unexpectedAnswer(let expected, let bytes):
            "expected an answer of type \(String(format: "%04x", expected)): \(hexString(bytes))"
        case .wrongAddress(let expected, let bytes):
            "expected the answer for address \(String(format: "%04x", expected)): \(hexString(bytes))"
        }
    }
}
