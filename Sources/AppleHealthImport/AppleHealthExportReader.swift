import Foundation
import HealthModel

/// What an import found, beyond the records it handed on.
public struct AppleHealthImportTally: Equatable, Sendable {
    /// Top-level `Record` elements read.
    public var recordElements = 0
    /// Quantity samples handed on (alone or in a correlation).
    public var samples = 0
    /// Correlations handed on (blood pressure, food).
    public var correlations = 0
    /// Top-level copies of correlation members left out (the correlation carries them).
    public var correlationCopiesSkipped = 0
    /// Records of types ingestd does not know (category types, workouts' HKDataTypes…), by type:
    /// at most `AppleHealthExportReader.maximumListedNames` names (each at most 80 characters),
    /// the records of further names counted in `unknownTypesNotListed`.
    public var unknownTypes: [String: Int] = [:]
    public var unknownTypesNotListed = 0
    /// Records that could not be read (bad number, unit or date), by reason, with one example each.
    public var unreadable: [String: Int] = [:]
    public var unreadableExamples: [String: String] = [:]
    /// Metadata entries refused (an unknown time zone, a sync version that is not an integer…).
    public var metadataRefused = 0
    /// Other top-level elements passed over (Workout, ActivitySummary, ClinicalRecord…), by name
    /// (bounded like `unknownTypes`).
    public var otherElements: [String: Int] = [:]
    public var otherElementsNotListed = 0
    /// The (source, type identifier) pairs seen in the records handed on, for at most
    /// `AppleHealthExportReader.maximumListedSources` sources; the samples of further sources
    /// are counted in `samplesOfSourcesNotListed`.
    public var sourceTypes: [String: Set<String>] = [:]
    public var samplesOfSourcesNotListed = 0

    public init() {}

    mutating func countUnknownType(_ name: String) { Self.countListed(name, in: &unknownTypes, notListed: &unknownTypesNotListed) }
    mutating func countOtherElement(_ name: String) { Self.countListed(name, in: &otherElements, notListed: &otherElementsNotListed) }

    /// Counts `name` under its first 80 characters while fewer than `maximumListedNames` names
    /// are listed; the rest in `notListed`.
    private static func countListed(_ name: String, in counts: inout [String: Int], notListed: inout Int) {
        let key = name.utf8.count <= 80 ? name : String(name.prefix(80)) + "…"
        if counts[key] != nil || counts.count < AppleHealthExportReader.maximumListedNames {
            counts[key, default: 0] += 1
        } else {
            notListed += 1
        }
    }
}

/// Reads an Apple Health `export.xml` (streamed through `XMLPullReader`) into ingestd records,
/// handing them on in batches.
///
/// - Quantity `Record`s become samples in their own unit (the pipeline converts), attributed to
///   their `sourceName`, with the device parsed from the export's HKDevice description and the
///   `MetadataEntry`s as metadata (sync identifier and version typed, so a re-written sample
///   replaces the older version).
/// - A `Correlation` becomes one correlation with its nested records as members. The export
///   also lists those members as top-level records; such a copy is left out when the correlation
///   names it (matched on type, source, dates and value, either order, within bounded tables).
/// - Dates are `YYYY-MM-DD HH:MM:SS ±HHMM`; each sample keeps its offset as metadata
///   `utcOffset`, and the app version as `sourceVersion`.
public final class AppleHealthExportReader {
    /// Records handed on per batch.
    public var batchSize = 2_000
    /// At most this many top-level correlation-member records wait for their correlation (and
    /// as many correlation members wait for their top-level copy); past it the oldest goes on alone.
    public var maximumWaitingMembers = 50_000
    /// At most this many members in one correlation (a food correlation has a few dozen); a
    /// larger one is refused whole and counted as unreadable, its members not kept.
    public static let maximumCorrelationMembers = 256
    /// At most this many `MetadataEntry`s on one record or correlation, and at most this many
    /// bytes of metadata keys and values in one top-level element (a correlation with its
    /// members); past either the element is refused and counted as unreadable.
    public static let maximumMetadataEntries = 128
    public static let maximumMetadataBytes = 64 << 10
    /// Distinct names listed in the tally (unknown types, other elements), and distinct sources
    /// whose types are listed; the rest is counted.
    public static let maximumListedNames = 100
    public static let maximumListedSources = 1_000

    public private(set) var tally = AppleHealthImportTally()
    private let xml: XMLPullReader
    private let deliver: ([HealthRecord]) throws -> Void
    private var batch: [HealthRecord] = []

