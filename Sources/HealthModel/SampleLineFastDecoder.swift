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
    private let devices: RecentDeviceObjects?

    private init(bytes: UnsafeBufferPointer<UInt8>, devices: RecentDeviceObjects?) {
        self.bytes = bytes
        self.devices = devices
    }

    /// The sample in `bytes`, or nil when the full decoder must look at the line. `devices`:
    /// device objects of earlier lines, whose bytes need no parsing again.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, defaultSource: String, makeUUID: () -> UUID,
        devices: RecentDeviceObjects? = nil
    ) -> QuantitySample? {
        var reader = SampleLineFastDecoder(bytes: bytes, devices: devices)
        return reader.decodeSample(defaultSource: defaultSource, makeUUID: makeUUID)
    }

    // MARK: The object

    /// Bits of the sample fields seen so far (a repeated key gives up).
    private enum Field: UInt16 {
        case uuid = 1, type = 2, value = 4, unit = 8, start = 16, end = 32, source = 64, device = 128, metadata = 256
    }

    private mutating func decodeSample(defaultSource: String, makeUUID: () -> UUID) -> QuantitySample? {
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
                guard let text = plainString(), let named = QuantityType.named(String(decoding: text, as: UTF8.self))
                else { return nil }
                type = named
            case .value:
                guard let number = number(), number.value.isFinite else { return nil }
                value = number.value
            case .unit:
                guard let text = plainString(), let parsed = UnitCache.shared.unit(String(decoding: text, as: UTF8.self))
                else { return nil }
                unit = parsed
            case .start:
                guard let text = plainString(), let date = ISO8601DateTime.date(fromUTF8: UnsafeBufferPointer(rebasing: text))
                else { return nil }
                start = date
            case .end:
                guard let text = plainString(), let date = ISO8601DateTime.date(fromUTF8: UnsafeBufferPointer(rebasing: text))
                else { return nil }
                end = date
            case .source:
                // Non-empty, and no control characters (the plain string has no C0 bytes; C1 ones
                // are U+0080...U+009F, encoded 0xC2 0x80...0x9F, and DEL is 0x7F).
                guard let text = plainString(), !text.isEmpty, !Self.containsControlCharacter(text) else { return nil }
                source = String(decoding: text, as: UTF8.self)
            case .device:
                guard let parsed = decodeDevice() else { return nil }
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
        return QuantitySample(
            uuid: uuid ?? makeUUID(), type: type, quantity: Quantity(value: value, unit: unit),
            start: start, end: end, source: source ?? defaultSource, device: device, metadata: metadata)
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

    private static let deviceKeys: [String] = Device().fields.map(\.key)

    private mutating func decodeDevice() -> Device? {
        let start = index
        if let devices, let known = devices.device(at: UnsafeBufferPointer(rebasing: bytes[start...])) {
            index += known.length
            return known.device
        }
        guard let device = parseDevice() else { return nil }
        devices?.remember(UnsafeBufferPointer(rebasing: bytes[start..<index]), device)
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
        for (position, key) in Self.deviceKeys.enumerated() {
            guard let value = values[position] else { continue }
            switch key {
            case "name": device.name = value
            case "manufacturer": device.manufacturer = value
            case "model": device.model = value
            case "hardwareVersion": device.hardwareVersion = value
            case "firmwareVersion": device.firmwareVersion = value
            case "softwareVersion": device.softwareVersion = value
            case "localIdentifier": device.localIdentifier = value
            case "udiDeviceIdentifier": device.udiDeviceIdentifier = value
            default: return nil
            }
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
                guard let number = number() else { return false }
                if MetadataKey.canonical(key) == MetadataKey.syncVersion, let version = Int(number.text) {
                    metadata.syncVersion = version  // exact, from the digits (a Double cannot hold 2^63 - 1)
                    value = nil
                } else {
                    guard number.value.isFinite else { return false }
                    value = .number(number.value)
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
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var asciiOnly = true
        while index < bytes.count {
            let byte = bytes[index]
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

    /// A number in JSON's grammar: its value (±infinity when it overflows) and its text.
    private mutating func number() -> (value: Double, text: String)? {
        let start = index
        _ = consume(UInt8(ascii: "-"))
        guard let first = peek, Self.isDigit(first) else { return nil }
        index += 1
        if first == UInt8(ascii: "0") {
            if let next = peek, Self.isDigit(next) { return nil }
        } else {
            skipDigits()
        }
        if consume(UInt8(ascii: ".")) {
            guard let next = peek, Self.isDigit(next) else { return nil }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let next = peek, Self.isDigit(next) else { return nil }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text) else { return nil }
        return (value, text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek, Self.isDigit(byte) { index += 1 }
    }

    private static func containsControlCharacter(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var previous: UInt8 = 0
        for byte in text {
            if byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) { return true }
            previous = byte
        }
        return false
    }

    /// A canonical `8-4-4-4-12` hex uuid (either case), as `UUID(uuidString:)` reads it.
    static func uuid(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var position = text.startIndex
        let valid = withUnsafeMutableBytes(of: &bytes) { output -> Bool in
            for byteIndex in 0..<16 {
                if byteIndex == 4 || byteIndex == 6 || byteIndex == 8 || byteIndex == 10 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = hexDigit(text[position]), let low = hexDigit(text[position + 1]) else { return false }
                output[byteIndex] = high << 4 | low
                position += 2
            }
            return true
        }
        return valid ? UUID(uuid: bytes) : nil
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The device objects of the last few plain sample lines, as their bytes (`{` to `}`) and the
/// device they decode to: a file repeats a handful of devices line after line, and the next line
/// whose bytes at its `device` value start with one of them holds that very object (it was
/// parsed whole from those bytes), so it gets the same `Device` (its strings shared, not made
/// again). Bounded: `limit` objects of at most `maximumBytes` each.
final class RecentDeviceObjects: Sendable {
    static let limit = 8
    static let maximumBytes = 512
    private struct Entries {
        var objects: [(bytes: [UInt8], device: Device)] = []
        var next = 0
    }
    private let entries = Mutex(Entries())

    /// The device whose object `bytes` start with, and the object's length.
    func device(at bytes: UnsafeBufferPointer<UInt8>) -> (device: Device, length: Int)? {
        guard let base = bytes.baseAddress else { return nil }
        return entries.withLock { entries in
            for entry in entries.objects where entry.bytes.count <= bytes.count {
                let same = entry.bytes.withUnsafeBufferPointer { stored in
                    stored.baseAddress.map { memcmp($0, base, stored.count) == 0 } ?? false
                }
                if same { return (entry.device, entry.bytes.count) }
            }
            return nil
        }
    }

    /// Keeps the object `bytes` decoded to `device` (replacing the oldest when full).
    func remember(_ bytes: UnsafeBufferPointer<UInt8>, _ device: Device) {
        guard bytes.count <= Self.maximumBytes else { return }
        entries.withLock { entries in
            if entries.objects.count < Self.limit {
                entries.objects.append((Array(bytes), device))
            } else {
                entries.objects[entries.next] = (Array(bytes), device)
                entries.next = (entries.next + 1) % Self.limit
            }
        }
    }
}

/// Parsed units by their text: a line's unit is parsed once per distinct spelling, not per
/// line. Bounded: when `capacity` spellings are held the cache starts over, so hostile input
/// with ever new units costs a parse per line, never memory.
public final class UnitCache: Sendable {
    public static let shared = UnitCache(capacity: 256)

    private let capacity: Int
    private let units = Mutex<[String: Unit]>([:])

    init(capacity: Int) { self.capacity = capacity }

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
