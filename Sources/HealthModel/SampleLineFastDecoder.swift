import Foundation
import Synchronization

/// The one-pass decoder of a quantity-sample line: reads the bytes straight into a
/// `QuantitySample`, with no intermediate JSON tree.
///
/// It is deliberately narrow. It takes the lines ingestd itself writes (and the common hand-written
/// ones): one object with the sample fields, strings without backslash escapes, a flat `device`
/// and a flat `metadata`. Anything else — a correlation, an escape, `null`, an unknown or repeated
/// key, any value the full decoder would refuse — makes it give up (`nil`), and
/// `HealthRecordDecoder` then decodes the line the full way, which gives the same record or the
/// precise error. So the fast path never accepts a line the full decoder refuses, and never
/// decides an error message (`HealthRecordDecoderEquivalenceTests` holds it to that).
struct SampleLineFastDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The sample in `bytes`, or nil when the full decoder must look at the line.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, defaultSource: String, makeUUID: () -> UUID,
        recent: RecentSampleFields? = nil
    ) -> QuantitySample? {
        guard case .sample(let sample) = decodeRecord(bytes, defaultSource: defaultSource, makeUUID: makeUUID, recent: recent)
        else { return nil }
        return sample
    }

    /// The sample in `bytes` as a record (made in place, not copied into one), or nil when the
    /// full decoder must look at the line. `recent`: the field values of earlier lines, whose
    /// bytes need no parsing again (taken only when no other thread holds them: a line decoded
    /// without them gives the same sample).
    static func decodeRecord(
        _ bytes: UnsafeBufferPointer<UInt8>, defaultSource: String, makeUUID: () -> UUID,
        recent: RecentSampleFields? = nil
    ) -> HealthRecord? {
        var reader = SampleLineFastDecoder(bytes: bytes)
        if let recent, let decoded = recent.values.withLockIfAvailable({ values -> HealthRecord? in
            reader.decodeSample(defaultSource: defaultSource, makeUUID: makeUUID, recent: &values, unitSpellings: recent.unitSpellings)
        }) {
            return decoded
        }
        var scratch = RecentSampleFields.Values()
        return reader.decodeSample(defaultSource: defaultSource, makeUUID: makeUUID, recent: &scratch, unitSpellings: recent?.unitSpellings)
    }

    // MARK: The object

    /// Bits of the sample fields seen so far (a repeated key gives up).
    private enum Field: UInt16 {
        case uuid = 1, type = 2, value = 4, unit = 8, start = 16, end = 32, source = 64, device = 128, metadata = 256
    }

    private mutating func decodeSample(
        defaultSource: String, makeUUID: () -> UUID, recent: inout RecentSampleFields.Values, unitSpellings: UnitCache?
    ) -> HealthRecord? {
        skipWhitespace()
        guard consume(UInt8(ascii: "{")) else { return nil }
        var seen: UInt16 = 0
        var uuid: UUID?
        var type: QuantityType?
        var value: Double?
        var unit: Unit?
        var start: Date?
        var end: Date?
        var source: String?
        var device: Device?
        var metadata = Metadata()
        var startText: Slice<UnsafeBufferPointer<UInt8>>?
        skipWhitespace()
        if peek == UInt8(ascii: "}") { return nil }  // `{}` lacks fields: the full decoder names them
        while true {
            skipWhitespace()
            guard let key = plainString(), let field = Self.field(key) else { return nil }
            guard seen & field.rawValue == 0 else { return nil }
            seen |= field.rawValue
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            switch field {
            case .uuid:
                guard let text = plainString(), let parsed = Self.uuid(text) else { return nil }
                uuid = parsed
            case .type:
                guard let text = plainString() else { return nil }
                if let known = recent.types.value(bytes: UnsafeBufferPointer(rebasing: text)) {
                    type = known
                } else {
                    guard let named = QuantityType.named(String(decoding: text, as: UTF8.self)) else { return nil }
                    recent.types.remember(named, bytes: UnsafeBufferPointer(rebasing: text))
                    type = named
                }
            case .value:
                guard let number = number(), let parsed = doubleValue(number), parsed.isFinite else { return nil }
                value = parsed
            case .unit:
                guard let text = plainString() else { return nil }
                if let known = recent.units.value(bytes: UnsafeBufferPointer(rebasing: text)) {
                    unit = known
                } else {
                    let spelling = String(decoding: text, as: UTF8.self)
                    let spelled = if let unitSpellings { unitSpellings.unit(spelling) } else { try? Unit(from: spelling) }
                    guard let parsed = spelled else { return nil }
                    recent.units.remember(parsed, bytes: UnsafeBufferPointer(rebasing: text))
                    unit = parsed
                }
            case .start:
                guard let text = plainString(), let date = ISO8601DateTime.date(fromUTF8: UnsafeBufferPointer(rebasing: text))
                else { return nil }
                start = date
                startText = text
            case .end:
                guard let text = plainString() else { return nil }
                // An instantaneous sample writes the same text twice: the same instant.
                if let start, let startText, Self.sameBytes(startText, text) {
                    end = start
                } else {
                    guard let date = ISO8601DateTime.date(fromUTF8: UnsafeBufferPointer(rebasing: text)) else { return nil }
                    end = date
                }
            case .source:
                guard let text = plainString() else { return nil }
                if let known = recent.sources.value(bytes: UnsafeBufferPointer(rebasing: text)) {
                    source = known
                } else {
                    // Non-empty, and no control characters (the plain string has no C0 bytes; C1 ones
                    // are U+0080...U+009F, encoded 0xC2 0x80...0x9F, and DEL is 0x7F).
                    guard !text.isEmpty, !Self.containsControlCharacter(text) else { return nil }
                    let named = String(decoding: text, as: UTF8.self)
                    recent.sources.remember(named, bytes: UnsafeBufferPointer(rebasing: text))
                    source = named
                }
            case .device:
                guard let parsed = decodeDevice(recent: &recent.devices) else { return nil }
                device = parsed
            case .metadata:
                guard decodeMetadata(into: &metadata) else { return nil }
            }
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            guard consume(UInt8(ascii: "}")) else { return nil }
            break
        }
        skipWhitespace()
        guard index == bytes.count, let type, let value, let unit, let start, let end else { return nil }
        return .sample(QuantitySample(
            uuid: uuid ?? makeUUID(), type: type, quantity: Quantity(value: value, unit: unit),
            start: start, end: end, source: source ?? defaultSource, device: device, metadata: metadata))
    }

    private static func field(_ key: Slice<UnsafeBufferPointer<UInt8>>) -> Field? {
        switch key.count {
        case 3: return same(key, "end") ? .end : nil
        case 4:
            if same(key, "uuid") { return .uuid }
            if same(key, "type") { return .type }
            return same(key, "unit") ? .unit : nil
        case 5:
            if same(key, "value") { return .value }
            return same(key, "start") ? .start : nil
        case 6:
            if same(key, "source") { return .source }
            return same(key, "device") ? .device : nil
        case 8: return same(key, "metadata") ? .metadata : nil
        default: return nil
        }
    }

    /// Whether `key` holds the bytes of `literal` (one memcmp: `elementsEqual` on a string's
    /// UTF-8 view walked it byte by byte, a tenth of the decoding).
    private static func same(_ key: Slice<UnsafeBufferPointer<UInt8>>, _ literal: StaticString) -> Bool {
        guard key.count == literal.utf8CodeUnitCount else { return false }
        guard let base = key.base.baseAddress else { return key.isEmpty }
        return memcmp(base + key.startIndex, literal.utf8Start, key.count) == 0
    }

    /// Whether two byte runs are equal.
    private static func sameBytes(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard a.count == b.count else { return false }
        guard let aBase = a.base.baseAddress, let bBase = b.base.baseAddress else { return a.isEmpty }
        return memcmp(aBase + a.startIndex, bBase + b.startIndex, a.count) == 0
    }

    private static let deviceKeys: [String] = Device.Field.allCases.map(\.rawValue)

    private mutating func decodeDevice(recent devices: inout RecentByBytes<Device>) -> Device? {
        let start = index
        if let known = devices.prefixMatch(of: UnsafeBufferPointer(rebasing: bytes[start...])) {
            index += known.length
            return known.value
        }
        guard let device = parseDevice() else { return nil }
        devices.remember(device, bytes: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        return device
    }

    private mutating func parseDevice() -> Device? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var values = [String?](repeating: nil, count: Self.deviceKeys.count)
        skipWhitespace()
        if !consume(UInt8(ascii: "}")) {
            while true {
                skipWhitespace()
                guard let key = plainString(),
                    let position = Self.deviceKeys.firstIndex(where: { $0.utf8.count == key.count && $0.utf8.elementsEqual(key) }),
                    values[position] == nil
                else { return nil }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                guard let text = plainString() else { return nil }
                values[position] = String(decoding: text, as: UTF8.self)
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                guard consume(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        var device = Device()
        for (position, field) in Device.Field.allCases.enumerated() {
            guard let value = values[position] else { continue }
            device[field] = value
        }
        return device
    }

    /// Reads a flat metadata object with the full decoder's rules (`HealthRecordDecoder`).
    private mutating func decodeMetadata(into metadata: inout Metadata) -> Bool {
        guard consume(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return true }
        var keys: [Slice<UnsafeBufferPointer<UInt8>>] = []
        while true {
            skipWhitespace()
            guard let keyBytes = plainString(), !keys.contains(where: { $0.elementsEqual(keyBytes) }),
                keys.count < 256
            else { return false }
            keys.append(keyBytes)
            let key = String(decoding: keyBytes, as: UTF8.self)
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            let value: MetadataValue?
            switch peek {
            case UInt8(ascii: "\""):
                guard let text = plainString() else { return false }
                value = .string(String(decoding: text, as: UTF8.self))
            case UInt8(ascii: "t"):
                guard consumeLiteral("true") else { return false }
                value = .bool(true)
            case UInt8(ascii: "f"):
                guard consumeLiteral("false") else { return false }
                value = .bool(false)
            default:
                guard let number = number(), let parsed = doubleValue(number) else { return false }
                if MetadataKey.canonical(key) == MetadataKey.syncVersion,
                    let version = Int(String(decoding: bytes[number.range], as: UTF8.self)) {
                    metadata.syncVersion = version  // exact, from the digits (a Double cannot hold 2^63 - 1)
                    value = nil
                } else {
                    guard parsed.isFinite else { return false }
                    value = .number(parsed)
                }
            }
            if let value {
                do { try metadata.set(value, forKey: key) } catch { return false }
            }
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "}"))
        }
    }

    // MARK: Tokens

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func consumeLiteral(_ literal: String) -> Bool {
        let count = literal.utf8.count
        guard bytes.count - index >= count, bytes[index..<index + count].elementsEqual(literal.utf8) else { return false }
        index += count
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// A string without escapes and with valid UTF-8, as the bytes between its quotes; nil for
    /// anything else (an escape, a control character, invalid UTF-8, no closing quote).
    private mutating func plainString() -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard consume(UInt8(ascii: "\"")), let base = bytes.baseAddress else { return nil }
        let start = index
        var asciiOnly = true
        // Eight bytes at a time while none of them is a quote, a backslash, a control character
        // or a byte of a multi-byte character; the byte loop below decides about the rest.
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            // A byte below 0x20 (or a zero byte of the comparisons) makes `x - 0x20…` borrow into its high bit.
            let special = ((word &- ones &* 0x20) | (quotes &- ones) | (backslashes &- ones) | word) & highs
            if special != 0 { break }
            index += 8
        }
        while index < bytes.count {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                let text = bytes[start..<index]
                index += 1
                if !asciiOnly, String(validating: text, as: UTF8.self) == nil { return nil }
                return text
            }
            if byte < 0x20 || byte == UInt8(ascii: "\\") { return nil }
            if byte >= 0x80 { asciiOnly = false }
            index += 1
        }
        return nil
    }

    /// A number in JSON's grammar: where its text lies, and whether it is a plain decimal
    /// (no exponent) of at most 15 digits, which `doubleValue` reads without the text.
    private struct NumberToken {
        var range: Range<Int>
        var negative: Bool
        /// The digits as one integer (exact below 10^15), and how many of them follow the point.
        var mantissa: UInt64
        var fractionDigits: Int
        var isShortDecimal: Bool
    }

    private mutating func number() -> NumberToken? {
        let start = index
        let negative = consume(UInt8(ascii: "-"))
        guard let first = peek, Self.isDigit(first) else { return nil }
        index += 1
        var mantissa = UInt64(first &- UInt8(ascii: "0"))
        var digits = 1
        if first == UInt8(ascii: "0") {
            if let next = peek, Self.isDigit(next) { return nil }
        } else {
            accumulateDigits(into: &mantissa, count: &digits)
        }
        var fractionDigits = 0
        if consume(UInt8(ascii: ".")) {
            guard let next = peek, Self.isDigit(next) else { return nil }
            let before = digits
            accumulateDigits(into: &mantissa, count: &digits)
            fractionDigits = digits - before
        }
        var exponent = false
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            exponent = true
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let next = peek, Self.isDigit(next) else { return nil }
            skipDigits()
        }
        return NumberToken(range: start..<index, negative: negative, mantissa: mantissa, fractionDigits: fractionDigits,
                           isShortDecimal: !exponent && digits <= 15)
    }

    /// The number's value as `Double(text)` gives it (nil where that is nil, as for an overflow).
    /// A decimal of at most 15 digits is its integer divided by a power of ten, both exact in a
    /// Double, so the one rounding of the division is the correctly rounded value of the text.
    private func doubleValue(_ number: NumberToken) -> Double? {
        if number.isShortDecimal, number.fractionDigits < Self.powersOfTen.count {
            let magnitude = Double(number.mantissa) / Self.powersOfTen[number.fractionDigits]
            return number.negative ? -magnitude : magnitude
        }
        return Double(String(decoding: bytes[number.range], as: UTF8.self))
    }

    /// 10^0 ... 10^22, every one exact in a Double.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { product, _ in product * 10 }
    }

    /// Reads digits on, adding the first 15 to `mantissa` (later ones only counted).
    private mutating func accumulateDigits(into mantissa: inout UInt64, count: inout Int) {
        while let byte = peek, Self.isDigit(byte) {
            if count < 15 { mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0")) }
            count += 1
            index += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek, Self.isDigit(byte) { index += 1 }
    }

    private static func containsControlCharacter(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var previous: UInt8 = 0
        for byte in text {
            if byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { return true }
            previous = byte
        }
        return false
    }

    /// A canonical `8-4-4-4-12` hex uuid (either case), as `UUID(uuidString:)` reads it.
    static func uuid(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> UUID? {
        guard text.count == 36, let base = text.base.baseAddress else { return nil }
        let digits = base + text.startIndex
        guard digits[8] == UInt8(ascii: "-"), digits[13] == UInt8(ascii: "-"), digits[18] == UInt8(ascii: "-"),
            digits[23] == UInt8(ascii: "-")
        else { return nil }
        // The 32 digits as two 64-bit halves; every digit's value ORed into `invalid` too, where
        // a byte that is no hex digit (0xFF) leaves a high bit.
        // The digits' values are looked up, not branched on: they are random, and so would the
        // branches be.
        var invalid: UInt8 = 0
        let (high, low) = hexValues.withUnsafeBufferPointer { table in
            func half(_ positions: Range<Int>) -> UInt64 {
                var value: UInt64 = 0
                for position in positions where position != 8 && position != 13 && position != 23 {
                    let digit = table[Int(digits[position])]
                    invalid |= digit
                    value = value << 4 | UInt64(digit & 0x0F)
                }
                return value
            }
            return (half(0..<18), half(19..<36))
        }
        guard invalid & 0xF0 == 0 else { return nil }
        func byte(_ value: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
        return UUID(uuid: (
            byte(high, 56), byte(high, 48), byte(high, 40), byte(high, 32),
            byte(high, 24), byte(high, 16), byte(high, 8), byte(high, 0),
            byte(low, 56), byte(low, 48), byte(low, 40), byte(low, 32),
            byte(low, 24), byte(low, 16), byte(low, 8), byte(low, 0)))
    }

    /// The value of every byte as a hex digit (either case); 0xFF for the bytes that are none.
    private static let hexValues: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }
}

/// The field values of the last few plain sample lines, by their bytes: a file repeats a handful
/// of types, units, sources and devices line after line, and a value whose bytes are those of
/// an earlier one is that very value (it was parsed from those bytes), so the next line gets the
/// same `QuantityType`, `Unit`, `String` and `Device` (their storage shared, not made again).
/// One decoder's lines take them in turn: a line decoded while another thread holds them is
/// decoded without them.
final class RecentSampleFields: Sendable {
    /// The remembered values of each field.
    struct Values: Sendable {
        var types = RecentByBytes<QuantityType>(ways: Self.ways, maximumBytes: Self.maximumBytes)
        var units = RecentByBytes<Unit>(ways: Self.ways, maximumBytes: Self.maximumBytes)
        var sources = RecentByBytes<String>(ways: Self.ways, maximumBytes: Self.maximumBytes)
        /// Device objects as their bytes (`{` to `}`); the next line whose bytes at its `device`
        /// value start with one of them holds that very object.
        var devices = RecentByBytes<Device>(ways: Self.ways, maximumBytes: Self.maximumBytes)

        /// Values kept per field, and the longest bytes kept.
        static var ways: Int { 8 }
        static var maximumBytes: Int { 512 }
    }

    let values = Mutex(Values())
    /// Every unit spelling parsed, beyond the few recent ones (shared by the lines decoded
    /// without `values`).
    let unitSpellings = UnitCache(capacity: 256)
}

/// Parsed units by their text: a line's unit is parsed once per distinct spelling, not per
/// line. Bounded: when `capacity` spellings are held the cache starts over, so hostile input
/// with ever new units costs a parse per line, never memory.
public final class UnitCache: Sendable {
    private let capacity: Int
    private let units = Mutex<[String: Unit]>([:])

    /// An empty cache of at most `capacity` spellings.
    public init(capacity: Int) { self.capacity = capacity }

    /// How many spellings are held.
    var count: Int { units.withLock { $0.count } }

    /// The unit `text` names, or nil when it is not a valid unit (not cached).
    public func unit(_ text: String) -> Unit? {
        if let cached = units.withLock({ $0[text] }) { return cached }
        guard let unit = try? Unit(from: text) else { return nil }
        units.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[text] = unit
        }
        return unit
    }
}