    /// Top-level member records not yet matched by a correlation, oldest first.
    private var waitingMembers: [String: QuantitySample] = [:]
    private var waitingOrder: [String] = []
    private var waitingOrderStart = 0
    /// Members of correlations whose top-level copy has not come yet.
    private var coveredMembers: [String: Int] = [:]
    private var coveredOrder: [String] = []
    private var coveredOrderStart = 0
    /// Devices by their description: an export repeats a handful of device strings on every
    /// record. Bounded: past `maximumCachedDevices` descriptions it starts over.
    private var devices: [String: Device?] = [:]
    private static let maximumCachedDevices = 1_024
    /// Source names seen, so that the samples of one source share one string (less memory, and
    /// comparisons downstream find equal storage first). Bounded like `devices`.
    private var sources: [String] = []
    private static let maximumCachedSources = 64
    /// (source, type) pairs handed on for the first time since `takeNewSourceTypes()`.
    private var newSourceTypes: [(source: String, type: QuantityType)] = []
    /// The last (source, type) pairs noted, so that a run of records of one pair is not hashed
    /// into `tally.sourceTypes` once per record.
    private var recentlyNoted: [(source: String, type: String)] = []
    private var nextNotedSlot = 0
    private static let recentlyNotedLimit = 8

    public init(xml: XMLPullReader, deliver: @escaping ([HealthRecord]) throws -> Void) {
        self.xml = xml
        self.deliver = deliver
    }

    /// Reads the whole document. On damage, what was read before it is handed on, then the
    /// error is thrown.
    public func run() throws {
        do {
            try readDocument()
        } catch {
            try finish()
            throw error
        }
        try finish()
    }

    private struct OpenRecord {
        var fields: RecordFields
        var metadata: [(key: String, value: String)] = []
        /// Entries past `maximumMetadataEntries` (not kept).
        var metadataOverflow = 0
    }

    private struct OpenCorrelation {
        var attributes: [XMLAttribute]
        var metadata: [(key: String, value: String)] = []
        var metadataOverflow = 0
        var members: [(key: String, sample: QuantitySample)] = []
        /// Members past `maximumCorrelationMembers`, or refused (not kept).
        var membersOverflow = 0
        var membersRefused = 0
    }

    /// Bytes of metadata keys and values in the current top-level element.
    private var metadataBytes = 0
    /// Bytes of the attribute names and values of the current top-level element's records (with
    /// `metadataBytes`, what bounds the length of its JSON line).
    private var attributeBytes = 0

    /// Reads the tags through `XMLScanner.nextTag()`: a record's attributes are read from
    /// their bytes into `RecordFields`, and only other elements' names and attributes become strings.
    private func readDocument() throws {
        try xml.withScanner { scanner in try readDocument(&scanner) }
    }

    private func readDocument(_ xml: inout XMLScanner) throws {
        var depth = 0
        var record: OpenRecord?
        var correlation: OpenCorrelation?
        var sawHealthData = false
        while let kind = try xml.nextTag() {
            switch kind {
            case .start:
                depth += 1
                switch depth {
                case 1:
                    guard xml.tagNameIs("HealthData") else {
                        throw AppleHealthImportError.damagedXML(offset: xml.documentOffset, reason: "the root element is <\(xml.tagName)>, not <HealthData>")
                    }
                    sawHealthData = true
                case 2 where xml.tagNameIs("Record"):
                    record = OpenRecord(fields: recordFields(&xml, member: false))
                    metadataBytes = 0
                    attributeBytes = xml.attributeBytes
                case 3 where correlation != nil && xml.tagNameIs("Record"):
                    record = OpenRecord(fields: recordFields(&xml, member: true))
                    attributeBytes += xml.attributeBytes
                case 2 where xml.tagNameIs("Correlation"):
                    correlation = OpenCorrelation(attributes: xml.attributes())
                    metadataBytes = 0
                    attributeBytes = xml.attributeBytes
                case 3 where xml.tagNameIs("MetadataEntry"), 4 where xml.tagNameIs("MetadataEntry"):
                    guard let keyIndex = xml.attributeIndex("key"), let valueIndex = xml.attributeIndex("value") else { break }
                    let key = xml.attributeValue(keyIndex), value = xml.attributeValue(valueIndex)
                    metadataBytes += key.utf8.count + value.utf8.count
                    // Taken out and put back: reading `record?.metadata` copied the whole record.
                    if var open = record.take() {
                        if open.metadata.count < Self.maximumMetadataEntries, metadataBytes <= Self.maximumMetadataBytes {
                            open.metadata.append((key, value))
                        } else {
                            open.metadataOverflow += 1
                        }
                        record = open
                    } else if depth == 3, correlation != nil {
                        if correlation?.metadata.count ?? 0 < Self.maximumMetadataEntries, metadataBytes <= Self.maximumMetadataBytes {
                            correlation?.metadata.append((key, value))
                        } else {
                            correlation?.metadataOverflow += 1
                        }
                    }
                case 2 where xml.tagNameIs("ExportDate"):
                    break
                case 2:
                    tally.countOtherElement(xml.tagName)
                default:
                    break
                }
            case .end:
                defer { depth -= 1 }
                switch depth {
                case 2 where xml.tagNameIs("Record"):
                    if var open = record.take() { try topLevelRecord(&open) }
                case 3 where correlation != nil && xml.tagNameIs("Record"):
                    if var open = record.take() {
                        if correlation?.members.count ?? 0 >= Self.maximumCorrelationMembers {
                            correlation?.membersOverflow += 1
                        } else if open.metadataOverflow > 0 {
                            correlation?.membersRefused += 1
                        } else if let sample = sample(from: &open, counting: false) {
                            correlation?.members.append((open.fields.memberKey ?? "", sample))
                        }
                    }
                case 2 where xml.tagNameIs("Correlation"):
                    if let open = correlation.take() { try finishCorrelation(open) }
                default:
                    break
                }
            }
        }
        guard sawHealthData else {
            throw AppleHealthImportError.damagedXML(offset: xml.documentOffset, reason: "no <HealthData> element")
        }
    }

