import Foundation
import HealthModel

/// One attribute of an XML start tag, its value with entities and character references resolved.
public struct XMLAttribute: Equatable, Sendable {
    public var name: String
    public var value: String
}

/// What `XMLPullReader` reports: element starts (a self-closing tag reports its end too) and ends.
/// Text, comments, processing instructions, CDATA and the DOCTYPE (internal subset included) are
/// passed over.
public enum XMLEvent: Equatable, Sendable {
    case start(name: String, attributes: [XMLAttribute])
    case end(name: String)
}

/// A streaming (pull, SAX-style) XML reader over a `ByteChunkSource`: the document is never in
/// memory, only a buffer around the current tag.
///
/// It checks what matters for reading a document safely: tags nest and match, attribute values
/// are quoted, entities are the five predefined ones or character references, names and values
/// are valid UTF-8. Bounds for untrusted input: one markup construct (a tag, a comment, the
/// DOCTYPE) at most `maximumMarkupBytes`, nesting at most `maximumDepth`, at most
/// `maximumAttributes` per tag. Errors name the byte offset in the document.
///
/// `next()` reports events with their names and values as strings; inside the module,
/// `withScanner` reads the same tags without strings (`XMLScanner.nextTag()`).
public final class XMLPullReader {
    public static let maximumMarkupBytes = 1 << 20
    public static let maximumDepth = 64
    public static let maximumAttributes = 256

    private let source: ByteChunkSource
    /// The reading state and its checks: a struct, so that reading a tag checks no exclusive
    /// access to class properties byte by byte.
    private var scanner: XMLScanner

    /// Bytes of the document read so far.
    public var documentOffset: Int { scanner.documentOffset }
    /// How far into the underlying file reading has come (for progress).
    public var fileOffset: Int { source.fileOffset }

    public init(source: ByteChunkSource, chunkSize: Int = 256 << 10) {
        self.source = source
        scanner = XMLScanner(source: source, chunkSize: max(16, chunkSize))
    }

    /// The next element event, or nil at the end of the document.
    public func next() throws(AppleHealthImportError) -> XMLEvent? { try scanner.next() }

    /// Runs `body` with the reading state, to read tags with `XMLScanner.nextTag()` (while it
    /// runs, only `fileOffset` may be asked of this reader).
    func withScanner<Result, Failure: Error>(_ body: (inout XMLScanner) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(&scanner)
    }
}

/// The state and checks of an `XMLPullReader`: `next()` reports events with names and values
/// as strings; `nextTag()` reports the same tags without making strings (the tag's name and
/// attributes stay byte ranges of the buffer, checked as `next()` checks them, until the next
/// call) for a reader that asks only for the values it uses (`AppleHealthExportReader`).
struct XMLScanner {
    private typealias Limits = XMLPullReader

    /// What `nextTag()` read: a start tag (a self-closing one is followed by its end) or an end tag.
    enum TagKind { case start, end }

    /// One attribute of the tag read last, as offsets into the buffer; its value checked
    /// (references, UTF-8) and, when it holds a reference or was decoded anyway, as a string.
    struct AttributeSpan {
        var nameStart: Int
        var nameEnd: Int
        var valueStart: Int
        var valueEnd: Int
        /// The value's UTF-8 length once its references are resolved.
        var decodedCount: Int
        /// The decoded value, made while checking it (always when it holds a reference).
        var decoded: String?
    }

    private let source: ByteChunkSource
    private let chunkSize: Int
    private var buffer: [UInt8] = []
    /// Index of the next unread byte in `buffer`.
    private var position = 0
    /// Document offset of `buffer[0]`.
    private var discarded = 0
    private var atEnd = false
    /// The names of the open elements, their bytes one after another, and where each one ends.
    private var openNameBytes: [UInt8] = []
    private var openNameEnds: [Int] = []
    /// The tag read last was self-closing: its end comes next.
    private var pendingEnd = false
    private var recentValues = RecentByBytes<String>(places: RecentAttributeValues.places, ways: RecentAttributeValues.ways,
                                                      maximumBytes: RecentAttributeValues.lengths.upperBound)
    private var sawRoot = false
    /// The name of the tag read last (offsets into `buffer`, valid until the next call).
    private var tagNameStart = 0
    private var tagNameEnd = 0
    /// The attributes of the start tag read last (valid until the next call).
    private(set) var tagAttributes: [AttributeSpan] = []

