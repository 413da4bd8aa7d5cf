/// Writing JSON strings and numbers by hand (the encoder keeps a fixed key order).
public enum JSONText {
    /// `string` as a JSON string literal, quotes included.
    public static func quoted(_ string: String) -> String {
        var text = ""
        appendQuoted(string, to: &text)
        return text
    }

    /// Appends `string` as a JSON string literal in UTF-8 to `bytes`, as `appendQuoted(_:to:)`
    /// writes it to text.
    public static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        // Most strings need no escape: their bytes are copied whole.
        let plain = string.withUTF8 { utf8 in
            if utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return false }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if !plain { bytes.append(contentsOf: quoted(string).utf8) }
    }

    /// Appends `string` as a JSON string literal: `"` and `\` escaped, control characters as
    /// `\n`, `\t`... or `\u00XX`; everything else (including non-ASCII) written as UTF-8.
    public static func appendQuoted(_ string: String, to text: inout String) {
        text.append("\"")
        // Most strings (type identifiers, units, sources) need no escape: appended whole.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            text.append(string)
            text.append("\"")
            return
        }
        var pendingStart = string.unicodeScalars.startIndex
        var index = pendingStart
        let scalars = string.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let escape: String?
            switch scalar {
            case "\"": escape = "\\\""
            case "\\": escape = "\\\\"
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            case "\u{08}": escape = "\\b"
            case "\u{0C}": escape = "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    escape = nil
                }
            }
            if let escape {
                text.append(contentsOf: string[pendingStart..<index])
                text.append(escape)
                pendingStart = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        text.append(contentsOf: string[pendingStart..<scalars.endIndex])
        text.append("\"")
    }
}

/// Number formatting shared by the JSON writer and descriptions.
public enum JSONNumber {
    /// The shortest text that reads back as exactly `value`, without a `.0` on integral values:
    /// `72.35`, `72`, `0.97`, `1e-07`. Non-finite values (which JSON cannot express) give `null`.
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 {
            // Integral and exactly representable as Int: no fraction, no exponent.
            return value == 0 ? "0" : String(Int64(value))
        }
        return value.description
    }
}