    // MARK: Records

    private func topLevelRecord(_ open: inout OpenRecord) throws {
        tally.recordElements += 1
        guard open.metadataOverflow == 0 else {
            return unreadable(Self.metadataBoundReason, open.fields.typeName ?? "Record")
        }
        guard let sample = sample(from: &open, counting: true) else { return }
        guard mayFitOneLine(samples: 1) || Self.fitsOneLine(.sample(sample)) else {
            return unreadable(Self.lineBoundReason, sample.type.identifier)
        }
        guard open.fields.isMember else {
            return try emit(consume sample)
        }
        let key = open.fields.memberKey ?? ""
        if let covered = coveredMembers[key] {
            if covered <= 1 { coveredMembers[key] = nil } else { coveredMembers[key] = covered - 1 }
            tally.correlationCopiesSkipped += 1
            return
        }
        if waitingMembers[key] != nil {
            // The same reading twice at top level: hand on the first (the store deduplicates).
            try emit(sample)
            return
        }
        waitingMembers[key] = sample
        waitingOrder.append(key)
        if waitingMembers.count > maximumWaitingMembers { try releaseOldestWaiting() }
    }

    /// The record's `sourceName`, nil when absent or empty. Source ids are printable text (as
    /// in JSON lines): a control character (an ESC sequence, a newline) is replaced by its
    /// printed escape (`Evil\e[31mWatch`), so the name can be listed, granted and stored.
    static func sourceName(_ attributes: [XMLAttribute]) -> String? {
        guard let source = value("sourceName", attributes), !source.isEmpty else { return nil }
        return PrintableText.escapingControlCharacters(source)
    }

    private func finishCorrelation(_ open: OpenCorrelation) throws {
        let attributes = open.attributes
        guard let typeName = Self.value("type", attributes) else { return unreadable("a correlation without a type", "Correlation") }
        guard let type = CorrelationType.named(typeName) else {
            return tally.countUnknownType(typeName)
        }
        guard let source = Self.sourceName(attributes) else {
            return unreadable("no sourceName", typeName)
        }
        guard let start = Self.date(Self.value("startDate", attributes)), let end = Self.date(Self.value("endDate", attributes)) else {
            return unreadable("a date that is not YYYY-MM-DD HH:MM:SS ±HHMM", Self.value("startDate", attributes) ?? "")
        }
        guard open.membersOverflow == 0 else {
            return unreadable("a correlation with more than \(Self.maximumCorrelationMembers) members", typeName)
        }
        guard open.metadataOverflow == 0, open.membersRefused == 0 else { return unreadable(Self.metadataBoundReason, typeName) }
        guard !open.members.isEmpty else { return unreadable("a correlation without members", typeName) }
        let correlation = Correlation(
            type: type, start: start, end: end, objects: open.members.map(\.sample), source: sharedSource(source),
            device: cachedDevice(Self.value("device", attributes)),
            metadata: metadata(open.metadata, sourceVersion: Self.value("sourceVersion", attributes), utcOffset: Self.utcOffset(attributes)))
        guard mayFitOneLine(samples: open.members.count + 1) || Self.fitsOneLine(.correlation(correlation)) else { return unreadable(Self.lineBoundReason, typeName) }
        for member in open.members {
            if waitingMembers.removeValue(forKey: member.key) != nil {
                tally.correlationCopiesSkipped += 1
            } else {
                coveredMembers[member.key, default: 0] += 1
                coveredOrder.append(member.key)
                if coveredOrder.count - coveredOrderStart > maximumWaitingMembers { forgetOldestCovered() }
            }
        }
        tally.correlations += 1
        tally.samples += correlation.objects.count
        for member in correlation.objects { noteSourceType(source, member.type) }
        try append(.correlation(correlation))
    }

