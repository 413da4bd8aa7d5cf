/// A parsed JSON value. Objects keep their members in input order.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The value and its text as written (for error messages).
    case number(Double, text: String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a, _), .number(let b, _)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The kind of value, for error messages: `a string`, `an object`...
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A short rendering for error messages; long strings and containers are abbreviated.
    var excerpt: String {
        switch self {
        case .null: "null"
        case .bool(let bool): bool ? "true" : "false"
        case .number(_, let text): text
        case .string(let string):
            string.count > 60 ? JSONText.quoted(String(string.prefix(60))) + "…" : JSONText.quoted(string)
        case .array: "[…]"
        case .object: "{…}"
        }
    }
}

/// A JSON syntax error at a byte offset.
struct JSONSyntaxError: Error, Equatable {
    var offset: Int
    var reason: String
}

/// A strict RFC 8259 parser over UTF-8 bytes: one value, surrounded only by whitespace.
/// Duplicate object keys, invalid UTF-8, lone surrogates and nesting deeper than
/// `maximumDepth` are errors.
struct JSONParser {
    static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private func error(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character \(Self.describe(bytes[index]))")
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let literalBytes = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - index >= literalBytes.count,
            zip(bytes[index...], literalBytes).allSatisfy({ $0 == $1 })
        else { throw error("invalid literal, expected \(literal)") }
        index += literalBytes.count
    }

    private mutating func enterContainer() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let keyOffset = index
            let key = try parseString()
            if members.contains(where: { $0.key == key }) {
                throw JSONSyntaxError(offset: keyOffset, reason: "duplicate key \(JSONText.quoted(key))")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            } else {
                throw error("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("leading zero in a number") }
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // The grammar was checked above, so Double(_:) accepts it; overflow yields ±infinity.
        guard let value = Double(text) else { throw JSONSyntaxError(offset: start, reason: "invalid number \(text)") }
        return .number(value, text: text)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let quoteOffset = index
        index += 1
        let start = index
        var hasEscapes = false
        while true {
            guard index < bytes.count else { throw JSONSyntaxError(offset: quoteOffset, reason: "unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw error("control character in a string") }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                index += 2
            } else {
                index += 1
            }
        }
        let end = index
        index += 1  // closing quote
        if !hasEscapes {
            guard let string = String(validating: bytes[start..<end], as: UTF8.self) else {
                throw JSONSyntaxError(offset: start, reason: "invalid UTF-8 in a string")
            }
            return string
        }
        return try unescape(start..<end)
    }

    /// Decodes a string body containing backslash escapes.
    private func unescape(_ range: Range<Int>) throws(JSONSyntaxError) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(range.count)
        var position = range.lowerBound
        while position < range.upperBound {
            let byte = bytes[position]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                position += 1
                continue
            }
            guard position + 1 < range.upperBound else {
                throw JSONSyntaxError(offset: position, reason: "incomplete escape")
            }
            let escaped = bytes[position + 1]
            position += 2
            switch escaped {
            case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                let escapeOffset = position - 2
                var code = try hexQuad(at: position, limit: range.upperBound)
                position += 4
                if (0xD800...0xDBFF).contains(code) {
                    guard position + 6 <= range.upperBound, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { throw JSONSyntaxError(offset: escapeOffset, reason: "unpaired surrogate escape") }
                    let low = try hexQuad(at: position + 2, limit: range.upperBound)
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw JSONSyntaxError(offset: escapeOffset, reason: "unpaired surrogate escape")
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    position += 6
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw JSONSyntaxError(offset: escapeOffset, reason: "unpaired surrogate escape")
                }
                guard let scalar = Unicode.Scalar(code) else {
                    throw JSONSyntaxError(offset: escapeOffset, reason: "invalid \\u escape")
                }
                utf8.append(contentsOf: String(scalar).utf8)
            default:
                throw JSONSyntaxError(offset: position - 2, reason: "invalid escape \\\(Self.describe(escaped))")
            }
        }
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw JSONSyntaxError(offset: range.lowerBound, reason: "invalid UTF-8 in a string")
        }
        return string
    }

    private func hexQuad(at position: Int, limit: Int) throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= limit else { throw JSONSyntaxError(offset: position, reason: "incomplete \\u escape") }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[position + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError(offset: position + offset, reason: "invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
