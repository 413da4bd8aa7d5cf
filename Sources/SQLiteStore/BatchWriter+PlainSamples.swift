import CSQLite
import Foundation
import HealthModel
import Pipeline

/// A run of plain samples (no sync identifier, not a correlation's member) inserted by one
/// `INSERT OR IGNORE ... SELECT` from `ingestd_sample_rows` (`CSQLite/shim.h`): SQLite then opens
/// the table's and indexes' cursors and reads and writes the AUTOINCREMENT counter once per run
/// instead of once per sample. The statement visits the rows in order, so it stores the same
/// rows one insert per sample would store; this says what became of each sample the same way
/// too (`PlainRunTests` compares both).
extension BatchWriter {
    /// Runs shorter than this are inserted one statement per sample.
    static let plainRunMinimum = 8

    static let plainInsertSQL = """
        INSERT OR IGNORE INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id,
                                      metadata, person)
        SELECT uuid, type, value, start_time, end_time, source, device, device_local_id, metadata, person
        FROM ingestd_sample_rows(?)
        """

    /// The uuids of the rows stored by the last plain run when some of it was ignored, in the
    /// order of their ids.
    static let storedSinceSQL = "SELECT uuid FROM samples WHERE id > ? ORDER BY id"

    /// The end of the plain run that starts at `start` (`start` itself when `records[start]`
    /// cannot start one): samples without sync identifier (one with a sync identifier may
    /// replace a stored version, row by row) whose uuids ascend. Only ascending uuids: a
    /// statement that writes many rows and may fail part way (the store's foreign keys make every
    /// `INSERT ... SELECT` one) journals each page it changes that was in the file before it, so
    /// that it can undo itself; SQLite keeps 64 KiB of that journal in memory and writes the rest
    /// to a temporary file. Time-ordered uuids (`SampleIdentifierGenerator`: every built-in
    /// adapter's and the import's) append to the uuid index, and the statement journals a few
    /// pages; random ones change one page of it per sample, and writing those out costs more than
    /// the statement saves (the replay of the bench's random uuids: 2.51 s of CPU row by row,
    /// 3.02 s in runs).
    static func plainRunEnd(_ records: UnsafeBufferPointer<NormalizedRecord>, from start: Int) -> Int {
        var end = start
        var previous: UUID?
        while end < records.count, case .sample(let sample) = records[end], sample.metadata.syncIdentifier == nil {
            if let previous, !previous.isOrdered(before: sample.uuid) { break }
            previous = sample.uuid
            end += 1
        }
        return end
    }

    /// Inserts the plain samples `records[range]` (a run found by `plainRunEnd`) for `people`
    /// (one per record, or empty for none) and appends each one's outcome to `outcomes`. Returns
    /// false, having stored nothing, when the run's text does not fit the row format (offsets
    /// are 32-bit); the caller then inserts it row by row.
    mutating func insertPlainSamples(_ records: UnsafeBufferPointer<NormalizedRecord>, range: Range<Int>,
                                     people: [Int64?], into outcomes: inout [[WriteOutcome]]) throws -> Bool {
        plainRows.removeAll(keepingCapacity: true)
        plainText.removeAll()
        for index in range {
            guard case .sample(let sample) = records[index] else { return false }
            let type = try typeID(sample.type.identifier)
            let source = try sourceID(sample.source)
            let device = try deviceID(sample.device)
            guard let localID = plainText.place(sample.device?.localIdentifier ?? "") else { return false }
            var metadata: (offset: Int32, length: Int32) = (0, -1)
            if let json = metadataJSON(sample.metadata) {
                guard let placed = plainText.place(json) else { return false }
                metadata = placed
            }
            let person = people.isEmpty ? nil : people[index]
            plainRows.append(csqlite_sample_row(
                uuid: sample.uuid.uuid, type: type, value: sample.quantity.value,
                start_time: sample.start.timeIntervalSince1970, end_time: sample.end.timeIntervalSince1970,
                source: source, device: device ?? 0, person: person ?? 0,
                device_local_id_offset: localID.offset, device_local_id_length: localID.length,
                metadata_offset: metadata.offset, metadata_length: metadata.length))
        }
        let db = store.db
        let lastIDBefore = try store.currentAnchor()
        let insert = try db.cachedStatement(Self.plainInsertSQL)
        try plainRows.withUnsafeBufferPointer { rows in
            try plainText.withUnsafeBaseAddress { text in
                let batch = csqlite_sample_rows(rows: rows.baseAddress, count: Int64(rows.count), text: text)
                try withUnsafePointer(to: batch) { batch in
                    try insert.bind(sampleRows: batch, at: 1)
                    defer { insert.clearBindings() }
                    try insert.execute()
                }
            }
        }
        let storedCount = db.changes
        if storedCount == plainRows.count {
            for row in plainRows { try countStored(row) }
            outcomes.append(contentsOf: repeatElement(Self.writtenOutcome, count: plainRows.count))
            return true
        }
        let stored = try storedPositions(since: lastIDBefore, expected: storedCount)
        var nextStored = 0
        for (position, row) in plainRows.enumerated() {
            if nextStored < stored.count, stored[nextStored] == position {
                nextStored += 1
                try countStored(row)
                outcomes.append(Self.writtenOutcome)
                continue
            }
            guard case .sample(let sample) = records[range.lowerBound + position] else {
                preconditionFailure("a plain run holds samples only (checked before it was inserted)")
            }
            // The run's uuids ascend, so a uuid holder is a sample stored before the run, as it
            // would be for an insert of this sample alone.
            let outcome = try ignoredOutcome(sample, type: row.type, source: row.source)
            outcomes.append(outcome == .duplicate ? Self.duplicateOutcome : [outcome])
        }
        return true
    }