    /// The sample a record describes, or nil (counted) when its type is unknown or it is unreadable.
    /// The type, unit, source and device are taken out of `open` (moved into the sample, not
    /// copied); what the counts name stays.
    private func sample(from open: inout OpenRecord, counting: Bool) -> QuantitySample? {
        guard let typeName = open.fields.typeName else {
            if counting { unreadable("a record without a type", "Record") }
            return nil
        }
        guard let type = open.fields.type.take() else {
            if counting { tally.countUnknownType(typeName) }
            return nil
        }
        guard let value = open.fields.value else {
            if counting { unreadable("a value that is not a number", open.fields.valueText ?? "(none)") }
            return nil
        }
        guard let unit = open.fields.unit.take() else {
            if counting { unreadable("a unit ingestd does not know", open.fields.unitText ?? "(none)") }
            return nil
        }
        guard let source = open.fields.source.take() else {
            if counting { unreadable("no sourceName", typeName) }
            return nil
        }
        guard let start = open.fields.start, let end = open.fields.end else {
            if counting { unreadable("a date that is not YYYY-MM-DD HH:MM:SS ±HHMM", open.fields.startText ?? "(none)") }
            return nil
        }
        return QuantitySample(
            type: type, quantity: Quantity(value: value, unit: unit), start: start, end: end, source: source,
            device: open.fields.device.take(), metadata: metadata(open.metadata, sourceVersion: open.fields.sourceVersion, utcOffset: open.fields.utcOffset))
    }

    /// What a `Record` start tag says, read from its attributes when the tag is read (their
    /// bytes are gone by the record's end). The checks of `sample(from:counting:)` are made on
    /// these in the order they were made on the attributes' strings.
    private struct RecordFields {
        var typeName: String?
        /// The type, when `typeName` names a quantity type (and starts with `HK`).
        var type: QuantityType?
        /// Whether `type` is one the export lists in correlations too (`isCorrelationMember`).
        var isMember = false
        var valueText: String?
        /// The value, when `valueText` is a finite decimal number.
        var value: Double?
        var unitText: String?
        var unit: HealthModel.Unit?
        /// The source's id: the `sourceName` made printable and shared; nil when absent or empty.
        var source: String?
        var sourceVersion: String?
        var device: Device?
        var start: Date?
        var end: Date?
        /// The `startDate` text, kept only when a date could not be read (the example counted).
        var startText: String?
        /// The `startDate`'s offset (`+0200`), when both dates were read.
        var utcOffset: String?
        /// `memberKey`, for a record that may be (or is) a correlation's member.
        var memberKey: String?
    }

