import Foundation
import Synchronization
import Testing
import TestSupport
@testable import HealthModel

/// The one-pass sample decoder (`SampleLineFastDecoder`, behind `HealthRecordDecoder.decodeLine`)
/// against the reference decoding through the JSON tree: the same record or the same error for
/// every line of the test fixtures, the fuzz seeds, the literals of the coding tests, and many
/// thousand damaged variants of them.
@Suite struct HealthRecordDecoderEquivalenceTests {
    static let fixedUUID = UUID(uuidString: "00000000-0000-4000-8000-000000000001") ?? UUID()
    let decoder = HealthRecordDecoder(defaultSource: "equivalence", makeUUID: { Self.fixedUUID })

    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// Every line of every `.jsonl` fixture under Tests/, the JSON-looking string literals of
    /// HealthRecordCodingTests (valid and invalid lines), and the records fuzz target's seed line.
    static func corpus() throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        let files = FileManager.default.enumerator(at: testsDirectory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "jsonl" else { continue }
            let data = try Data(contentsOf: file)
            lines += data.split(separator: UInt8(ascii: "\n")).map { Array($0) }
        }
        let codingTests = try String(
            contentsOf: testsDirectory.appendingPathComponent("HealthModelTests/HealthRecordCodingTests.swift"), encoding: .utf8)
        for literal in codingTests.components(separatedBy: "#\"").dropFirst() {
            guard let end = literal.range(of: "\"#") else { continue }
            let text = literal[..<end.lowerBound]
            if text.hasPrefix("{") || text.hasPrefix(" {") { lines.append(Array(text.utf8)) }
        }
        lines.append(Array(#"{"type":"stepCount","value":12,"unit":"count","start":"2026-01-01T08:00:00+01:00","end":"2026-01-01T08:01:00.5Z","source":"pod","metadata":{"HKWasUserEntered":true}}"#.utf8))
        lines.append(Array(#"{"uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","type":"bodyMass","value":72.35e0,"unit":"lb","start":"2026-01-01 08:00:00+0100","end":"2026-01-01T08:00:00Z","device":{},"metadata":{"HKMetadataKeySyncIdentifier":"a","HKMetadataKeySyncVersion":9223372036854775807,"HKTimeZone":"Europe/Berlin","meal":1.5,"HKWasUserEntered":1,"note":"ü"}}"#.utf8))
        return lines
    }

    func bothWays(_ line: [UInt8]) -> (fast: Result<HealthRecord, RecordDecodingError>, tree: Result<HealthRecord, RecordDecodingError>) {
        line.withUnsafeBufferPointer { bytes in
            (Result { () throws(RecordDecodingError) in try decoder.decodeLine(bytes) },
             Result { () throws(RecordDecodingError) in try decoder.decodeLineThroughTree(bytes) })
        }
    }

    @Test func fixturesDecodeTheSameBothWays() throws {
        let corpus = try Self.corpus()
        #expect(corpus.count > 100)
        for line in corpus {
            let (fast, tree) = bothWays(line)
            #expect(fast == tree, "\(String(decoding: line, as: UTF8.self))")
        }
    }

    /// The fast path must really take the lines ingestd writes (else the test above proves nothing).
    @Test func theFastPathTakesEveryPrintedSample() throws {
        var taken = 0
        for line in try Self.corpus() {
            guard case .success(.sample(let sample)) = bothWays(line).tree else { continue }
            let printed = Array(HealthRecordEncoder().encode(sample).utf8)
            let fast = printed.withUnsafeBufferPointer { bytes in
                SampleLineFastDecoder.decode(bytes, defaultSource: "x", makeUUID: { Self.fixedUUID })
            }
            #expect(fast == sample, "\(String(decoding: printed, as: UTF8.self))")
            taken += 1
        }
        #expect(taken > 50)
    }

    /// Damaged lines: bytes replaced by JSON's special characters, removed, duplicated or cut.
    @Test func damagedLinesDecodeTheSameBothWays() throws {
        let corpus = try Self.corpus()
        let specials = Array(#"{}[]":,\ -+.0123456789eEtfnul"#.utf8) + [0x00, 0x0A, 0x7F, 0xC2, 0x85, 0xFF]
        var generator = SplitMix64(seed: 17)
        var compared = 0
        var fastAccepted = 0
        for line in corpus where !line.isEmpty {
            for _ in 0..<60 {
                var mutated = line
                for _ in 0...Int.random(in: 0...2, using: &generator) {
                    guard !mutated.isEmpty else { break }
                    let position = Int.random(in: 0..<mutated.count, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: mutated[position] = specials.randomElement(using: &generator) ?? 0
                    case 1: mutated.remove(at: position)
                    case 2: mutated.insert(mutated[position], at: position)
                    default: mutated.removeSubrange(position...)
                    }
                }
                let (fast, tree) = bothWays(mutated)
                #expect(fast == tree, "\(String(decoding: mutated, as: UTF8.self))")
                if case .success = fast { fastAccepted += 1 }
                compared += 1
            }
        }
        #expect(compared > 6000)
        #expect(fastAccepted > 100)
    }

    /// A sample line with `value` spliced in as the value's text and `source` as the source's bytes.
    private func line(value: String, source: [UInt8] = Array("s".utf8)) -> [UInt8] {
        Array((#"{"uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","type":"bodyMass","value":"# + value
            + #","unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","source":""#).utf8)
            + source + Array(#""}"#.utf8)
    }

    /// Values are the Double their text reads as (the fast path divides short decimals by a
    /// power of ten; longer ones and exponents go through the text), bit for bit.
    @Test func numbersReadAsTheDoubleOfTheirText() throws {
        var generator = SplitMix64(seed: 31)
        var fastTaken = 0
        for round in 0..<4_000 {
            var text = Int.random(in: 0..<4, using: &generator) == 0 ? "-" : ""
            let integerDigits = Int.random(in: 1...18, using: &generator)
            text += round % 7 == 0 ? "0" : String(Int.random(in: 1...9, using: &generator))
            if !text.hasSuffix("0") {
                for _ in 1..<integerDigits { text += String(Int.random(in: 0...9, using: &generator)) }
            }
            let fractionDigits = Int.random(in: 0...22, using: &generator)
            if fractionDigits > 0 {
                text += "."
                for _ in 0..<fractionDigits { text += String(Int.random(in: 0...9, using: &generator)) }
            }
            if round % 11 == 0 { text += "e" + String(Int.random(in: -30...30, using: &generator)) }
            let bytes = line(value: text)
            let (fast, tree) = bothWays(bytes)
            #expect(fast == tree, "\(text)")
            guard let expected = Double(text), expected.isFinite else { continue }
            let taken = bytes.withUnsafeBufferPointer { SampleLineFastDecoder.decode($0, defaultSource: "x", makeUUID: { Self.fixedUUID }) }
            #expect(taken?.quantity.value.bitPattern == expected.bitPattern, "\(text)")
            if taken != nil { fastTaken += 1 }
        }
        #expect(fastTaken > 3_000)
        for text in ["-0", "-0.0", "0.000000000000001", "999999999999999", "9999999999999999", "0.1", "72.35e0", "1e400", "-1e400"] {
            let (fast, tree) = bothWays(line(value: text))
            #expect(fast == tree, "\(text)")
            if case .success(.sample(let sample)) = fast, let expected = Double(text) {
                #expect(sample.quantity.value.bitPattern == expected.bitPattern, "\(text)")
            }
        }
    }

    /// `text` with each of `bytes` in each of its places in turn.
    static func variants(of text: [UInt8], bytes: ClosedRange<UInt8>) -> [[UInt8]] {
        text.indices.flatMap { position in
            bytes.map { byte in
                var variant = text
                variant[position] = byte
                return variant
            }
        }
    }

    /// Every printable byte in every place of a uuid: what the fast path reads is what
    /// Foundation reads (it leaves Foundation's laxer spellings to the full decoder), and the
    /// lines decode the same both ways.
    @Test func uuidsReadAsFoundationReadsThem() {
        let valid = Array("e621e1f8-c36c-495a-93fc-0c247a3e6e5F".utf8)
        var fastRead = 0
        for text in Self.variants(of: valid, bytes: 0x20...0x7E) {
            let spelled = String(decoding: text, as: UTF8.self)
            if let fast = text.withUnsafeBufferPointer({ SampleLineFastDecoder.uuid($0[...]) }) {
                #expect(fast == UUID(uuidString: spelled), "\(spelled)")
                fastRead += 1
            }
            guard !text.contains(UInt8(ascii: "\"")), !text.contains(UInt8(ascii: "\\")) else { continue }
            let bytes = Array((#"{"uuid":""# + spelled + #"","type":"bodyMass","value":1,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#).utf8)
            let (fast, tree) = bothWays(bytes)
            #expect(fast == tree, "\(spelled)")
        }
        // The 22 hex digits in each of the 32 digit places, and the hyphens in their 4 places.
        #expect(fastRead == 32 * 22 + 4)
    }

    /// Every byte in every place of a long string (read eight bytes at a time) decodes as the
    /// full decoder decodes it: quotes, backslashes, control bytes and non-ASCII alike.
    @Test func everyByteInEveryPlaceOfAStringDecodesTheSameBothWays() {
        let source = Array("source-of-twenty-one".utf8)
        var fastTaken = 0
        for text in Self.variants(of: source, bytes: 0...255) {
            let bytes = line(value: "1", source: text)
            let (fast, tree) = bothWays(bytes)
            #expect(fast == tree, "\(text)")
            if bytes.withUnsafeBufferPointer({ SampleLineFastDecoder.decode($0, defaultSource: "x", makeUUID: { Self.fixedUUID }) }) != nil {
                fastTaken += 1
            }
        }
        // Each place takes the 93 printable ASCII bytes but the quote and the backslash.
        #expect(fastTaken == 20 * 93)
    }

    @Test func sampleIdentifiersAreVersion7TimeOrderedAndReproducible() {
        // 2024-10-20 13:19:04.123 UTC, fixed: the sequence is then reproducible.
        let first = SampleIdentifierGenerator(seed: 42, milliseconds: { 1_729_430_344_123 })
        let second = SampleIdentifierGenerator(seed: 42, milliseconds: { 1_729_430_344_123 })
        var seen = Set<UUID>()
        var previous: [UInt8] = []
        for _ in 0..<10_000 {
            let uuid = first.next()
            #expect(uuid == second.next())
            let text = uuid.uuidString
            #expect(Array(text)[14] == "7", "\(text)")
            #expect("89AB".contains(Array(text)[19]), "\(text)")
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            // Strictly increasing as bytes (index order), even 10,000 in one millisecond: the
            // 12-bit counter runs out and the timestamp moves on.
            #expect(previous.lexicographicallyPrecedes(bytes), "\(text)")
            previous = bytes
            seen.insert(uuid)
        }
        #expect(seen.count == 10_000)
        // The first one carries the clock's millisecond in its first 48 bits: 0x0192_AA14_D1BB.
        let head = SampleIdentifierGenerator(seed: 1, milliseconds: { 1_729_430_344_123 }).next().uuidString
        #expect(head.hasPrefix("0192AA14-D1BB-7"), "\(head)")
        #expect(SampleIdentifierGenerator(seed: 43).next() != SampleIdentifierGenerator(seed: 42).next())
    }

    @Test func sampleIdentifiersStayOrderedWhenTheClockStepsBack() {
        let clock = Mutex<UInt64>(2_000_000)
        let generator = SampleIdentifierGenerator(seed: 9, milliseconds: { clock.withLock { $0 } })
        let before = generator.next()
        clock.withLock { $0 = 1_000_000 }
        let after = generator.next()
        let a = withUnsafeBytes(of: before.uuid) { Array($0) }, b = withUnsafeBytes(of: after.uuid) { Array($0) }
        #expect(a.lexicographicallyPrecedes(b))
        // A fresh generator on the system clock starts at the current time.
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let stamp = withUnsafeBytes(of: SampleIdentifierGenerator().next().uuid) { $0.prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        #expect(stamp >= now - 1_000 && stamp <= now + 60_000)
    }

    @Test func uuidsPrintAsFoundationSpellsThem() {
        let generator = SampleIdentifierGenerator(seed: 7)
        for uuid in [UUID(), Self.fixedUUID, generator.next(), UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))] {
            #expect(UUIDText.string(uuid) == uuid.uuidString)
            #expect(UUIDText.string(uuid, .lower) == uuid.uuidString.lowercased())
        }
    }

    @Test func aBoundedUnitCacheStartsOverWhenFull() {
        let cache = UnitCache(capacity: 2)
        #expect(cache.unit("kg") == (try? HealthModel.Unit(from: "kg")))
        #expect(cache.unit("lb") != nil)
        #expect(cache.unit("count/min") != nil)  // the third spelling empties the table first
        #expect(cache.unit("not a unit") == nil)
        #expect(cache.count <= 2)
    }
}