    /// Counts one stored row of a plain run.
    private mutating func countStored(_ row: csqlite_sample_row) throws {
        try countWritten(type: row.type, source: row.source, person: row.person == 0 ? nil : row.person,
                         device: row.device == 0 ? nil : row.device, start: row.start_time, end: row.end_time)
    }

    /// The positions in the run of the rows stored since `lastIDBefore`, ascending: the rows are
    /// stored in the run's order, each found by its uuid (unique in a run, as they ascend).
    private func storedPositions(since lastIDBefore: Int64, expected: Int) throws -> [Int] {
        var positions: [Int] = []
        positions.reserveCapacity(expected)
        var next = 0
        let read = try store.db.cachedStatement(Self.storedSinceSQL)
        try read.bind(lastIDBefore, at: 1)
        try read.forEachRow { stored in
            let found = stored.withUnsafeBytes(at: 0) { uuid -> Bool in
                while next < plainRows.count {
                    defer { next += 1 }
                    if let uuid, withUnsafeBytes(of: plainRows[next].uuid, { $0.elementsEqual(uuid) }) { return true }
                }
                return false
            }
            guard found else { throw PlainRunMismatch(matchedRows: positions.count) }
            positions.append(next - 1)
        }
        guard positions.count == expected else { throw PlainRunMismatch(matchedRows: positions.count) }
        return positions
    }
}

/// The rows a plain run stored could not be matched to the run's rows, in order: something
/// other than the run inserted samples inside its statement. The transaction is rolled back.
struct PlainRunMismatch: Error, CustomStringConvertible {
    /// How many stored rows were matched before the first that matched no remaining run row
    /// (or before the count of stored rows came out different).
    var matchedRows: Int
    var description: String { "the samples stored by one insert do not match its rows (after \(matchedRows) of them)" }
}

/// The text columns of a plain run, each distinct string once, in one buffer the rows point
/// into by offset. Never empty (an empty string is at offset 0), so the buffer always has an
/// address.
struct PlainSampleText {
    private var bytes: [CChar] = [0]
    /// The last few strings placed, to place a repeated one once (metadata repeats, and the
    /// same metadata usually shares its storage).
    private var recent: [(text: String, offset: Int32, length: Int32)] = []
    private var nextSlot = 0
    private static let recentLimit = 8

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(0)
        recent.removeAll(keepingCapacity: true)
        nextSlot = 0
    }

    /// The offset and length of `text` in the buffer; nil when the buffer would pass 2 GiB.
    mutating func place(_ text: String) -> (offset: Int32, length: Int32)? {
        if text.isEmpty { return (0, 0) }
        for entry in recent where entry.text == text { return (entry.offset, entry.length) }
        let length = text.utf8.count
        guard length <= Int(Int32.max) - bytes.count else { return nil }
        let placed = (offset: Int32(bytes.count), length: Int32(length))
        bytes.append(contentsOf: text.utf8.lazy.map { CChar(bitPattern: $0) })
        if recent.count < Self.recentLimit {
            recent.append((text, placed.offset, placed.length))
        } else {
            recent[nextSlot] = (text, placed.offset, placed.length)
            nextSlot = (nextSlot + 1) % Self.recentLimit
        }
        return placed
    }

    func withUnsafeBaseAddress<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { buffer in
            // Never empty (see the type's comment): the address exists.
            guard let base = buffer.baseAddress else { preconditionFailure("the text buffer is never empty") }
            return try body(base)
        }
    }
}

extension UUID {
    /// Whether this uuid's bytes sort before `other`'s, as SQLite orders them in the uuid index.
    fileprivate func isOrdered(before other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { mine in
            withUnsafeBytes(of: other.uuid) { theirs in
                mine.lexicographicallyPrecedes(theirs)
            }
        }
    }
}