    /// The current `Record` start tag's fields. Values that repeat tag after tag (type, unit,
    /// source, device) are looked up by their bytes in small caches of what they gave before.
    private func recordFields(_ xml: inout XMLScanner, member: Bool) -> RecordFields {
        var fields = RecordFields()
        var typeIndex: Int?, valueIndex: Int?, unitIndex: Int?, sourceIndex: Int?, versionIndex: Int?, deviceIndex: Int?
        var startIndex: Int?, endIndex: Int?
        for index in xml.tagAttributes.indices {
            // The first attribute of each name (the reader refuses a name twice).
            switch xml.tagAttributes[index].nameEnd - xml.tagAttributes[index].nameStart {
            case 4:
                if typeIndex == nil, xml.attributeNameIs(index, "type") { typeIndex = index }
                else if unitIndex == nil, xml.attributeNameIs(index, "unit") { unitIndex = index }
            case 5: if valueIndex == nil, xml.attributeNameIs(index, "value") { valueIndex = index }
            case 6: if deviceIndex == nil, xml.attributeNameIs(index, "device") { deviceIndex = index }
            case 7: if endIndex == nil, xml.attributeNameIs(index, "endDate") { endIndex = index }
            case 9: if startIndex == nil, xml.attributeNameIs(index, "startDate") { startIndex = index }
            case 10: if sourceIndex == nil, xml.attributeNameIs(index, "sourceName") { sourceIndex = index }
            case 13: if versionIndex == nil, xml.attributeNameIs(index, "sourceVersion") { versionIndex = index }
            default: break
            }
        }
        if let typeIndex {
            (fields.typeName, fields.type, fields.isMember) = recentTypes.value(ofAttribute: typeIndex, in: &xml) { name in
                let type = name.hasPrefix("HK") ? QuantityType.named(name) : nil
                return (name, type, type.map(Self.isCorrelationMember) ?? false)
            }
        }
        if let valueIndex {
            let text = xml.attributeValue(valueIndex)
            fields.valueText = text
            if let value = Self.decimal(text), value.isFinite { fields.value = value }
        }
        if let unitIndex { (fields.unitText, fields.unit) = recentUnits.value(ofAttribute: unitIndex, in: &xml) { ($0, unitSpellings.unit($0)) } }
        if let sourceIndex {
            fields.source = recentSources.value(ofAttribute: sourceIndex, in: &xml) { name in
                name.isEmpty ? nil : sharedSource(PrintableText.escapingControlCharacters(name))
            }
        }
        if let versionIndex { fields.sourceVersion = xml.attributeValue(versionIndex) }
        if let deviceIndex { fields.device = recentDevices.value(ofAttribute: deviceIndex, in: &xml) { Self.device($0) } }
        if let startIndex { fields.start = xml.withAttributeValue(startIndex) { Self.date(utf8: $0) } }
        if let endIndex { fields.end = xml.withAttributeValue(endIndex) { Self.date(utf8: $0) } }
        if let startIndex, fields.start != nil, fields.end != nil {
            // A date read is 25 ASCII bytes: its last 5 are its last 5 characters.
            fields.utcOffset = xml.withAttributeValue(startIndex) { String(decoding: UnsafeBufferPointer(rebasing: $0[20...]), as: UTF8.self) }
        } else {
            fields.startText = startIndex.map { xml.attributeValue($0) }
        }
        if member || fields.isMember {
            let texts = [typeIndex, sourceIndex, startIndex, endIndex, valueIndex, unitIndex].map { index in index.map { xml.attributeValue($0) } ?? "" }
            fields.memberKey = texts.joined(separator: "\u{1F}")
        }
        return fields
    }

    /// Recent type names and what they name, units, sources (`sourceName` bytes to the source
    /// id) and devices (the description's bytes to the device), by their bytes.
    private var recentTypes = RecentByBytes<(String, QuantityType?, Bool)>(ways: 8, maximumBytes: RecentAttributeValues.lengths.upperBound)
    private var recentUnits = RecentByBytes<(String, HealthModel.Unit?)>(ways: 8, maximumBytes: RecentAttributeValues.lengths.upperBound)
    private var recentSources = RecentByBytes<String?>(ways: 8, maximumBytes: RecentAttributeValues.lengths.upperBound)
    private var recentDevices = RecentByBytes<Device?>(ways: 8, maximumBytes: RecentAttributeValues.lengths.upperBound)
    /// Every unit spelling parsed, beyond the few recent ones.
    private let unitSpellings = UnitCache(capacity: 256)

    private func unreadable(_ reason: String, _ example: String) {
        tally.unreadable[reason, default: 0] += 1
        if tally.unreadableExamples[reason] == nil { tally.unreadableExamples[reason] = String(example.prefix(80)) }
    }

    private static let metadataBoundReason =
        "more than \(maximumMetadataEntries) metadata entries or \(maximumMetadataBytes) bytes of metadata"
    private static let lineBoundReason = "a record longer than the \(HealthRecordEncoder.maximumLineBytes)-byte JSON-lines limit"


    /// Whether the current top-level element surely encodes within the JSON-lines limit: its
    /// attribute and metadata bytes, each escaped at worst as `\u00XX` (6 bytes), plus the fixed
    /// fields of every sample (uuid, type, unit, dates, keys). Only an element this cannot vouch
    /// for is encoded (`fitsOneLine`).
    private func mayFitOneLine(samples: Int) -> Bool {
        6 * (attributeBytes + metadataBytes) + 1_024 * samples < HealthRecordEncoder.maximumLineBytes
    }

    /// Whether a record's JSON line (what `export --format jsonl` writes and `replay` reads back)
    /// stays within the JSON-lines limit.
    static func fitsOneLine(_ record: HealthRecord) -> Bool {
        HealthRecordEncoder().encode(record).utf8.count < HealthRecordEncoder.maximumLineBytes
    }

