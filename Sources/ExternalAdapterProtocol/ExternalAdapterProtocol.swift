import Foundation

/// The fixed facts of the external adapter protocol (versions 1 and 2, described in
/// `Plugins/README.md`): executable naming, the adapter id syntax and the line size limit both
/// sides keep to.
public enum ExternalAdapterProtocol {
    /// The newest protocol version this build speaks (2: conversations with connected devices
    /// and `committed`). `--describe` announces the plugin's version as `"protocol"`.
    public static let version = 2
    /// The versions a plugin may announce; a version-1 plugin is run as version 1.
    public static let supportedVersions: ClosedRange<Int> = 1...2
    /// Plugin executables are named `ingestd-adapter-<id>`.
    public static let executablePrefix = "ingestd-adapter-"
    /// The longest line (without its newline) either side accepts: 64 KiB.
    public static let maximumLineLength = 64 * 1024
    /// The longest adapter id.
    public static let maximumIDLength = 64
    /// The longest `namePattern` a descriptor may carry (it runs on every advertised name).
    public static let maximumNamePatternLength = 256

    /// Whether `id` is a kebab-case adapter id: lowercase letters and digits in groups joined by
    /// single hyphens, at most ``maximumIDLength`` characters (`xiaomi-scale`, `acme-bp-2`).
    public static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumIDLength else { return false }
        var previousWasHyphen = true  // forbids a leading hyphen
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                previousWasHyphen = false
            case UInt8(ascii: "-"):
                if previousWasHyphen { return false }
                previousWasHyphen = true
            default:
                return false
            }
        }
        return !previousWasHyphen
    }

    /// `ingestd-adapter-<id>`.
    public static func executableName(for id: String) -> String { executablePrefix + id }

    /// The id in an executable name `ingestd-adapter-<id>`, or nil when the name lacks the prefix.
    /// The id is returned as written; check it with ``isValidID(_:)``.
    public static func id(fromExecutableName name: String) -> String? {
        guard name.hasPrefix(executablePrefix) else { return nil }
        return String(name.dropFirst(executablePrefix.count))
    }
}

/// Lowercase hex without separators (`0a1bff`), the byte encoding of the protocol's JSON lines.
public enum CompactHex {
    /// `[0x0a, 0x1b, 0xff]` → `"0a1bff"`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Parses hex digits of either case (an even number of them); nil for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A JSON object key for reading objects whose members are checked one by one.
struct AnyJSONKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension DecodingError {
    /// `matches[1].ble.companyIDs[0]: expected UInt16`-style text for error messages.
    var pathAndReason: String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : "." + key.stringValue
                }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch self {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(Self.kind(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(Self.kind(type)), found null"
        case .keyNotFound(let key, let context):
            return "missing field \"\(path(context.codingPath + [key]))\""
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "not valid JSON"
        }
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is UInt16.Type, is UInt8.Type, is Int8.Type: "an integer"
        case is Double.Type: "a number"
        default: "\(type)"
        }
    }
}