    /// Bytes of the document read so far.
    var documentOffset: Int { discarded + position }

    init(source: ByteChunkSource, chunkSize: Int) {
        self.source = source
        self.chunkSize = chunkSize
    }

    /// The next element event, or nil at the end of the document.
    mutating func next() throws(AppleHealthImportError) -> XMLEvent? {
        guard let kind = try nextTag() else { return nil }
        switch kind {
        case .start: return .start(name: tagName, attributes: attributes())
        case .end: return .end(name: tagName)
        }
    }

    // MARK: The tag read last

    /// The name of the tag `nextTag()` read last.
    var tagName: String { string(tagNameStart, tagNameEnd) }

    /// Whether the tag read last is named `name` (an ASCII name: its bytes decide).
    func tagNameIs(_ name: StaticString) -> Bool { bytesEqual(tagNameStart, tagNameEnd, name) }

    /// Whether attribute `index` of the tag read last is named `name` (an ASCII name).
    func attributeNameIs(_ index: Int, _ name: StaticString) -> Bool {
        let span = tagAttributes[index]
        return bytesEqual(span.nameStart, span.nameEnd, name)
    }

    /// The index of the attribute named `name` (ASCII), if the tag read last has one.
    func attributeIndex(_ name: StaticString) -> Int? {
        tagAttributes.indices.first { attributeNameIs($0, name) }
    }

    /// The value of attribute `index` of the tag read last, references resolved: the string
    /// made for the same bytes at the same place of a recent tag when there is one.
    mutating func attributeValue(_ index: Int) -> String {
        let span = tagAttributes[index]
        if let decoded = span.decoded { return decoded }
        // Checked plain UTF-8 without references: its bytes are the value.
        let from = span.valueStart, limit = span.valueEnd
        guard RecentAttributeValues.lengths.contains(limit - from), index < RecentAttributeValues.places else { return string(from, limit) }
        return buffer.withUnsafeBufferPointer { bytes in
            let raw = UnsafeBufferPointer(rebasing: bytes[from..<limit])
            if let known = recentValues.value(place: index, bytes: raw) { return known }
            let value = String(decoding: raw, as: UTF8.self)
            recentValues.remember(value, place: index, bytes: raw)
            return value
        }
    }