    /// The metadata of a record or correlation: its entries, its app's version and its offset
    /// from UTC. Records repeat the same few combinations (a record of a watch carries its motion
    /// context, 0 or 1, and its version): a combination of at most 4 entries is built once and
    /// taken from `recentMetadata` after, compared by bytes, with the entries it refused counted again.
    private func metadata(_ entries: [(key: String, value: String)], sourceVersion: String?, utcOffset: String?) -> Metadata {
        let cacheable = entries.count <= 4
        if cacheable {
            // From the last one found or made: records come in runs.
            for step in recentMetadata.indices {
                let index = (lastMetadataSlot + step) % recentMetadata.count
                guard recentMetadata[index].matches(entries, sourceVersion: sourceVersion, utcOffset: utcOffset) else { continue }
                lastMetadataSlot = index
                tally.metadataRefused += recentMetadata[index].refused
                return recentMetadata[index].metadata
            }
        }
        let refusedBefore = tally.metadataRefused
        var metadata = Metadata()
        for (key, text) in entries {
            do {
                switch MetadataKey.canonical(key) {
                case MetadataKey.syncVersion:
                    guard let version = Int(text) else { throw MetadataError.wrongValueType(key: key, expected: "an integer", found: .string(text)) }
                    metadata.syncVersion = version
                case MetadataKey.syncIdentifier, MetadataKey.externalUUID, MetadataKey.timeZone, MetadataKey.deviceSerialNumber:
                    try metadata.set(.string(text), forKey: key)
                default:
                    // The export writes every metadata value as text; only keys HealthKit
                    // documents as numbers (booleans as 0/1, enumerations) become numbers, so an
                    // app's "00123" or 30-digit id stays exactly the string it was.
                    if MetadataKey.numericHealthKitKeys.contains(MetadataKey.canonical(key)), let number = Self.decimal(text), number.isFinite {
                        try metadata.set(.number(number), forKey: key)
                    } else {
                        try metadata.set(.string(text), forKey: key)
                    }
                }
            } catch {
                tally.metadataRefused += 1
            }
        }
        if let sourceVersion, !sourceVersion.isEmpty {
            try? metadata.set(.string(sourceVersion), forKey: "sourceVersion")
        }
        if let utcOffset {
            try? metadata.set(.string(utcOffset), forKey: "utcOffset")
        }
        if cacheable {
            let built = BuiltMetadata(
                entries: entries, sourceVersion: sourceVersion, utcOffset: utcOffset, metadata: metadata, refused: tally.metadataRefused - refusedBefore)
            lastMetadataSlot = nextMetadataSlot
            if recentMetadata.count < 8 { recentMetadata.append(built) } else { recentMetadata[nextMetadataSlot] = built }
            nextMetadataSlot = (nextMetadataSlot + 1) % 8
        }
        return metadata
    }

    /// Metadata built for a combination of entries, version and offset (`metadata(_:sourceVersion:utcOffset:)`);
    /// a class, so that looking through the cache copies no strings.
    private final class BuiltMetadata {
        let entries: [(key: String, value: String)]
        let sourceVersion: String?
        let utcOffset: String?
        let metadata: Metadata
        /// Entries refused while building it.
        let refused: Int

        init(entries: [(key: String, value: String)], sourceVersion: String?, utcOffset: String?, metadata: Metadata, refused: Int) {
            self.entries = entries
            self.sourceVersion = sourceVersion
            self.utcOffset = utcOffset
            self.metadata = metadata
            self.refused = refused
        }

        /// Whether these are the same texts, byte for byte.
        func matches(_ entries: [(key: String, value: String)], sourceVersion: String?, utcOffset: String?) -> Bool {
            guard self.entries.count == entries.count, self.utcOffset.hasSameUTF8(as: utcOffset), self.sourceVersion.hasSameUTF8(as: sourceVersion) else { return false }
            for index in entries.indices
            where !self.entries[index].key.hasSameUTF8(as: entries[index].key) || !self.entries[index].value.hasSameUTF8(as: entries[index].value) {
                return false
            }
            return true
        }
    }

    private var recentMetadata: [BuiltMetadata] = []
    private var nextMetadataSlot = 0
    private var lastMetadataSlot = 0

    /// The offset from UTC of a correlation's `startDate` (read as a date before this is asked).
    private static func utcOffset(_ attributes: [XMLAttribute]) -> String? {
        guard let startText = value("startDate", attributes), startText.utf8.count == 25 else { return nil }
        return String(startText.suffix(5))
    }

    // MARK: Correlation members

