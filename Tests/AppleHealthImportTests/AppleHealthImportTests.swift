import Foundation
import HealthModel
import Testing
import TestSupport
@testable import AppleHealthImport

/// The importer on a real generated export (`Fixtures/export.zip`, written by
/// `../shared/tools/gen_apple_health_export.py -n 2500 --seed 1`: 2,505 top-level records,
/// 7 blood-pressure correlations whose 14 members are also listed at top level, 16 body-mass
/// records of which 4 re-write a sync identifier with version 2, 12 ActivitySummary rows).
@Suite struct AppleHealthImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let zipPath = fixtures.appendingPathComponent("export.zip").path

    /// Reads an export, returning every record handed on and the tally.
    static func read(_ source: ByteChunkSource, chunkSize: Int = 256 << 10) throws -> (records: [HealthRecord], tally: AppleHealthImportTally) {
        var records: [HealthRecord] = []
        let reader = AppleHealthExportReader(xml: XMLPullReader(source: source, chunkSize: chunkSize)) { records += $0 }
        reader.batchSize = 100
        try reader.run()
        return (records, reader.tally)
    }

    /// The zip's XML entry inflated whole (the test's own copy, to write damaged variants).
    static func inflatedXML() throws -> [UInt8] {
        let opened = try AppleHealthExportFile.open(path: zipPath)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try chunk.withUnsafeMutableBytes { (buffer) throws(AppleHealthImportError) -> Int in try opened.source.read(into: buffer) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    static func temporaryFile(_ bytes: [UInt8], name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ahi-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theGeneratedExportGivesTheRightCounts() throws {
        let opened = try AppleHealthExportFile.open(path: Self.zipPath)
        #expect(opened.entry == "apple_health_export/export.xml")
        let (records, tally) = try Self.read(opened.source)
        #expect(tally.recordElements == 2505)
        #expect(tally.correlations == 7)
        #expect(tally.correlationCopiesSkipped == 14)
        // Every top-level record but the 14 repeated members, plus the 14 members inside correlations.
        #expect(tally.samples == 2505)
        #expect(records.filter { if case .correlation = $0 { true } else { false } }.count == 7)
        let samples = records.flatMap(\.samples)
        #expect(samples.filter { $0.type == .bloodPressureSystolic }.count == 7)
        #expect(samples.filter { $0.type == .bodyMass }.count == 16)
        #expect(samples.filter { $0.type == .bodyMass && $0.metadata.syncVersion == 2 }.count == 4)
        #expect(tally.otherElements == ["ActivitySummary": 12, "Me": 1])
        #expect(tally.unknownTypes.isEmpty && tally.unreadable.isEmpty && tally.metadataRefused == 0)
        // Phone and watch steps stay apart (two sources), with their devices.
        let stepSources = Set(samples.filter { $0.type == .stepCount }.map(\.source))
        #expect(stepSources == ["Jana\u{2019}s iPhone", "Jana\u{2019}s Apple\u{A0}Watch"])
        let watch = samples.first { $0.source == "Jana\u{2019}s Apple\u{A0}Watch" }
        #expect(watch?.device == Device(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardwareVersion: "Watch6,2", softwareVersion: "10.5"))
        #expect(watch?.metadata["sourceVersion"] == .string("10.5"))
        // Units as the export wrote them (the pipeline converts): degF stays degF here.
        #expect(samples.filter { $0.type == .bodyTemperature && $0.quantity.unit == (try? HealthModel.Unit(from: "degF")) }.count == 2)
        // The record's offset, and the instant in UTC.
        let first = try #require(samples.first)
        #expect(first.metadata["utcOffset"] == .string("+0200") || first.metadata["utcOffset"] == .string("+0100"))
    }

    @Test func zipAndPlainXMLAndTinyChunksGiveTheSameRecords() throws {
        let xml = try Self.inflatedXML()
        let xmlPath = try Self.temporaryFile(xml, name: "export.xml")
        defer { try? FileManager.default.removeItem(atPath: xmlPath) }
        let fromZip = try Self.read(AppleHealthExportFile.open(path: Self.zipPath).source)
        let plain = try AppleHealthExportFile.open(path: xmlPath)
        #expect(plain.entry == nil)
        let fromXML = try Self.read(plain.source, chunkSize: 16)
        #expect(fromZip.tally == fromXML.tally)
        #expect(fromZip.records.count == fromXML.records.count)
        let encoder = HealthRecordEncoder()
        func withoutUUIDs(_ records: [HealthRecord]) -> [String] {
            records.map { record in
                switch record {
                case .sample(var sample):
                    sample.uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                    return encoder.encode(sample)
                case .correlation(let correlation):
                    return correlation.type.identifier + correlation.objects.map { "\($0.quantity.value)" }.joined()
                }
            }
        }
        #expect(withoutUUIDs(fromZip.records) == withoutUUIDs(fromXML.records))
    }

    @Test func damagedXMLStopsAtItsOffsetAfterHandingOnWhatCameBefore() throws {
        var xml = try Self.inflatedXML()
        let middle = xml.count / 2
        let quote = try #require(xml[middle...].firstIndex(of: UInt8(ascii: "\"")))
        xml[quote] = UInt8(ascii: "<")
        let path = try Self.temporaryFile(xml, name: "export.xml")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var handedOn = 0
        let reader = AppleHealthExportReader(xml: XMLPullReader(source: try AppleHealthExportFile.open(path: path).source)) { handedOn += $0.count }
        #expect {
            try reader.run()
        } throws: { error in
            guard case .damagedXML(let offset, _) = error as? AppleHealthImportError else { return false }
            return offset > middle - 2_000 && offset <= quote
        }
        #expect(handedOn > 1_000 && handedOn < 2_400)
    }

    @Test func theBackgroundReaderHandsOverTheSameRecordsAndNewPairsOnce() throws {
        let direct = try Self.read(AppleHealthExportFile.open(path: Self.zipPath).source)
        let reading = BackgroundExportReader(source: try AppleHealthExportFile.open(path: Self.zipPath).source, batchSize: 100)
        var records: [HealthRecord] = []
        var pairs: [String] = []
        var lastOffset = 0
        while let batch = reading.next() {
            #expect(batch.records.count <= 100 + 7)
            #expect(batch.fileOffset >= lastOffset)
            lastOffset = batch.fileOffset
            records += batch.records
            pairs += batch.newSourceTypes.map { "\($0.source)/\($0.type.shortName)" }
            // Every sample's pair was announced in its batch or before it.
            for sample in batch.records.flatMap(\.samples) { #expect(pairs.contains("\(sample.source)/\(sample.type.shortName)")) }
        }
        let outcome = reading.waitForOutcome()
        #expect(outcome.damage == nil)
        #expect(outcome.tally == direct.tally)
        #expect(records.count == direct.records.count)
        #expect(records.map(\.samples.count) == direct.records.map(\.samples.count))
        #expect(pairs.count == Set(pairs).count)
        #expect(Set(pairs).count == direct.tally.sourceTypes.values.map(\.count).reduce(0, +))
        #expect(reading.next() == nil)
    }

    @Test func theBackgroundReaderReportsDamageAfterTheBatchesBeforeIt() throws {
        var xml = try Self.inflatedXML()
        let quote = try #require(xml[(xml.count / 2)...].firstIndex(of: UInt8(ascii: "\"")))
        xml[quote] = UInt8(ascii: "<")
        let path = try Self.temporaryFile(xml, name: "export.xml")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reading = BackgroundExportReader(source: try AppleHealthExportFile.open(path: path).source, batchSize: 100)
        var handedOn = 0
        while let batch = reading.next() { handedOn += batch.records.count }
        guard case .damagedXML(let offset, _)? = reading.waitForOutcome().damage else {
            Issue.record("no damage reported")
            return
        }
        #expect(offset <= quote)
        #expect(handedOn > 1_000 && handedOn < 2_400)
    }

    @Test func closingTheBackgroundReaderEarlyStopsItsThread() throws {
        // The reader fills its one waiting slot and blocks; close() must wake and end it.
        let reading = BackgroundExportReader(source: try AppleHealthExportFile.open(path: Self.zipPath).source, batchSize: 10)
        let first = try #require(reading.next())
        #expect(first.records.count >= 10)
        reading.close()
        #expect(reading.next() == nil)
        let outcome = reading.waitForOutcome()
        #expect(outcome.damage == nil)
        #expect(outcome.tally.recordElements < 2505)
    }

    @Test func aTruncatedZipIsRefusedWithAnOffset() throws {
        let zip = try Array(Data(contentsOf: URL(fileURLWithPath: Self.zipPath)))
        let path = try Self.temporaryFile(Array(zip.prefix(zip.count / 2)), name: "export.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: AppleHealthImportError.damagedZip(offset: zip.count / 2, reason: "no end of central directory record (not a zip archive?)")) {
            _ = try AppleHealthExportFile.open(path: path)
        }
    }

    @Test func corruptCompressedDataIsRefusedWithAnOffset() throws {
        var zip = try Array(Data(contentsOf: URL(fileURLWithPath: Self.zipPath)))
        // Flip bytes in the middle of the deflate stream (the directory at the end stays intact).
        for index in (zip.count / 2)..<(zip.count / 2 + 64) { zip[index] ^= 0x5A }
        let path = try Self.temporaryFile(zip, name: "export.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try Self.read(try AppleHealthExportFile.open(path: path).source)
        } throws: { error in
            switch error as? AppleHealthImportError {
            case .damagedCompressedData(_, let offset, _): return offset >= zip.count / 2 - 70_000 && offset < zip.count
            case .checksumMismatch, .damagedXML, .lengthMismatch: return true
            default: return false
            }
        }
    }

    @Test func anArchiveWithoutHealthDataNamesItsEntries() throws {
        let path = try Self.temporaryFile(StoredZip.bytes([.init(name: "notes.xml", content: Array("<notes/>".utf8))]), name: "other.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: AppleHealthImportError.noHealthData(entries: ["notes.xml"])) { _ = try AppleHealthExportFile.open(path: path) }
    }

    @Test func deviceDescriptionsAndDates() {
        #expect(AppleHealthExportReader.device("<<HKDevice: 0x283b2c0f0>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.1>")
            == Device(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardwareVersion: "Watch6,2", softwareVersion: "10.1"))
        #expect(AppleHealthExportReader.device("<<HKDevice: 0x1>, name:Scale, Pro, localIdentifier:AA:BB>")
            == Device(name: "Scale, Pro", localIdentifier: "AA:BB"))
        #expect(AppleHealthExportReader.device("iPhone") == nil)
        #expect(AppleHealthExportReader.date("2024-10-20 13:19:04 +0200") == ISO8601DateTime.date(from: "2024-10-20T11:19:04Z"))
        #expect(AppleHealthExportReader.date("2024-10-20 13:19:04") == nil)
        #expect(AppleHealthExportReader.date("2024-02-30 13:19:04 +0200") == nil)
    }

    /// The export's dates are read in place; they must give what the ISO 8601 parser gives for
    /// the same text with a `T` for the first space and without the second (how they were read
    /// before), valid or not: calendar edges, offsets, and every byte of valid dates replaced.
    @Test func datesReadInPlaceAgreeWithTheISOParser() {
        func throughISOParser(_ text: String) -> Date? {
            var bytes = Array(text.utf8)
            guard bytes.count == 25, bytes[10] == UInt8(ascii: " "), bytes[19] == UInt8(ascii: " "),
                bytes[20] == UInt8(ascii: "+") || bytes[20] == UInt8(ascii: "-")
            else { return nil }
            bytes[10] = UInt8(ascii: "T")
            bytes.remove(at: 19)
            return ISO8601DateTime.date(from: String(decoding: bytes, as: UTF8.self))
        }
        var texts = [
            "2024-02-29 23:59:59 +0000", "2023-02-29 12:00:00 +0000", "2000-02-29 00:00:00 -2359", "1900-02-29 00:00:00 +0100",
            "2024-12-31 23:59:59 -0000", "2024-13-01 00:00:00 +0000", "2024-00-10 00:00:00 +0000", "2024-04-31 00:00:00 +0000",
            "2024-10-20 24:00:00 +0200", "2024-10-20 23:60:00 +0200", "2024-10-20 23:59:60 +0200", "2024-10-20 13:19:04 +2400",
            "2024-10-20 13:19:04 +0260", "2024-10-20 13:19:04 +02:0", "2024-10-20T13:19:04 +0200", "2024-10-20 13:19:04+02000",
            "0000-01-01 00:00:00 +0000", "9999-12-31 23:59:59 -2359", "2024-10-20 13:19:04 +0200 ", "2024-10-20 13:19:04 +020",
            "２024-10-20 13:19:04 +0200", "2024-10-20 13:19:04 ±0200",
        ]
        let valid = Array("2024-10-20 13:19:04 +0200".utf8)
        for index in valid.indices {
            for replacement in Array("09 +-:T/.Za".utf8) + [0x00, 0x2F, 0x3A, 0xC3] {
                var bytes = valid
                bytes[index] = replacement
                texts.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        for text in texts {
            #expect(AppleHealthExportReader.date(text) == throughISOParser(text), "\(text)")
        }
        #expect(texts.filter { AppleHealthExportReader.date($0) != nil }.count > 40)
    }
}

/// The pull XML reader on small documents: the constructs an export has, and hostile ones.
@Suite struct XMLPullReaderTests {
    final class BytesSource: ByteChunkSource {
        let bytes: [UInt8]
        var fileOffset = 0
        init(_ text: String) { bytes = Array(text.utf8) }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int {
            let count = min(buffer.count, bytes.count - fileOffset)
            for index in 0..<count { buffer[index] = bytes[fileOffset + index] }
            fileOffset += count
            return count
        }
    }

    func events(_ text: String, chunkSize: Int = 16) throws -> [XMLEvent] {
        let reader = XMLPullReader(source: BytesSource(text), chunkSize: chunkSize)
        var events: [XMLEvent] = []
        while let event = try reader.next() { events.append(event) }
        return events
    }

    func failure(_ text: String) -> AppleHealthImportError? {
        do {
            _ = try events(text)
            return nil
        } catch {
            return error as? AppleHealthImportError
        }
    }

    @Test func declarationDoctypeCommentsAndEntities() throws {
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!-- HealthKit Export Version: 14 ] > -->
            <!ATTLIST Record type CDATA #REQUIRED note CDATA "a > b">
            ]>
            <HealthData locale="de_DE">
             <!-- a comment <Record> -->
             <Record device="&lt;&lt;HKDevice&gt;, name:A &amp; B&#x2019;s &#65;>" value='1'/>
             text &amp; more
            </HealthData>
            """
        #expect(try events(document) == [
            .start(name: "HealthData", attributes: [XMLAttribute(name: "locale", value: "de_DE")]),
            .start(name: "Record", attributes: [XMLAttribute(name: "device", value: "<<HKDevice>, name:A & B\u{2019}s A>"),
                                                XMLAttribute(name: "value", value: "1")]),
            .end(name: "Record"),
            .end(name: "HealthData"),
        ])
    }

    @Test func malformedDocumentsAreRefusedWithOffsets() {
        #expect(failure("<a><b></a>") == .damagedXML(offset: 6, reason: "end tag </a> does not close <b>"))
        #expect(failure("<a x=\"1\" x=\"2\"/>") == .damagedXML(offset: 10, reason: "attribute x appears twice"))
        #expect(failure("<a x=1/>") == .damagedXML(offset: 5, reason: "the value of x is not quoted"))
        #expect(failure("<a x=\"&bogus;\"/>") == .damagedXML(offset: 6, reason: "unknown entity &bogus;"))
        #expect(failure("<a><b>") == .damagedXML(offset: 6, reason: "the document ends inside <b>"))
        #expect(failure("<a/><b/>") == .damagedXML(offset: 4, reason: "a second root element"))
        #expect(failure("") == .damagedXML(offset: 0, reason: "no root element"))
        #expect(failure("<a x=\"\u{FF}\"/>") == nil)  // U+00FF is valid UTF-8 text
        #expect(failure("<a x=\"&#0;\"/>") == .damagedXML(offset: 6, reason: "invalid character reference &#0;"))
    }

    /// Values are remembered per place in the tag (long ones): a value of the same length that
    /// differs in one byte, a reference spelled differently, or the same value at another place
    /// must each come out as their own bytes say.
    @Test func repeatedAttributeValuesAreDecodedFromTheirOwnBytes() throws {
        let values = [
            "&lt;&lt;HKDevice: 0x1&gt;, name:Watch&gt;", "&lt;&lt;HKDevice: 0x2&gt;, name:Watch&gt;",
            "&lt;&lt;HKDevice: 0x1&gt;, name:Watch&gt;", "&#60;&#60;HKDevice: 0x1&gt;, name:Watch&gt;",
            "Jana\u{2019}s Apple Watch 1", "Jana\u{2019}s Apple Watch 2", "Jana\u{2019}s Apple Watch 1",
            "a-value-of-16-by", "a-value-of-16-bz", "a-value-of-16-by", "x", "a-value-of-16-by",
            String(repeating: "long&amp;", count: 200), String(repeating: "long&amp;", count: 200),  // not remembered
        ]
        let records = values.enumerated().map { index, value in
            // The same value also at another place (the second attribute) of every other tag.
            index.isMultiple(of: 2) ? "<R a=\"\(value)\" b=\"\(value)\"/>" : "<R a=\"\(value)\" bb=\"0123456789abcdefg\"/>"
        }
        let document = "<D>" + records.joined() + "</D>"
        let decoded = try events(document, chunkSize: 7).compactMap { event -> [String]? in
            guard case .start(name: "R", let attributes) = event else { return nil }
            return attributes.map(\.value)
        }
        let expected = values.enumerated().map { index, value in
            let text = value.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&#60;", with: "<").replacingOccurrences(of: "&amp;", with: "&")
            return index.isMultiple(of: 2) ? [text, text] : [text, "0123456789abcdefg"]
        }
        #expect(decoded == expected)
        // Attribute names of one length are still told apart, and a repeated one refused.
        #expect(try events("<a ab=\"1\" cd=\"2\"/>") == [
            .start(name: "a", attributes: [XMLAttribute(name: "ab", value: "1"), XMLAttribute(name: "cd", value: "2")]), .end(name: "a"),
        ])
        #expect(failure("<a ab=\"1\" cd=\"2\" ab=\"3\"/>") == .damagedXML(offset: 19, reason: "attribute ab appears twice"))
        #expect(failure("<a><b x=\"1\" <c/></a>") == .damagedXML(offset: 12, reason: "'<' inside a tag"))
    }

    @Test func boundsHoldAgainstHostileDocuments() {
        let deep = String(repeating: "<a>", count: 100)
        #expect(failure(deep) == .damagedXML(offset: 192, reason: "elements nested deeper than 64"))
        let endless = "<a b=\"" + String(repeating: "x", count: XMLPullReader.maximumMarkupBytes + 10)
        if case .damagedXML(_, let reason) = failure(endless) {
            #expect(reason == "a tag longer than \(XMLPullReader.maximumMarkupBytes) bytes")
        } else {
            Issue.record("an endless tag was not refused")
        }
        let many = "<a " + (0..<300).map { "x\($0)=\"1\"" }.joined(separator: " ") + "/>"
        if case .damagedXML(_, let reason) = failure(many) {
            #expect(reason == "more than \(XMLPullReader.maximumAttributes) attributes")
        } else {
            Issue.record("too many attributes were not refused")
        }
    }
}
