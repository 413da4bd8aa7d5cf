import Foundation

/// The 8-byte key of an ANT network. The ANT+ key is given to ANT+ adopters; ingestd takes it from configuration
/// and never prints it: `description` and every error about it leave the bytes out.
public struct ANTNetworkKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let bytes: [UInt8]

    /// `ant-network-key=<16 hex digits>` (spaces, colons, commas and `0x` prefixes allowed) or
    /// `ant-network-key=@FILE`, or `ant-network-key-file=FILE`: a file holding the hex digits.
    public static let optionName = "ant-network-key"
    public static let fileOptionName = "ant-network-key-file"

    public init(bytes: [UInt8]) throws(ANTNetworkKeyError) {
        guard bytes.count == 8 else { throw .wrongLength(digits: bytes.count * 2) }
        self.bytes = bytes
    }

    /// Reads hex digits, ignoring separators.
    public init(hex text: String) throws(ANTNetworkKeyError) {
        var cleaned = text.lowercased().replacingOccurrences(of: "0x", with: "")
        cleaned.removeAll { $0.isWhitespace || $0 == ":" || $0 == "," || $0 == "-" }
        guard cleaned.allSatisfy(\.isHexDigit) else { throw .notHex }
        guard cleaned.count == 16 else { throw .wrongLength(digits: cleaned.count) }
        var bytes: [UInt8] = []
        var index = cleaned.startIndex
        while index < cleaned.endIndex {
            let next = cleaned.index(index, offsetBy: 2)
            guard let byte = UInt8(cleaned[index..<next], radix: 16) else { throw .notHex }
            bytes.append(byte)
            index = next
        }
        try self.init(bytes: bytes)
    }

    /// The key from the adapter options (value, `@FILE` or the file option).
    public init(options: [String: String], readFile: (String) throws -> String = { try String(contentsOfFile: $0, encoding: .utf8) })
        throws(ANTNetworkKeyError) {
        let path: String
        if let value = options[Self.optionName] {
            guard value.hasPrefix("@") else {
                try self.init(hex: value)
                return
            }
            path = String(value.dropFirst())
        } else if let file = options[Self.fileOptionName] {
            path = file
        } else {
            throw .missing
        }
        let text: String
        do {
            text = try readFile(path)
        } catch {
            throw .unreadableFile(path: path, reason: "\(error.localizedDescription)")
        }
        try self.init(hex: text)
    }

    /// Eight zero bytes: what a replayed session sends when neither the options nor the capture give a key
    /// (nothing is transmitted when replaying).
    public static let placeholder = ANTNetworkKey(unchecked: [UInt8](repeating: 0, count: 8))

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var description: String { "ANT network key (8 bytes, not shown)" }
    public var debugDescription: String { description }
    /// `dump` and reflection show no bytes either.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// Why the network key could not be taken. The key's bytes are never part of the message.
public enum ANTNetworkKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    case missing
    case notHex
    case wrongLength(digits: Int)
    case unreadableFile(path: String, reason: String)

    public var description: String {
        let how = "give the ANT+ network key (8 bytes, 16 hex digits, published to ANT+ adopters by thisisant.com) "
            + "as --adapter-option ant-network-key=@FILE with the hex digits in FILE (readable by ingestd only), "
            + "or ant-network-key=<hex>"
        switch self {
        case .missing:
            return "ant-plus: no ANT+ network key is configured; " + how
        case .notHex:
            return "ant-plus: the ANT+ network key has characters that are not hex digits; " + how
        case .wrongLength(let digits):
            return "ant-plus: the ANT+ network key has \(digits) hex digits, 16 are needed; " + how
        case .unreadableFile(let path, let reason):
            return "ant-plus: cannot read the ANT+ network key file \(path): \(reason); " + how
        }
    }
}