    /// Calls `body` with the UTF-8 bytes of attribute `index`'s value, references resolved.
    func withAttributeValue<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let span = tagAttributes[index]
        if var decoded = span.decoded { return decoded.withUTF8(body) }
        return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[span.valueStart..<span.valueEnd])) }
    }

    /// The attributes of the start tag read last, as strings.
    mutating func attributes() -> [XMLAttribute] {
        var attributes: [XMLAttribute] = []
        for index in tagAttributes.indices {
            attributes.append(XMLAttribute(name: string(tagAttributes[index].nameStart, tagAttributes[index].nameEnd), value: attributeValue(index)))
        }
        return attributes
    }

    /// Bytes of the names and values (resolved) of the start tag read last, 8 more for each.
    var attributeBytes: Int {
        var total = 0
        for span in tagAttributes { total += span.nameEnd - span.nameStart + span.decodedCount + 8 }
        return total
    }

    private func bytesEqual(_ from: Int, _ limit: Int, _ name: StaticString) -> Bool {
        guard limit - from == name.utf8CodeUnitCount else { return false }
        return buffer.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return name.utf8CodeUnitCount == 0 }
            return memcmp(base + from, name.utf8Start, name.utf8CodeUnitCount) == 0
        }
    }

    /// The checked UTF-8 text of `buffer[from..<limit]`.
    private func string(_ from: Int, _ limit: Int) -> String {
        buffer.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[from..<limit]), as: UTF8.self) }
    }

    // MARK: Tags

    /// The next tag, checked (a self-closing tag reports its start, then its end), or nil at the
    /// end of the document. Its name and attributes are read through the methods above.
    mutating func nextTag() throws(AppleHealthImportError) -> TagKind? {
        if pendingEnd {
            pendingEnd = false
            return .end
        }
        while true {
            // Text: passed over up to the next '<'.
            while true {
                let from = position
                let found = buffer.withUnsafeBufferPointer { bytes -> Int? in
                    guard let base = bytes.baseAddress, from < bytes.count,
                        let hit = memchr(base + from, Int32(UInt8(ascii: "<")), bytes.count - from)
                    else { return nil }
                    return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                }
                if let found {
                    position = found
                    break
                }
                position = buffer.count
                guard try fill() else {
                    guard openNameEnds.isEmpty else {
                        throw error("the document ends inside <\(openName(openNameEnds.count - 1))>", at: documentOffset)
                    }
                    guard sawRoot else { throw error("no root element", at: documentOffset) }
                    return nil
                }
            }
            guard try ensure(2, from: position) else { throw error("the document ends inside markup", at: documentOffset) }
            // `position` is the '<'; reading more moves it (the buffer is compacted), so tags
            // below take their start from it after each read.
            switch buffer[position + 1] {
            case UInt8(ascii: "?"):
                try skip(past: "?>", from: position)
            case UInt8(ascii: "!"):
                try skipDeclaration()
            case UInt8(ascii: "/"):
                let end = try tagEnd(from: position)
                let start = position
                let nameEnd = try parseName(start + 2, end, at: start)
                var after = nameEnd
                while after < end, isSpace(buffer[after]) { after += 1 }
                guard after == end else { throw error("unexpected text in the end tag </\(string(start + 2, nameEnd))>", at: discarded + after) }
                guard !openNameEnds.isEmpty else {
                    throw error("end tag </\(string(start + 2, nameEnd))> without a start tag", at: discarded + start)
                }
                guard closesInnermost(start + 2, nameEnd) else {
                    throw error("end tag </\(string(start + 2, nameEnd))> does not close <\(openName(openNameEnds.count - 1))>", at: discarded + start)
                }
                openNameEnds.removeLast()
                openNameBytes.removeSubrange((openNameEnds.last ?? 0)...)
                position = end + 1
                tagNameStart = start + 2
                tagNameEnd = nameEnd
                return .end
            default:
                let end = try tagEnd(from: position)
                let start = position
                guard openNameEnds.count < Limits.maximumDepth else {
                    throw error("elements nested deeper than \(Limits.maximumDepth)", at: discarded + start)
                }
                if openNameEnds.isEmpty, sawRoot { throw error("a second root element", at: discarded + start) }
                let selfClosing = buffer[end - 1] == UInt8(ascii: "/")
                let nameEnd = try parseName(start + 1, selfClosing ? end - 1 : end, at: start)
                try parseAttributes(nameEnd, selfClosing ? end - 1 : end)
                position = end + 1
                sawRoot = true
                tagNameStart = start + 1
                tagNameEnd = nameEnd
                if selfClosing {
                    pendingEnd = true
                } else {
                    openNameBytes.append(contentsOf: buffer[(start + 1)..<nameEnd])
                    openNameEnds.append(openNameBytes.count)
                }
                return .start
            }
        }
    }

    /// The name of open element `index` (0 the root).
    private func openName(_ index: Int) -> String {
        let from = index == 0 ? 0 : openNameEnds[index - 1]
        return String(decoding: openNameBytes[from..<openNameEnds[index]], as: UTF8.self)
    }

    /// Whether the end tag name `buffer[from..<limit]` is the innermost open element's: the same
    /// bytes, or (names beyond ASCII) the same string as Swift compares them.
    private func closesInnermost(_ from: Int, _ limit: Int) -> Bool {
        let count = openNameEnds.count
        let openStart = count < 2 ? 0 : openNameEnds[count - 2]
        let open = openNameBytes[openStart..<openNameEnds[count - 1]]
        let name = buffer[from..<limit]
        if open.elementsEqual(name) { return true }
        guard open.contains(where: { $0 >= 0x80 }) || name.contains(where: { $0 >= 0x80 }) else { return false }
        return String(decoding: open, as: UTF8.self) == String(decoding: name, as: UTF8.self)
    }

    // MARK: Buffer

    /// Reads another chunk (dropping consumed bytes first); false at the end of the input.
    private mutating func fill() throws(AppleHealthImportError) -> Bool {
        guard !atEnd else { return false }
        if position > 0 {
            buffer.removeSubrange(0..<position)
            discarded += position
            position = 0
        }
        let oldCount = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        var failure: AppleHealthImportError?
        let read = buffer.withUnsafeMutableBytes { bytes -> Int in
            do throws(AppleHealthImportError) { return try source.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[oldCount...])) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        buffer.removeSubrange((oldCount + read)...)
        if read == 0 { atEnd = true }
        return read > 0
    }

    /// Makes sure `count` bytes from `start` are buffered (reading more as needed); `start` is
    /// kept valid across a refill by moving `position` to it first.
    private mutating func ensure(_ count: Int, from start: Int) throws(AppleHealthImportError) -> Bool {
        precondition(start == position)
        while buffer.count - position < count {
            guard try fill() else { return false }
        }
        return true
    }

    /// Index of the `>` closing the tag at `start` (quotes respected), reading more as needed.
    private mutating func tagEnd(from start: Int) throws(AppleHealthImportError) -> Int {
        precondition(start == position)
        var scan = start + 1
        var quote: UInt8 = 0
        while true {
            // Through a buffer pointer, a quoted value found with memchr: this reads every tag.
            let stop = buffer.withUnsafeBufferPointer { bytes -> Int? in
                guard let base = bytes.baseAddress else { return nil }
                while scan < bytes.count {
                    if quote != 0 {
                        guard let close = memchr(base + scan, Int32(quote), bytes.count - scan) else {
                            scan = bytes.count
                            return nil
                        }
                        scan = base.distance(to: close.assumingMemoryBound(to: UInt8.self)) + 1
                        quote = 0
                        continue
                    }
                    let byte = bytes[scan]
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "<") {
                        return scan
                    }
                    scan += 1
                }
                return nil
            }
            if let stop {
                guard buffer[stop] == UInt8(ascii: ">") else { throw error("'<' inside a tag", at: discarded + stop) }
                return stop
            }
            guard scan - position < Limits.maximumMarkupBytes else {
                throw error("a tag longer than \(Limits.maximumMarkupBytes) bytes", at: documentOffset)
            }
            let offsetInMarkup = scan - position
            guard try fill() else { throw error("the document ends inside a tag", at: documentOffset) }
            scan = position + offsetInMarkup
        }
    }

    /// Moves past the first `terminator` after `start` (comments, processing instructions, CDATA).
    private mutating func skip(past terminator: String, from start: Int) throws(AppleHealthImportError) {
        let pattern = Array(terminator.utf8)
        var scan = start + 2
        while true {
            while scan + pattern.count <= buffer.count {
                if buffer[scan] == pattern[0], buffer[scan..<scan + pattern.count].elementsEqual(pattern) {
                    position = scan + pattern.count
                    return
                }
                scan += 1
            }
            guard scan - position < Limits.maximumMarkupBytes else {
                throw error("markup longer than \(Limits.maximumMarkupBytes) bytes without \(terminator)", at: documentOffset)
            }
            let offsetInMarkup = scan - position
            guard try fill() else { throw error("the document ends before \(terminator)", at: documentOffset) }
            scan = position + offsetInMarkup
        }
    }

    /// `<!--…-->`, `<![CDATA[…]]>` or `<!DOCTYPE …[internal subset]>`.
    private mutating func skipDeclaration() throws(AppleHealthImportError) {
        guard try ensure(4, from: position) else { throw error("the document ends inside markup", at: documentOffset) }
        if buffer[position + 2] == UInt8(ascii: "-"), buffer[position + 3] == UInt8(ascii: "-") {
            return try skip(past: "-->", from: position)
        }
        guard try ensure(9, from: position) else { throw error("the document ends inside markup", at: documentOffset) }
        let start = position
        if buffer[start..<start + 9].elementsEqual("<![CDATA[".utf8) {
            guard !openNameEnds.isEmpty else { throw error("CDATA outside the root element", at: discarded + start) }
            return try skip(past: "]]>", from: start)
        }
        guard buffer[start..<start + 9].elementsEqual("<!DOCTYPE".utf8), !sawRoot else {
            throw error("unexpected markup <!", at: discarded + start)
        }
        // The DOCTYPE ends at a '>' outside quotes, comments and the [internal subset].
        var scan = start + 9
        var quote: UInt8 = 0
        var inSubset = false
        while true {
            while scan < buffer.count {
                let byte = buffer[scan]
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "["), !inSubset {
                    inSubset = true
                } else if byte == UInt8(ascii: "]"), inSubset {
                    inSubset = false
                } else if inSubset, byte == UInt8(ascii: "<") {
                    // A comment in the subset may hold quotes and brackets: skip it whole.
                    guard scan + 4 <= buffer.count else { break }
                    if buffer[scan..<scan + 4].elementsEqual("<!--".utf8) {
                        guard let close = Self.find("-->", in: buffer, from: scan + 4) else { break }
                        scan = close + 3
                        continue
                    }
                } else if byte == UInt8(ascii: ">"), !inSubset {
                    position = scan + 1
                    return
                }
                scan += 1
            }
            guard scan - position < Limits.maximumMarkupBytes else {
                throw error("a DOCTYPE longer than \(Limits.maximumMarkupBytes) bytes", at: documentOffset)
            }
            let offsetInMarkup = scan - position
            guard try fill() else { throw error("the document ends inside the DOCTYPE", at: documentOffset) }
            scan = position + offsetInMarkup
        }
    }

    private static func find(_ pattern: String, in bytes: [UInt8], from start: Int) -> Int? {
        let pattern = Array(pattern.utf8)
        var scan = start
        while scan + pattern.count <= bytes.count {
            if bytes[scan..<scan + pattern.count].elementsEqual(pattern) { return scan }
            scan += 1
        }
        return nil
    }

    // MARK: Names and attributes

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "."), 0x80...0xFF:
            true
        default: false
        }
    }

    /// The end of the name at `from` (before `limit`), checked: there is one, and it is UTF-8.
    private func parseName(_ from: Int, _ limit: Int, at tagStart: Int) throws(AppleHealthImportError) -> Int {
        let (end, valid) = buffer.withUnsafeBufferPointer { bytes -> (Int, Bool) in
            var scan = from
            var high: UInt8 = 0
            while scan < limit, Self.isNameByte(bytes[scan]) {
                high |= bytes[scan]
                scan += 1
            }
            // ASCII is valid UTF-8 as it is.
            return (scan, high < 0x80 || String(validating: UnsafeBufferPointer(rebasing: bytes[from..<scan]), as: UTF8.self) != nil)
        }
        guard end > from else { throw error("a tag without a name", at: discarded + tagStart) }
        guard valid else { throw error("invalid UTF-8 in a name", at: discarded + from) }
        return end
    }

    /// Reads the attributes between `from` and `limit` into `tagAttributes`, checked in order:
    /// separated, named, quoted, closed, not twice, not too many, values valid.
    private mutating func parseAttributes(_ from: Int, _ limit: Int) throws(AppleHealthImportError) {
        // Taken out of the property while it is filled (no exclusivity checks per element).
        var spans = tagAttributes
        tagAttributes = []
        spans.removeAll(keepingCapacity: true)
        defer { tagAttributes = spans }
        var scan = from
        while true {
            let beforeSpace = scan
            while scan < limit, isSpace(buffer[scan]) { scan += 1 }
            if scan >= limit { return }
            guard scan > beforeSpace else { throw error("attributes must be separated by white space", at: discarded + scan) }
            let nameStart = scan
            let nameEnd = try parseName(scan, limit, at: scan)
            scan = nameEnd
            while scan < limit, isSpace(buffer[scan]) { scan += 1 }
            guard scan < limit, buffer[scan] == UInt8(ascii: "=") else {
                throw error("attribute \(string(nameStart, nameEnd)) has no value", at: discarded + scan)
            }
            scan += 1
            while scan < limit, isSpace(buffer[scan]) { scan += 1 }
            guard scan < limit, buffer[scan] == UInt8(ascii: "\"") || buffer[scan] == UInt8(ascii: "'") else {
                throw error("the value of \(string(nameStart, nameEnd)) is not quoted", at: discarded + scan)
            }
            let quote = buffer[scan]
            let valueStart = scan + 1
            let found = buffer.withUnsafeBufferPointer { bytes -> Int? in
                guard let base = bytes.baseAddress, valueStart < limit, let hit = memchr(base + valueStart, Int32(quote), limit - valueStart) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            guard let valueEnd = found else {
                throw error("the value of \(string(nameStart, nameEnd)) is not closed", at: discarded + scan)
            }
            guard !spans.contains(where: { sameName($0.nameStart, $0.nameEnd, nameStart, nameEnd) }) else {
                throw error("attribute \(string(nameStart, nameEnd)) appears twice", at: discarded + nameEnd)
            }
            guard spans.count < Limits.maximumAttributes else {
                throw error("more than \(Limits.maximumAttributes) attributes", at: discarded + scan)
            }
            spans.append(try checkedValue(nameStart, nameEnd, valueStart, valueEnd, place: spans.count))
            scan = valueEnd + 1
        }
    }

    /// Whether two attribute names are the same: the same bytes, or (beyond ASCII, names of the
    /// same length) the same string as Swift compares them.
    private func sameName(_ a: Int, _ aEnd: Int, _ b: Int, _ bEnd: Int) -> Bool {
        guard aEnd - a == bEnd - b else { return false }
        return buffer.withUnsafeBufferPointer { bytes in
            let first = UnsafeBufferPointer(rebasing: bytes[a..<aEnd]), second = UnsafeBufferPointer(rebasing: bytes[b..<bEnd])
            if first.elementsEqual(second) { return true }
            guard first.contains(where: { $0 >= 0x80 }) || second.contains(where: { $0 >= 0x80 }) else { return false }
            return String(decoding: first, as: UTF8.self) == String(decoding: second, as: UTF8.self)
        }
    }

    /// The attribute with its value between `from` and `limit` checked: plain ASCII as it is,
    /// anything else (references, UTF-8 beyond ASCII) decoded, or taken from a recent tag that
    /// had the same bytes at the same place (`recentValues`).
    private mutating func checkedValue(_ nameStart: Int, _ nameEnd: Int, _ from: Int, _ limit: Int, place: Int) throws(AppleHealthImportError) -> AttributeSpan {
        var span = AttributeSpan(nameStart: nameStart, nameEnd: nameEnd, valueStart: from, valueEnd: limit, decodedCount: limit - from)
        let plain = buffer.withUnsafeBufferPointer { bytes in
            var high: UInt8 = 0
            var reference: UInt8 = 0
            for byte in UnsafeBufferPointer(rebasing: bytes[from..<limit]) {
                high |= byte
                reference |= byte == UInt8(ascii: "&") ? 1 : 0
            }
            return high < 0x80 && reference == 0
        }
        if plain { return span }
        let cached = RecentAttributeValues.lengths.contains(limit - from) && place < RecentAttributeValues.places
        if cached, let known = buffer.withUnsafeBufferPointer({ recentValues.value(place: place, bytes: UnsafeBufferPointer(rebasing: $0[from..<limit])) }) {
            span.decoded = known
        } else {
            let value = try decodedAttributeValue(from, limit)
            if cached { buffer.withUnsafeBufferPointer { recentValues.remember(value, place: place, bytes: UnsafeBufferPointer(rebasing: $0[from..<limit])) } }
            span.decoded = value
        }
        span.decodedCount = span.decoded?.utf8.count ?? 0
        return span
    }

    /// The value between `from` and `limit` with `&…;` references resolved.
    private func decodedAttributeValue(_ from: Int, _ limit: Int) throws(AppleHealthImportError) -> String {
        let raw = buffer[from..<limit]
        guard raw.contains(UInt8(ascii: "&")) else {
            guard let value = buffer.withUnsafeBufferPointer({ String(validating: UnsafeBufferPointer(rebasing: $0[from..<limit]), as: UTF8.self) }) else {
                throw error("invalid UTF-8 in an attribute value", at: discarded + from)
            }
            return value
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var scan = from
        while scan < limit {
            let byte = buffer[scan]
            guard byte == UInt8(ascii: "&") else {
                bytes.append(byte)
                scan += 1
                continue
            }
            guard let semicolon = buffer[scan..<min(limit, scan + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                throw error("an '&' that starts no reference", at: discarded + scan)
            }
            let reference = String(decoding: buffer[(scan + 1)..<semicolon], as: UTF8.self)
            switch reference {
            case "lt": bytes.append(UInt8(ascii: "<"))
            case "gt": bytes.append(UInt8(ascii: ">"))
            case "amp": bytes.append(UInt8(ascii: "&"))
            case "quot": bytes.append(UInt8(ascii: "\""))
            case "apos": bytes.append(UInt8(ascii: "'"))
            default:
                let code: UInt32?
                if reference.hasPrefix("#x") {
                    code = UInt32(reference.dropFirst(2), radix: 16)
                } else if reference.hasPrefix("#") {
                    code = UInt32(reference.dropFirst(), radix: 10)
                } else {
                    throw error("unknown entity &\(reference);", at: discarded + scan)
                }
                guard let code, let scalar = Unicode.Scalar(code), code != 0 else {
                    throw error("invalid character reference &\(reference);", at: discarded + scan)
                }
                bytes.append(contentsOf: String(scalar).utf8)
            }
            scan = semicolon + 1
        }
        guard let value = String(validating: bytes, as: UTF8.self) else {
            throw error("invalid UTF-8 in an attribute value", at: discarded + from)
        }
        return value
    }

    private func error(_ reason: String, at offset: Int) -> AppleHealthImportError {
        .damagedXML(offset: offset, reason: reason)
    }
}

/// Attribute values decoded for recent tags, a few per place in the tag (the first attribute,
/// the second…), kept in a `RecentByBytes`. A document of records repeats its type, source
/// and device strings tag after tag; resolving their references, validating their UTF-8 and
/// making a new heap string each time was a large share of reading an export. Only values long
/// enough to need heap storage are kept, and none longer than a device description needs (a
/// hostile document's megabyte values are not pinned: at most 64 values of 1 KiB are kept).
enum RecentAttributeValues {
    static let places = 16
    static let ways = 4
    /// Shorter values are stored inline in their `String` and cost little to make again; longer
    /// ones are made each time.
    static let lengths = 16...1024
}