    /// Types the export lists twice (inside their correlation and at top level).
    static func isCorrelationMember(_ type: QuantityType) -> Bool {
        type.isDietary || type == .bloodPressureSystolic || type == .bloodPressureDiastolic
    }

    static func memberKey(_ attributes: [XMLAttribute]) -> String {
        ["type", "sourceName", "startDate", "endDate", "value", "unit"].map { value($0, attributes) ?? "" }.joined(separator: "\u{1F}")
    }

    private func releaseOldestWaiting() throws {
        while waitingOrderStart < waitingOrder.count {
            let key = waitingOrder[waitingOrderStart]
            waitingOrderStart += 1
            if let sample = waitingMembers.removeValue(forKey: key) {
                try emit(sample)
                break
            }
        }
        compactOrders()
    }

    private func forgetOldestCovered() {
        let key = coveredOrder[coveredOrderStart]
        coveredOrderStart += 1
        if let count = coveredMembers[key] {
            if count <= 1 { coveredMembers[key] = nil } else { coveredMembers[key] = count - 1 }
        }
        compactOrders()
    }

    private func compactOrders() {
        if waitingOrderStart > 4_096, waitingOrderStart * 2 > waitingOrder.count {
            waitingOrder.removeFirst(waitingOrderStart)
            waitingOrderStart = 0
        }
        if coveredOrderStart > 4_096, coveredOrderStart * 2 > coveredOrder.count {
            coveredOrder.removeFirst(coveredOrderStart)
            coveredOrderStart = 0
        }
    }

    // MARK: Output

    /// The (source, type) pairs handed on for the first time since the last call (a caller that
    /// grants what an import holds asks once per batch instead of looking at every sample).
    public func takeNewSourceTypes() -> [(source: String, type: QuantityType)] {
        defer { newSourceTypes.removeAll() }
        return newSourceTypes
    }

    private func noteSourceType(_ source: String, _ type: QuantityType) {
        let listFull = tally.sourceTypes.count >= Self.maximumListedSources
        if listFull, tally.sourceTypes[source] == nil { tally.samplesOfSourcesNotListed += 1 }
        // Identifiers are the catalogue's ASCII strings: equal types have equal bytes.
        for index in recentlyNoted.indices
        where recentlyNoted[index].source.hasSameUTF8(as: source) && recentlyNoted[index].type.hasSameUTF8(as: type.identifier) {
            return
        }
        if recentlyNoted.count < Self.recentlyNotedLimit {
            recentlyNoted.append((source, type.identifier))
        } else {
            recentlyNoted[nextNotedSlot] = (source, type.identifier)
            nextNotedSlot = (nextNotedSlot + 1) % Self.recentlyNotedLimit
        }
        if listFull, tally.sourceTypes[source] == nil {
            // Not listed, but still announced (once per batch at most) for a caller granting them.
            if !newSourceTypes.contains(where: { $0.type == type && $0.source.hasSameUTF8(as: source) }) {
                newSourceTypes.append((source, type))
            }
            return
        }
        if tally.sourceTypes[source, default: []].insert(type.identifier).inserted {
            newSourceTypes.append((source, type))
        }
    }

    /// `name`, as the string already made for an earlier record of the same source.
    private func sharedSource(_ name: String) -> String {
        for known in sources where known.hasSameUTF8(as: name) { return known }
        if sources.count >= Self.maximumCachedSources { sources.removeAll(keepingCapacity: true) }
        sources.append(name)
        return name
    }

    /// Hands on a sample (consumed, so that it is moved into the batch, not copied).
    private func emit(_ sample: consuming QuantitySample) throws {
        tally.samples += 1
        noteSourceType(sample.source, sample.type)
        try append(.sample(sample))
    }

    private func append(_ record: consuming HealthRecord) throws {
        batch.append(record)
        if batch.count >= batchSize { try flush() }
    }

    private func flush() throws {
        guard !batch.isEmpty else { return }
        let records = batch
        batch.removeAll(keepingCapacity: true)
        try deliver(records)
    }

    /// Hands on the members still waiting for a correlation (alone) and the last batch.
    private func finish() throws {
        for key in waitingOrder[waitingOrderStart...] {
            if let sample = waitingMembers.removeValue(forKey: key) { try emit(sample) }
        }
        waitingOrder.removeAll()
        waitingOrderStart = 0
        try flush()
    }

    // MARK: Field formats

