import CSQLite
import Foundation
import HealthModel
import Pipeline

/// A run of plain samples (no sync identifier, not a correlation's member) inserted by one
/// `INSERT OR IGNORE ... SELECT` from `ingestd_sample_rows` (`CSQLite/shim.h`): SQLite then opens
/// the table's and indexes' cursors and reads and writes the AUTOINCREMENT counter once per run
/// instead of once per sample (the bench's import: 1.15 s to 0.85 s). The statement visits the
/// rows in order, so it stores the same rows one insert per sample would store; this says what
/// became of each sample the same way too (`PlainRunTests` compares both).
extension BatchWriter {
    /// Runs shorter than this are inserted one statement per sample.
    static let plainRunMinimum = 8

    static let plainInsertSQL = """
        INSERT OR IGNORE INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id,
                                      metadata, person)
        SELECT uuid, type, value, start_time, end_time, source, device, device_local_id, metadata, person
        FROM ingestd_sample_rows(?)
        """

    /// The rows stored by the last plain run when some of it was ignored, in the order of their ids.
    static let storedSinceSQL = """
        SELECT id, uuid, type, value, start_time, end_time, source, device_local_id FROM samples
        WHERE id > ? ORDER BY id
        """

    /// Whether `record` can go into a plain run: a sample without sync identifier (one with a
    /// sync identifier may replace a stored version, row by row).
    static func isPlainSample(_ record: borrowing NormalizedRecord) -> Bool {
        switch record {
        case .sample(let sample): sample.metadata.syncIdentifier == nil
        case .correlation: false
        }
    }

    /// Inserts the plain samples `records[range]` (each `isPlainSample`) for `people` (one per
    /// record, or empty for none) and appends each one's outcome to `outcomes`. Returns false,
    /// having stored nothing, when the run's text does not fit the row format (offsets are
    /// 32-bit); the caller then inserts it row by row.
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
        let stored = try storedRows(since: lastIDBefore, expected: storedCount)
        var nextStored = 0
        for (position, row) in plainRows.enumerated() {
            if nextStored < stored.entries.count, stored.entries[nextStored].position == position {
                nextStored += 1
                try countStored(row)
                outcomes.append(Self.writtenOutcome)
                continue
            }
            guard case .sample(let sample) = records[range.lowerBound + position] else {
                preconditionFailure("a plain run holds samples only (checked before it was inserted)")
            }
            outcomes.append([try ignoredOutcome(sample, row: row, at: position, stored: stored, lastIDBefore: lastIDBefore)])
        }
        return true
    }

    /// Counts one stored row of a plain run.
    private mutating func countStored(_ row: csqlite_sample_row) throws {
        let person = row.person == 0 ? nil : row.person
        countStored(type: row.type, source: row.source, person: person)
        try countSample(HealthStore.CountKey(source: row.source, type: row.type, person: row.person, device: row.device),
                        start: row.start_time, end: row.end_time)
    }

    /// Matches the rows stored since `lastIDBefore` to the run's rows, in order: each stored row
    /// is the next run row with its uuid and identity (rows in between were ignored).
    private func storedRows(since lastIDBefore: Int64, expected: Int) throws -> PlainRunStored {
        var stored = PlainRunStored()
        stored.entries.reserveCapacity(expected)
        var next = 0
        let read = try store.db.cachedStatement(Self.storedSinceSQL)
        try read.bind(lastIDBefore, at: 1)
        try plainText.withUnsafeBaseAddress { text in
            try read.forEachRow { row in
                let id = row.int64(at: 0)
                while next < plainRows.count, !Self.row(plainRows[next], text: text, isStoredRow: row) { next += 1 }
                guard next < plainRows.count else { throw PlainRunMismatch(storedID: id) }
                stored.entries.append((id, next))
                next += 1
            }
        }
        guard stored.entries.count == expected else { throw PlainRunMismatch(storedID: stored.entries.last?.id ?? lastIDBefore) }
        return stored
    }

    private static func row(_ row: csqlite_sample_row, text: UnsafePointer<CChar>, isStoredRow stored: Statement) -> Bool {
        let sameUUID = stored.withUnsafeBytes(at: 1) { bytes -> Bool in
            guard let bytes, bytes.count == 16 else { return false }
            return withUnsafeBytes(of: row.uuid) { $0.elementsEqual(bytes) }
        }
        guard sameUUID, stored.int64(at: 2) == row.type, stored.double(at: 3) == row.value,
              stored.double(at: 4) == row.start_time, stored.double(at: 5) == row.end_time,
              stored.int64(at: 6) == row.source
        else { return false }
        return stored.withUnsafeBytes(at: 7) { bytes -> Bool in
            let localID = UnsafeRawBufferPointer(start: text + Int(row.device_local_id_offset),
                                                 count: Int(row.device_local_id_length))
            return localID.elementsEqual(bytes ?? UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// What became of a run's sample that was not stored, as inserting it alone at its place in
    /// the run would say: a duplicate, unless its uuid was already held by a sample of other
    /// content (a holder stored later in the same run did not hold it yet).
    private func ignoredOutcome(_ sample: QuantitySample, row: csqlite_sample_row, at position: Int,
                                stored: PlainRunStored, lastIDBefore: Int64) throws -> WriteOutcome {
        guard let holder = try uuidHolder(sample.uuid) else { return .duplicate }
        if holder.id > lastIDBefore, let holderPosition = stored.position(ofID: holder.id), holderPosition > position {
            return .duplicate
        }
        return holder.holdsSameContent(as: sample, type: row.type, source: row.source) ? .duplicate : .uuidConflict
    }
}

/// The rows a plain run stored, as (id, position in the run), both ascending.
struct PlainRunStored {
    var entries: [(id: Int64, position: Int)] = []

    /// The position of the run row stored as `id`, if this run stored it.
    func position(ofID id: Int64) -> Int? {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].id == id ? entries[low].position : nil
    }
}

/// The rows a plain run stored could not be matched to the run's rows, in order: something
/// other than the run inserted samples inside its statement. The transaction is rolled back.
struct PlainRunMismatch: Error, CustomStringConvertible {
    /// The stored row's id that matched no remaining row of the run.
    var storedID: Int64
    var description: String { "the samples stored by one insert do not match its rows (at sample id \(storedID))" }
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
