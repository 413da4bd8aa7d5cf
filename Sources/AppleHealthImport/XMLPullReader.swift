import Foundation

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
public final class XMLPullReader {
    public static let maximumMarkupBytes = 1 << 20
    public static let maximumDepth = 64
    public static let maximumAttributes = 256

    private let source: ByteChunkSource
    private var buffer: [UInt8] = []
    /// Index of the next unread byte in `buffer`.
    private var position = 0
    /// Document offset of `buffer[0]`.
    private var discarded = 0
    private var atEnd = false
    private var openElements: [String] = []
    private var pendingEnd: String?
    private var recentValues = RecentAttributeValues()
    private var sawRoot = false
    private let chunkSize: Int

    /// Bytes of the document read so far.
    public var documentOffset: Int { discarded + position }
    /// How far into the underlying file reading has come (for progress).
    public var fileOffset: Int { source.fileOffset }

    public init(source: ByteChunkSource, chunkSize: Int = 256 << 10) {
        self.source = source
        self.chunkSize = max(16, chunkSize)
    }

    /// The next element event, or nil at the end of the document.
    public func next() throws(AppleHealthImportError) -> XMLEvent? {
        if let name = pendingEnd {
            pendingEnd = nil
            return .end(name: name)
        }
        while true {
            // Text: passed over up to the next '<'.
            while true {
                if let found = buffer[position...].firstIndex(of: UInt8(ascii: "<")) {
                    position = found
                    break
                }
                position = buffer.count
                guard try fill() else {
                    guard openElements.isEmpty else {
                        throw error("the document ends inside <\(openElements.last ?? "")>", at: documentOffset)
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
                let name = try parseName(start + 2, end, at: start)
                var after = name.next
                while after < end, isSpace(buffer[after]) { after += 1 }
                guard after == end else { throw error("unexpected text in the end tag </\(name.name)>", at: discarded + after) }
                guard let open = openElements.last else {
                    throw error("end tag </\(name.name)> without a start tag", at: discarded + start)
                }
                guard open == name.name else {
                    throw error("end tag </\(name.name)> does not close <\(open)>", at: discarded + start)
                }
                openElements.removeLast()
                position = end + 1
                return .end(name: name.name)
            default:
                let end = try tagEnd(from: position)
                let start = position
                guard openElements.count < Self.maximumDepth else {
                    throw error("elements nested deeper than \(Self.maximumDepth)", at: discarded + start)
                }
                if openElements.isEmpty, sawRoot { throw error("a second root element", at: discarded + start) }
                let selfClosing = buffer[end - 1] == UInt8(ascii: "/")
                let name = try parseName(start + 1, selfClosing ? end - 1 : end, at: start)
                let attributes = try parseAttributes(name.next, selfClosing ? end - 1 : end)
                position = end + 1
                sawRoot = true
                if selfClosing {
                    pendingEnd = name.name
                } else {
                    openElements.append(name.name)
                }
                return .start(name: name.name, attributes: attributes)
            }
        }
    }

    // MARK: Buffer

    /// Reads another chunk (dropping consumed bytes first); false at the end of the input.
    private func fill() throws(AppleHealthImportError) -> Bool {
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
    private func ensure(_ count: Int, from start: Int) throws(AppleHealthImportError) -> Bool {
        precondition(start == position)
        while buffer.count - position < count {
            guard try fill() else { return false }
        }
        return true
    }

    /// Index of the `>` closing the tag at `start` (quotes respected), reading more as needed.
    private func tagEnd(from start: Int) throws(AppleHealthImportError) -> Int {
        precondition(start == position)
        var scan = start + 1
        var quote: UInt8 = 0
        while true {
            // Through a buffer pointer: this loop reads every byte of every tag.
            let stop = buffer.withUnsafeBufferPointer { bytes -> Int? in
                while scan < bytes.count {
                    let byte = bytes[scan]
                    if quote != 0 {
                        if byte == quote { quote = 0 }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
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
            guard scan - position < Self.maximumMarkupBytes else {
                throw error("a tag longer than \(Self.maximumMarkupBytes) bytes", at: documentOffset)
            }
            let offsetInMarkup = scan - position
            guard try fill() else { throw error("the document ends inside a tag", at: documentOffset) }
            scan = position + offsetInMarkup
        }
    }

    /// Moves past the first `terminator` after `start` (comments, processing instructions, CDATA).
    private func skip(past terminator: String, from start: Int) throws(AppleHealthImportError) {
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
            guard scan - position < Self.maximumMarkupBytes else {
                throw error("markup longer than \(Self.maximumMarkupBytes) bytes without \(terminator)", at: documentOffset)
            }
            let offsetInMarkup = scan - position
            guard try fill() else { throw error("the document ends before \(terminator)", at: documentOffset) }
            scan = position + offsetInMarkup
        }
    }

    /// `<!--…-->`, `<![CDATA[…]]>` or `<!DOCTYPE …[internal subset]>`.
    private func skipDeclaration() throws(AppleHealthImportError) {
        guard try ensure(4, from: position) else { throw error("the document ends inside markup", at: documentOffset) }
        if buffer[position + 2] == UInt8(ascii: "-"), buffer[position + 3] == UInt8(ascii: "-") {
            return try skip(past: "-->", from: position)
        }
        guard try ensure(9, from: position) else { throw error("the document ends inside markup", at: documentOffset) }
        let start = position
        if buffer[start..<start + 9].elementsEqual("<![CDATA[".utf8) {
            guard !openElements.isEmpty else { throw error("CDATA outside the root element", at: discarded + start) }
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
            guard scan - position < Self.maximumMarkupBytes else {
                throw error("a DOCTYPE longer than \(Self.maximumMarkupBytes) bytes", at: documentOffset)
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

    // MARK: Tags

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "."), 0x80...0xFF:
            true
        default: false
        }
    }

    private func parseName(_ from: Int, _ limit: Int, at tagStart: Int) throws(AppleHealthImportError) -> (name: String, next: Int) {
        var scan = from
        while scan < limit, isNameByte(buffer[scan]) { scan += 1 }
        guard scan > from else { throw error("a tag without a name", at: discarded + tagStart) }
        guard let name = validatedString(from, scan) else {
            throw error("invalid UTF-8 in a name", at: discarded + from)
        }
        return (name, scan)
    }

    /// The UTF-8 text of `buffer[from..<limit]`, or nil when it is not valid UTF-8 (validated
    /// through a buffer pointer, and ASCII without the generic validation, which cost 5 % of an import).
    private func validatedString(_ from: Int, _ limit: Int) -> String? {
        buffer.withUnsafeBufferPointer { bytes in
            let text = UnsafeBufferPointer(rebasing: bytes[from..<limit])
            // ASCII (types, dates, numbers, units) is valid UTF-8 as it is.
            if !text.contains(where: { $0 >= 0x80 }) { return String(decoding: text, as: UTF8.self) }
            return String(validating: text, as: UTF8.self)
        }
    }

    private func parseAttributes(_ from: Int, _ limit: Int) throws(AppleHealthImportError) -> [XMLAttribute] {
        var attributes: [XMLAttribute] = []
        var nameLengths: [Int] = []
        var scan = from
        while true {
            let beforeSpace = scan
            while scan < limit, isSpace(buffer[scan]) { scan += 1 }
            if scan >= limit { return attributes }
            guard scan > beforeSpace else { throw error("attributes must be separated by white space", at: discarded + scan) }
            let nameStart = scan
            let name = try parseName(scan, limit, at: scan)
            scan = name.next
            while scan < limit, isSpace(buffer[scan]) { scan += 1 }
            guard scan < limit, buffer[scan] == UInt8(ascii: "=") else {
                throw error("attribute \(name.name) has no value", at: discarded + scan)
            }
            scan += 1
            while scan < limit, isSpace(buffer[scan]) { scan += 1 }
            guard scan < limit, buffer[scan] == UInt8(ascii: "\"") || buffer[scan] == UInt8(ascii: "'") else {
                throw error("the value of \(name.name) is not quoted", at: discarded + scan)
            }
            let quote = buffer[scan]
            let valueStart = scan + 1
            guard let valueEnd = buffer[valueStart..<limit].firstIndex(of: quote) else {
                throw error("the value of \(name.name) is not closed", at: discarded + scan)
            }
            // Names of different lengths differ: most tags compare no strings here.
            let nameLength = name.next - nameStart
            guard !attributes.indices.contains(where: { nameLengths[$0] == nameLength && attributes[$0].name == name.name }) else {
                throw error("attribute \(name.name) appears twice", at: discarded + name.next)
            }
            guard attributes.count < Self.maximumAttributes else {
                throw error("more than \(Self.maximumAttributes) attributes", at: discarded + scan)
            }
            let value = try attributeValue(valueStart, valueEnd, place: attributes.count)
            attributes.append(XMLAttribute(name: name.name, value: value))
            nameLengths.append(nameLength)
            scan = valueEnd + 1
        }
    }

    /// The value between `from` and `limit` with `&…;` references resolved: the string made for
    /// the same bytes at the same place of a recent tag when there is one (`recentValues`).
    private func attributeValue(_ from: Int, _ limit: Int, place: Int) throws(AppleHealthImportError) -> String {
        guard RecentAttributeValues.lengths.contains(limit - from), place < RecentAttributeValues.places else {
            return try decodedAttributeValue(from, limit)
        }
        let known = buffer.withUnsafeBufferPointer { recentValues.value(place: place, bytes: UnsafeBufferPointer(rebasing: $0[from..<limit])) }
        if let known { return known }
        let value = try decodedAttributeValue(from, limit)
        buffer.withUnsafeBufferPointer { recentValues.remember(value, place: place, bytes: UnsafeBufferPointer(rebasing: $0[from..<limit])) }
        return value
    }

    /// The value between `from` and `limit` with `&…;` references resolved.
    private func decodedAttributeValue(_ from: Int, _ limit: Int) throws(AppleHealthImportError) -> String {
        let raw = buffer[from..<limit]
        guard raw.contains(UInt8(ascii: "&")) else {
            guard let value = validatedString(from, limit) else {
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
/// the second…), with the bytes they came from. A document of records repeats its type, source
/// and device strings tag after tag; resolving their references, validating their UTF-8 and
/// making a new heap string each time was a large share of reading an export. Only values long
/// enough to need heap storage are kept, and none longer than a device description needs (a
/// hostile document's megabyte values are not pinned: at most 64 values of 1 KiB are kept); a
/// place holds `ways` values, replaced in turn.
struct RecentAttributeValues {
    static let places = 16
    static let ways = 4
    /// Shorter values are stored inline in their `String` and cost little to make again; longer
    /// ones are made each time.
    static let lengths = 16...1024

    private var bytes: [[UInt8]] = Array(repeating: [], count: places * ways)
    private var values: [String] = Array(repeating: "", count: places * ways)
    private var nextWay: [Int] = Array(repeating: 0, count: places)

    /// The string remembered for `bytes` at `place`, if any.
    func value(place: Int, bytes raw: UnsafeBufferPointer<UInt8>) -> String? {
        let first = place * Self.ways
        for slot in first..<first + Self.ways where bytes[slot].count == raw.count {
            let same = bytes[slot].withUnsafeBufferPointer { stored in
                guard let a = stored.baseAddress, let b = raw.baseAddress else { return stored.count == raw.count }
                return memcmp(a, b, raw.count) == 0
            }
            if same { return values[slot] }
        }
        return nil
    }

    mutating func remember(_ value: String, place: Int, bytes raw: UnsafeBufferPointer<UInt8>) {
        let slot = place * Self.ways + nextWay[place]
        nextWay[place] = (nextWay[place] + 1) % Self.ways
        bytes[slot].removeAll(keepingCapacity: true)
        bytes[slot].append(contentsOf: raw)
        values[slot] = value
    }
}