    /// A decimal number as the export writes values (`72.5`, `-3`, `1e-05`, `.5`); nil for
    /// anything else Swift's `Double(_:)` would also take (hex `0x10`, `0x1p3`, `nan`, `inf`).
    static func decimal(_ text: String) -> Double? {
        var digits = 0
        var index = 0
        var sawExponent = false
        for byte in text.utf8 {
            defer { index += 1 }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"): continue
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard digits > 0, !sawExponent else { return nil }
                sawExponent = true
            default: return nil
            }
        }
        guard digits > 0 else { return nil }
        return Double(text)
    }

    static func value(_ name: String, _ attributes: [XMLAttribute]) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// `2024-10-20 13:19:04 +0200` (the export's format); nil for anything else.
    static func date(_ text: String?) -> Date? {
        guard var text else { return nil }
        return text.withUTF8 { date(utf8: $0) }
    }

    /// `date(_:)` of UTF-8 bytes: the checks and the instant of `ISO8601DateTime.date(from:)`
    /// for the text with a `T` for the first space and without the second, read in place.
    static func date(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count == 25, bytes[10] == UInt8(ascii: " "), bytes[19] == UInt8(ascii: " "),
            bytes[20] == UInt8(ascii: "+") || bytes[20] == UInt8(ascii: "-")
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<start + count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == UInt8(ascii: "-"), let month = number(5, 2), bytes[7] == UInt8(ascii: "-"),
            let day = number(8, 2), let hour = number(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = number(14, 2),
            bytes[16] == UInt8(ascii: ":"), let second = number(17, 2),
            let offsetHours = number(21, 2), let offsetMinutes = number(23, 2)
        else { return nil }
        guard (1...12).contains(month), (1...CalendarMath.daysInMonth(year: year, month: month)).contains(day),
            hour < 24, minute < 60, second < 60, offsetHours < 24, offsetMinutes < 60
        else { return nil }
        let offset = (bytes[20] == UInt8(ascii: "-") ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
        let seconds = CalendarMath.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `device(text)`, each description parsed once (see `devices`).
    private func cachedDevice(_ text: String?) -> Device? {
        guard let text else { return nil }
        if let known = devices[text] { return known }
        if devices.count >= Self.maximumCachedDevices { devices.removeAll(keepingCapacity: true) }
        let parsed = Self.device(text)
        devices[text] = .some(parsed)
        return parsed
    }

    /// The export's HKDevice description, `<<HKDevice: 0x…>, name:Apple Watch, manufacturer:Apple
    /// Inc., model:Watch, hardware:Watch6,2, software:10.1>`, read leniently: `key:value` parts
    /// split at ", " (a part without a known key continues the previous value).
    static func device(_ text: String?) -> Device? {
        guard let text, text.hasPrefix("<<HKDevice"), text.hasSuffix(">") else { return nil }
        var device = Device()
        var lastKey: String?
        var values: [String: String] = [:]
        for part in text.dropLast().components(separatedBy: ", ").dropFirst() {
            if let colon = part.firstIndex(of: ":"), deviceKeys.contains(String(part[..<colon])) {
                let key = String(part[..<colon])
                values[key] = String(part[part.index(after: colon)...])
                lastKey = key
            } else if let key = lastKey {
                values[key, default: ""] += ", " + part
            }
        }
        device.name = values["name"]
        device.manufacturer = values["manufacturer"]
        device.model = values["model"]
        device.hardwareVersion = values["hardware"]
        device.firmwareVersion = values["firmware"]
        device.softwareVersion = values["software"]
        device.localIdentifier = values["localIdentifier"]
        device.udiDeviceIdentifier = values["UDIDeviceIdentifier"] ?? values["udiDeviceIdentifier"]
        return device.isEmpty ? nil : device
    }

    private static let deviceKeys: Set<String> = [
        "name", "manufacturer", "model", "hardware", "firmware", "software", "localIdentifier",
        "UDIDeviceIdentifier", "udiDeviceIdentifier", "creation date",
    ]
}

extension RecentByBytes {
    /// What was made for the value of attribute `index` of the tag `xml` read last (looked up
    /// by its bytes at place 0), or what `make` makes of its text (then remembered, unless it is
    /// longer than `RecentAttributeValues.lengths` allows: a hostile document's megabyte values
    /// are not pinned).
    mutating func value(ofAttribute index: Int, in xml: inout XMLScanner, make: (String) -> Value) -> Value {
        guard xml.tagAttributes[index].decodedCount <= RecentAttributeValues.lengths.upperBound else { return make(xml.attributeValue(index)) }
        if let known = xml.withAttributeValue(index, { value(bytes: $0) }) { return known }
        let made = make(xml.attributeValue(index))
        xml.withAttributeValue(index) { remember(made, bytes: $0) }
        return made
    }
}

