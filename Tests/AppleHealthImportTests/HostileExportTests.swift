import Foundation
import HealthModel
import Testing
import TestSupport
@testable import AppleHealthImport

/// Issue 23's hostile exports: damaged archives refused before anything is read from them,
/// every structure of the reader bounded, values and metadata read as Apple writes them.
@Suite struct HostileExportTests {
    static let step = #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:20:04 +0200" value="100"/>"#

    static func document(_ body: String) -> [UInt8] {
        Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n\(body)\n</HealthData>\n".utf8)
    }

    static func temporaryFile(_ bytes: [UInt8], name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ahi-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func read(_ body: String) throws -> (records: [HealthRecord], tally: AppleHealthImportTally) {
        let path = try temporaryFile(document(body), name: "export.xml")
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try AppleHealthImportTests.read(AppleHealthExportFile.open(path: path).source)
    }

    // MARK: Archives

    /// Heart-rate records after the first: an entry longer than the 64 KiB the opener sniffs
    /// (which would reach the end, and the CRC check, by itself).
    static let filler = String(repeating: "\n" + #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:19:04 +0200" value="60"/>"#, count: 1_000)

    @Test func aBitFlippedEntryIsRefusedBeforeAnyRecordIsRead() throws {
        let intact = Self.document(Self.step + Self.filler)
        #expect(intact.count > 128 << 10)
        var flipped = intact
        // value="100" becomes value="900": one bit (0x31 ^ 0x08 == 0x39), the listed CRC-32 unchanged.
        let at = try #require(intact.firstRange(of: Array("value=\"100\"".utf8))).lowerBound + 7
        flipped[at] ^= 0x08
        let crc = StoredZip.crc32(intact)
        let path = try Self.temporaryFile(
            StoredZip.bytes([.init(name: "apple_health_export/export.xml", content: flipped, listedCRC: crc)]), name: "export.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: AppleHealthImportError.checksumMismatch(entry: "apple_health_export/export.xml", expected: crc, found: StoredZip.crc32(flipped))) {
            _ = try AppleHealthExportFile.open(path: path)
        }
    }

    @Test func anEmptyExportIsCalledEmptyNotMissing() throws {
        let path = try Self.temporaryFile(
            StoredZip.bytes([.init(name: "apple_health_export/export.xml", content: []),
                             .init(name: "apple_health_export/export_cda.xml", content: Array("<ClinicalDocument/>".utf8))]),
            name: "export.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: AppleHealthImportError.emptyDocument(entry: "apple_health_export/export.xml")) { _ = try AppleHealthExportFile.open(path: path) }
        let empty = try Self.temporaryFile([], name: "export.xml")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(throws: AppleHealthImportError.emptyDocument(entry: nil)) { _ = try AppleHealthExportFile.open(path: empty) }
    }

    @Test func anArchiveAfterASelfExtractorStubIsRead() throws {
        let stub = Array("MZ".utf8) + [UInt8](repeating: 0x90, count: 4_094)
        let path = try Self.temporaryFile(
            StoredZip.bytes([.init(name: "apple_health_export/export.xml", content: Self.document(Self.step))], prefix: stub), name: "export.exe")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let opened = try AppleHealthExportFile.open(path: path)
        #expect(opened.entry == "apple_health_export/export.xml")
        let (records, _) = try AppleHealthImportTests.read(opened.source)
        #expect(records.flatMap(\.samples).map(\.quantity.value) == [100])
    }

    @Test func sizesOf2To63AreNamedUnsignedNeverNegative() throws {
        let path = try Self.temporaryFile(
            StoredZip.bytes([.init(name: "apple_health_export/export.xml", content: Self.document(Self.step), zip64UncompressedSize: 1 << 63)]),
            name: "export.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try AppleHealthExportFile.open(path: path)
        } throws: { error in
            let text = String(describing: error)
            return text.contains("9223372036854775808") && !text.contains("-9223372036854775808")
        }
    }

    @Test func controlBytesInEntryNamesAreEscaped() throws {
        let name = "notes\u{1B}]0;owned\u{07}\u{9B}31m.xml"
        let path = try Self.temporaryFile(StoredZip.bytes([.init(name: name, content: Array("<notes/>".utf8))]), name: "other.zip")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try AppleHealthExportFile.open(path: path)
        } throws: { error in
            let text = String(describing: error)
            return text.contains("notes\\e]0;owned\\x07\\u009B31m.xml")
                && !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        }
    }

    // MARK: Values and metadata

    @Test func metadataStaysTextUnlessHealthKitDocumentsANumber() throws {
        let (records, tally) = try Self.read(#"""
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:20:04 +0200" value="100">
              <MetadataEntry key="appRecordID" value="00123"/>
              <MetadataEntry key="bigID" value="123456789012345678901234567890"/>
              <MetadataEntry key="hexLooking" value="0x10"/>
              <MetadataEntry key="HKWasUserEntered" value="1"/>
              <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="2"/>
            </Record>
            """#)
        let metadata = try #require(records.first?.samples.first?.metadata)
        #expect(metadata["appRecordID"] == .string("00123"))
        #expect(metadata["bigID"] == .string("123456789012345678901234567890"))
        #expect(metadata["hexLooking"] == .string("0x10"))
        #expect(metadata.wasUserEntered == true)
        #expect(metadata["HKMetadataKeyHeartRateMotionContext"] == .number(2))
        #expect(tally.metadataRefused == 0)
    }

    @Test func repeatedMetadataIsOneValueAndItsRefusalsCountPerRecord() throws {
        // The reader builds the metadata of byte-equal inputs once and shares it; what it
        // refused is still counted for every record that carries it.
        let record = #"""
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" sourceVersion="17.1" unit="count" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:20:04 +0200" value="VALUE">
              <MetadataEntry key="HKMetadataKeySyncVersion" value="two"/>
              <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>
            </Record>
            """#
        let other = record.replacingOccurrences(of: "+0200\" endDate", with: "+0100\" endDate")
        let body = [record, record, other, record].enumerated()
            .map { $0.element.replacingOccurrences(of: "VALUE", with: "\($0.offset + 1)") }.joined(separator: "\n")
        let (records, tally) = try Self.read(body)
        let metadata = records.flatMap(\.samples).map(\.metadata)
        #expect(metadata.count == 4)
        #expect(tally.metadataRefused == 4)
        #expect(metadata.map { $0["utcOffset"] } == [.string("+0200"), .string("+0200"), .string("+0100"), .string("+0200")])
        #expect(metadata.allSatisfy { $0["sourceVersion"] == .string("17.1") && $0["HKMetadataKeyHeartRateMotionContext"] == .number(1) })
        #expect(metadata[0].sharesStorage(with: metadata[1]) && metadata[0].sharesStorage(with: metadata[3]))
        #expect(!metadata[0].sharesStorage(with: metadata[2]))
    }

    @Test func recordValuesAreDecimalOnly() throws {
        let values = ["0x10", "0x1p3", "nan", "inf", "1_000", "12", "-0.5", "1e-05", ".5"]
        let body = values.map { Self.step.replacingOccurrences(of: "value=\"100\"", with: "value=\"\($0)\"") }.joined(separator: "\n")
        let (records, tally) = try Self.read(body)
        #expect(records.flatMap(\.samples).map(\.quantity.value) == [12, -0.5, 1e-05, 0.5])
        #expect(tally.unreadable["a value that is not a number"] == 5)
    }

    // MARK: Bounds

    @Test func aCorrelationWithTooManyMembersIsRefusedAndCounted() throws {
        let member = #"<Record type="HKQuantityTypeIdentifierDietaryProtein" sourceName="Food app" unit="g" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:19:04 +0200" value="1"/>"#
        let open = #"<Correlation type="HKCorrelationTypeIdentifierFood" sourceName="Food app" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:19:04 +0200">"#
        let big = open + String(repeating: member, count: AppleHealthExportReader.maximumCorrelationMembers + 44) + "</Correlation>"
        let small = open + String(repeating: member, count: 3) + "</Correlation>"
        let (records, tally) = try Self.read(big + "\n" + small)
        #expect(tally.correlations == 1)
        #expect(records.count == 1)
        #expect(tally.unreadable["a correlation with more than \(AppleHealthExportReader.maximumCorrelationMembers) members"] == 1)
    }

    @Test func unknownTypeNamesAreListedUpToTheBoundAndTheRestCounted() throws {
        let body = (0..<150).map { #"<Record type="HKCategoryTypeIdentifierMade\#($0)" sourceName="Phone" startDate="2024-10-20 13:19:04 +0200" endDate="2024-10-20 13:20:04 +0200" value="1"/>"# }
            .joined(separator: "\n") + "\n" + (0..<130).map { "<Other\($0)/>" }.joined()
        let (_, tally) = try Self.read(body)
        #expect(tally.unknownTypes.count == AppleHealthExportReader.maximumListedNames)
        #expect(tally.unknownTypes.values.reduce(0, +) + tally.unknownTypesNotListed == 150)
        #expect(tally.otherElements.count == AppleHealthExportReader.maximumListedNames)
        #expect(tally.otherElementsNotListed == 30)
    }

    @Test func aRecordWithTooMuchMetadataIsRefusedAndCounted() throws {
        let many = (0..<(AppleHealthExportReader.maximumMetadataEntries + 1)).map { #"<MetadataEntry key="k\#($0)" value="v"/>"# }.joined()
        let large = (0..<70).map { #"<MetadataEntry key="k\#($0)" value="\#(String(repeating: "x", count: 1_000))"/>"# }.joined()
        let record = Self.step.replacingOccurrences(of: "/>", with: ">")
        let (records, tally) = try Self.read(record + many + "</Record>\n" + record + large + "</Record>\n" + Self.step)
        #expect(records.count == 1)
        #expect(tally.unreadable.values.reduce(0, +) == 2)
    }

    @Test func aRecordLongerThanAJSONLineIsRefusedSoEveryStoredRecordReplays() throws {
        let name = String(repeating: "\\", count: 600_000)
        let record = Self.step.replacingOccurrences(of: "sourceName=\"Phone\"", with: "sourceName=\"Phone\" device=\"&lt;&lt;HKDevice: 0x1&gt;, name:\(name)&gt;\"")
        let (records, tally) = try Self.read(record + "\n" + Self.step)
        #expect(records.count == 1)
        #expect(tally.unreadable["a record longer than the \(HealthRecordEncoder.maximumLineBytes)-byte JSON-lines limit"] == 1)
        for record in records { #expect(AppleHealthExportReader.fitsOneLine(record)) }
    }

    @Test func sourcesAreListedUpToTheBoundAndStillAnnouncedForGranting() throws {
        let count = AppleHealthExportReader.maximumListedSources + 100
        let body = (0..<count).map { Self.step.replacingOccurrences(of: "sourceName=\"Phone\"", with: "sourceName=\"Phone \($0)\"") }.joined(separator: "\n")
        let path = try Self.temporaryFile(Self.document(body), name: "export.xml")
        defer { try? FileManager.default.removeItem(atPath: path) }
        final class Holder { weak var reader: AppleHealthExportReader? }
        let holder = Holder()
        var announced = Set<String>()
        let reader = AppleHealthExportReader(xml: XMLPullReader(source: try AppleHealthExportFile.open(path: path).source)) { _ in
            for pair in holder.reader?.takeNewSourceTypes() ?? [] { announced.insert(pair.source) }
        }
        holder.reader = reader
        reader.batchSize = 64
        try reader.run()
        let tally = reader.tally
        #expect(tally.sourceTypes.count == AppleHealthExportReader.maximumListedSources)
        #expect(tally.samplesOfSourcesNotListed == 100)
        #expect(announced.count == count)
    }
}
