import CSQLite
import Foundation
import HealthModel
import Pipeline

extension HealthStore: SampleStore {
    public func loadAuthorization() throws -> AuthorizationPolicy {
        var policy = AuthorizationPolicy()
        try db.prepare("SELECT source, type FROM grants").forEachRow { row in
            guard let source = row.string(at: 0), let type = row.string(at: 1) else { return }
            if type == "*" {
                policy.grantAll(source: source)
            } else if let quantityType = QuantityType.named(type) {
                policy.grant(source: source, type: quantityType)
            }
        }
        try db.prepare("SELECT source, type FROM denials").forEachRow { row in
            guard let source = row.string(at: 0), let type = row.string(at: 1) else { return }
            if type == "*" {
                policy.denyAll(source: source)
            } else if let quantityType = QuantityType.named(type) {
                policy.deny(source: source, type: quantityType)
            }
        }
        return policy
    }

    /// Writes a batch in one IMMEDIATE transaction. Identity is enforced by the unique indexes:
    /// `INSERT OR IGNORE` that changes nothing is a duplicate.
    /// Held records go to the pending area in the same transaction, after the `releasing` pending
    /// rows were removed from it.
    public func write(_ batch: [NormalizedRecord], people: [Int64?], held: [NormalizedRecord], releasing: [Int64],
                      rejections: [RejectionKey: Int]) throws -> CommitReceipt {
        precondition(people.isEmpty || people.count == batch.count, "one person (or nil) per record")
        let now = Date()
        do {
            return try write(batch, people: people, held: held, releasing: releasing, rejections: rejections, now: now)
        } catch {
            // Rolled back: rows this batch added to types, sources or devices are gone again.
            forgetCachedIDs()
            throw error
        }
    }

    /// Holds the commits of every write from now on (each becomes a savepoint of one open
    /// transaction) until `endHeldCommits(keep:)` keeps or discards them all: an import stores
    /// its first batches while its archive is still being verified. Other writers of the file
    /// wait meanwhile, so hold briefly.
    public func holdCommits() throws {
        try db.beginHeldTransaction()
    }

    /// Commits (`keep`) or rolls back what was written since `holdCommits()`.
    public func endHeldCommits(keep: Bool) throws {
        do {
            try db.endHeldTransaction(commit: keep)
        } catch {
            forgetCachedIDs()
            throw error
        }
        if !keep { forgetCachedIDs() }
    }

    /// Forgets the ids of types, sources and devices read or added so far (after a rollback,
    /// an id remembered from it could name another row, or none).
    func forgetCachedIDs() {
        typeIDs.removeAll()
        typeNames.removeAll()
        sourceIDs.removeAll()
        sourceNames.removeAll()
        deviceIDs.removeAll()
    }

    private func write(_ batch: [NormalizedRecord], people: [Int64?], held: [NormalizedRecord], releasing: [Int64],
                       rejections: [RejectionKey: Int], now: Date) throws -> CommitReceipt {
        try db.transaction(.immediate) {
            try removePending(ids: releasing)
            try checkStillUndecided(held)
            var pending = try hold(held, now: now)
            if lastPendingPurge.map({ now.timeIntervalSince($0) >= Self.pendingPurgeInterval }) ?? true {
                pending.expired = try removeExpiredPending(now: now)
                lastPendingPurge = now
            }
            var writer = try BatchWriter(store: self, now: now, deferringCounts: true)
            var outcomes: [[WriteOutcome]] = []
            outcomes.reserveCapacity(batch.count)
            try batch.withUnsafeBufferPointer { batch in
                var index = 0
                while index < batch.count {
                    // A run of plain samples goes in as one statement; anything else row by row.
                    let runEnd = BatchWriter.plainRunEnd(batch, from: index)
                    if runEnd - index >= plainRunMinimum,
                       try writer.insertPlainSamples(batch, range: index..<runEnd, people: people, into: &outcomes) {
                        index = runEnd
                        continue
                    }
                    let rowByRowEnd = max(runEnd, index + 1)
                    for single in index..<rowByRowEnd {
                        outcomes.append(try writer.insert(batch[single], person: people.isEmpty ? nil : people[single]))
                    }
                    index = rowByRowEnd
                }
            }
            try writer.flushSampleCounts()
            try removeStaleDerivedSamples(batch, outcomes: outcomes)
            try recordRejections(rejections, now: now)
            let anchor = try currentAnchor()
            let events = try recordCommit(writer.counts, anchor: anchor, now: now)
            return CommitReceipt(outcomes: outcomes, anchor: anchor, events: events, pending: pending)
        }
    }

    /// Under the write lock, so serialised with `auth grant` and `auth deny` in other processes:
    /// throws when a record about to be held has no undecided member pair any more (a grant or
    /// denial committed since the writer read the grants), so that it is never held for a decided
    /// pair, where no grant would bring it in.
    private func checkStillUndecided(_ held: [NormalizedRecord]) throws {
        guard !held.isEmpty else { return }
        let policy = try loadAuthorization()
        for record in held {
            let members = record.samples
            guard !members.contains(where: { policy.decision(source: $0.source, type: $0.type) == .undecided }) else { continue }
            throw AuthorizationChangedError(source: record.source, type: members.first?.type.identifier ?? "")
        }
    }

    /// Logs one commit with its counts per (type, source, person) for `watch`, marks the first
    /// write of each (source, type), and returns the "records processed" events.
    func recordCommit(_ counts: [PairKey: Int], anchor: Int64, now: Date) throws -> [RecordsProcessed] {
        var events: [RecordsProcessed] = []
        guard !counts.isEmpty else { return events }
        let commit = try db.cachedStatement("INSERT INTO commits(anchor, committed_at) VALUES (?, ?)")
        try commit.bind(anchor, at: 1)
        try commit.bind(now.timeIntervalSince1970, at: 2)
        try commit.execute()
        let commitID = db.lastInsertRowID
        let count = try db.cachedStatement(
            "INSERT INTO commit_counts(commit_id, type, source, count, person) VALUES (?, ?, ?, ?, ?)")
        let firstWritten = try db.cachedStatement(
            "INSERT OR IGNORE INTO source_types(source, type, first_written) VALUES (?, ?, ?)")
        for key in counts.keys.sorted(by: { ($0.type, $0.source, $0.person ?? 0) < ($1.type, $1.source, $1.person ?? 0) }) {
            let n = counts[key] ?? 0
            try count.bind(commitID, at: 1)
            try count.bind(key.type, at: 2)
            try count.bind(key.source, at: 3)
            try count.bind(n, at: 4)
            if let person = key.person { try count.bind(person, at: 5) } else { try count.bindNull(at: 5) }
            try count.execute()
            try firstWritten.bind(key.source, at: 1)
            try firstWritten.bind(key.type, at: 2)
            try firstWritten.bind(now.timeIntervalSince1970, at: 3)
            try firstWritten.execute()
            events.append(RecordsProcessed(type: typeNames[key.type] ?? "?", source: sourceName(key.source),
                                           count: n, anchor: anchor, person: try key.person.map { try personName($0) }))
        }
        return events
    }

    /// Adds stored samples to `sample_counts` (`CountsMigration`): per key, how many, the
    /// latest end and the longest duration among them (`LongestSampleMigration`). Inserting
    /// into `samples` has no trigger (its cost halved the pipeline's rate): every insert counts
    /// itself through this, in its transaction.
    func addSampleCounts(_ counts: [SampleCount]) throws {
        guard !counts.isEmpty else { return }
        let upsert = try db.cachedStatement(LongestSampleMigration.addSamplesSQL)
        for entry in counts {
            try upsert.bind(entry.key.source, at: 1)
            try upsert.bind(entry.key.type, at: 2)
            try upsert.bind(entry.key.person, at: 3)
            try upsert.bind(entry.key.device, at: 4)
            try upsert.bind(entry.count, at: 5)
            try upsert.bind(entry.lastEnd, at: 6)
            try upsert.bind(entry.longest, at: 7)
            try upsert.execute()
        }
    }

    /// A key of `sample_counts`: person 0 is the unassigned set, device 0 no device.
    struct CountKey: Hashable {
        var source: Int64
        var type: Int64
        var person: Int64
        var device: Int64
    }

    /// Samples stored under one `CountKey`, with the latest end time among them.
    struct SampleCount {
        var key: CountKey
        var count: Int
        var lastEnd: Double
        /// The longest `end - start` among them.
        var longest: Double
    }

    /// A (type, source, person) of the commit log; a nil person is the unassigned set.
    struct PairKey: Hashable {
        var type: Int64
        var source: Int64
        var person: Int64? = nil
    }

    func sourceName(_ id: Int64) -> String {
        sourceNames[id] ?? "?"
    }

    /// The newest anchor: the highest sample id ever assigned (tombstones share those anchors).
    func currentAnchor() throws -> Int64 {
        let statement = try db.cachedStatement("SELECT seq FROM sqlite_sequence WHERE name = 'samples'")
        return try statement.firstRow { $0.int64(at: 0) } ?? 0
    }

    private func recordRejections(_ rejections: [RejectionKey: Int], now: Date) throws {
        guard !rejections.isEmpty else { return }
        let insert = try db.cachedStatement(
            "INSERT INTO rejections(at, source, type, reason, count) VALUES (?, ?, ?, ?, ?)")
        for (key, count) in rejections.sorted(by: { $0.key < $1.key }) {
            try insert.bind(now.timeIntervalSince1970, at: 1)
            try insert.bind(key.source, at: 2)
            try insert.bind(key.type, at: 3)
            try insert.bind(key.reason, at: 4)
            try insert.bind(count, at: 5)
            try insert.execute()
        }
    }

    static let insertSQL = """
        INSERT OR IGNORE INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id,
                                      sync_id, sync_version, metadata, correlation, person)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    static func uuid(from bytes: [UInt8]) -> UUID? {
        guard bytes.count == 16 else { return nil }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

/// Writes the records of one batch inside its transaction: holds the sample insert statement
/// for the whole batch, remembers the type, source and device ids the batch uses (most batches
/// use a handful, so a short list whose strings usually share storage with the sample's beats
/// hashing them per row), and counts newly stored samples per (type, source).
struct BatchWriter {
    /// Lists longer than this fall back to the store's dictionaries.
    private static let recentLimit = 16

    let store: HealthStore
    let now: Date
    private let insertSample: Statement
    /// Whether stored samples are counted in memory and added to `sample_counts` by
    /// `flushSampleCounts` (the caller flushes before anything else deletes or updates samples;
    /// a replacement here flushes before its delete), instead of one upsert per sample.
    private let deferringCounts: Bool
    private var sampleCounts: [HealthStore.SampleCount] = []
    private var sampleCountIndex: [HealthStore.CountKey: Int] = [:]
    private var recentTypes: [(identifier: String, id: Int64)] = []
    private var recentSources: [(name: String, id: Int64)] = []
    private var recentDevices: [Device] = []
    private var recentDeviceIDs: [Int64] = []
    /// Newly stored (written or replaced) samples per (type, source), in a short list while
    /// the batch has few pairs.
    private var pairCounts: [(key: HealthStore.PairKey, count: Int)] = []
    private var morePairCounts: [HealthStore.PairKey: Int] = [:]
    /// The last few metadata values encoded, with their JSON: adapters repeat the same metadata,
    /// and an import alternates between a few sources' (app version, time zone offset).
    private var recentMetadata: [(metadata: Metadata, json: String?)] = []
    private var nextMetadataSlot = 0
    /// The rows and text of a run of plain samples, reused from run to run (`insertPlainSamples`).
    var plainRows: [csqlite_sample_row] = []
    var plainText = PlainSampleText()
    private static let recentMetadataLimit = 8

    /// Newly stored (written or replaced) samples per (type, source).
    var counts: [HealthStore.PairKey: Int] {
        var all = morePairCounts
        for entry in pairCounts { all[entry.key, default: 0] += entry.count }
        return all
    }

    private mutating func countStored(type: Int64, source: Int64, person: Int64?) {
        let key = HealthStore.PairKey(type: type, source: source, person: person)
        for index in pairCounts.indices where pairCounts[index].key == key {
            pairCounts[index].count += 1
            return
        }
        if pairCounts.count < Self.recentLimit {
            pairCounts.append((key, 1))
        } else {
            morePairCounts[key, default: 0] += 1
        }
    }

    /// The JSON text stored for metadata, nil for metadata with nothing to encode (stored as
    /// NULL). Readers that reuse one value for repeated metadata make this an identity check.
    mutating func metadataJSON(_ metadata: Metadata) -> String? {
        for recent in recentMetadata where recent.metadata.sharesStorage(with: metadata) { return recent.json }
        if let alike = recentMetadata.firstIndex(where: { $0.metadata.isSpelledAlike(metadata) }) {
            // Kept under this value, which the next records are likely to share.
            recentMetadata[alike].metadata = metadata
            return recentMetadata[alike].json
        }
        let json = metadata.isEmpty ? nil : HealthRecordEncoder().encode(metadata)
        if recentMetadata.count < Self.recentMetadataLimit {
            recentMetadata.append((metadata, json))
        } else {
            recentMetadata[nextMetadataSlot] = (metadata, json)
            nextMetadataSlot = (nextMetadataSlot + 1) % Self.recentMetadataLimit
        }
        return json
    }

    init(store: HealthStore, now: Date, deferringCounts: Bool = false) throws {
        self.store = store
        self.now = now
        self.deferringCounts = deferringCounts
        insertSample = try store.db.cachedStatement(HealthStore.insertSQL)
    }

    /// Counts one stored sample (at once unless `deferringCounts`).
    private mutating func countSample(_ key: HealthStore.CountKey, start: Double, end: Double) throws {
        let duration = end - start
        guard deferringCounts else {
            try store.addSampleCounts([HealthStore.SampleCount(key: key, count: 1, lastEnd: end, longest: duration)])
            return
        }
        // A short list while the batch has few keys (most have a handful), searched linearly.
        if sampleCountIndex.isEmpty {
            for index in sampleCounts.indices where sampleCounts[index].key == key {
                sampleCounts[index].count += 1
                sampleCounts[index].lastEnd = max(sampleCounts[index].lastEnd, end)
                sampleCounts[index].longest = max(sampleCounts[index].longest, duration)
                return
            }
            sampleCounts.append(HealthStore.SampleCount(key: key, count: 1, lastEnd: end, longest: duration))
            if sampleCounts.count > Self.recentLimit {
                for (index, entry) in sampleCounts.enumerated() { sampleCountIndex[entry.key] = index }
            }
            return
        }
        if let index = sampleCountIndex[key] {
            sampleCounts[index].count += 1
            sampleCounts[index].lastEnd = max(sampleCounts[index].lastEnd, end)
            sampleCounts[index].longest = max(sampleCounts[index].longest, duration)
        } else {
            sampleCountIndex[key] = sampleCounts.count
            sampleCounts.append(HealthStore.SampleCount(key: key, count: 1, lastEnd: end, longest: duration))
        }
    }

    /// Adds the samples counted so far to `sample_counts`.
    mutating func flushSampleCounts() throws {
        guard !sampleCounts.isEmpty else { return }
        try store.addSampleCounts(sampleCounts)
        sampleCounts.removeAll(keepingCapacity: true)
        sampleCountIndex.removeAll(keepingCapacity: true)
    }

    mutating func typeID(_ identifier: String) throws -> Int64 {
        for entry in recentTypes where entry.identifier == identifier { return entry.id }
        let id = try store.typeID(identifier)
        if recentTypes.count < Self.recentLimit { recentTypes.append((identifier, id)) }
        return id
    }

    mutating func sourceID(_ name: String) throws -> Int64 {
        for entry in recentSources where entry.name == name { return entry.id }
        let id = try store.sourceID(name, now: now)
        if recentSources.count < Self.recentLimit { recentSources.append((name, id)) }
        return id
    }

    mutating func deviceID(_ device: Device?) throws -> Int64? {
        guard let device else { return nil }
        let known = recentDevices.withUnsafeBufferPointer { recent -> Int64? in
            // A device shared with the earlier record compares by identity.
            for index in recent.indices where recent[index] == device { return recentDeviceIDs[index] }
            return nil
        }
        if let known { return known }
        guard let id = try store.deviceID(device) else { return nil }
        if recentDevices.count < Self.recentLimit {
            recentDevices.append(device)
            recentDeviceIDs.append(id)
        }
        return id
    }

    static let writtenOutcome: [WriteOutcome] = [.written]
    static let duplicateOutcome: [WriteOutcome] = [.duplicate]
    private static let replacedOutcome: [WriteOutcome] = [.replaced]

    /// Inserts one record (borrowed: its sample is not copied) and says what became of each
    /// member sample.
    mutating func insert(_ record: borrowing NormalizedRecord, person: Int64?) throws -> [WriteOutcome] {
        switch record {
        case .sample(let sample):
            // Shared one-element arrays: returning one costs a retain, not an allocation.
            switch try insert(sample, correlation: nil, person: person) {
            case .written: Self.writtenOutcome
            case .duplicate: Self.duplicateOutcome
            case .replaced: Self.replacedOutcome
            case .uuidConflict: [.uuidConflict]
            case .syncVersionConflict: [.syncVersionConflict]
            }
        case .correlation(let correlation):
            try insert(correlation, person: person)
        }
    }

    /// Inserts one sample for `person` (nil: unassigned); the unique indexes decide whether it is
    /// new. A newer sync version of a stored sample keeps the stored sample's person (an
    /// assignment made by hand is not undone by the device re-sending the reading).
    mutating func insert(_ sample: QuantitySample, correlation: Int64?, person: Int64?) throws -> WriteOutcome {
        var person = person
        let db = store.db
        let type = try typeID(sample.type.identifier)
        let source = try sourceID(sample.source)
        var correlation = correlation
        var replacing: (id: Int64, uuid: [UInt8], person: Int64?)?
        if let syncID = sample.metadata.syncIdentifier {
            let find = try db.cachedStatement(
                "SELECT id, sync_version, uuid, correlation, person, value, start_time, end_time FROM samples WHERE source = ? AND type = ? AND sync_id = ?")
            try find.bind(source, at: 1)
            try find.bind(type, at: 2)
            try find.bind(syncID, at: 3)
            let existing = try find.firstRow { row in
                (id: row.int64(at: 0), version: row.isNull(at: 1) ? 0 : row.int64(at: 1),
                 uuid: row.bytes(at: 2) ?? [], correlation: row.isNull(at: 3) ? nil : Optional(row.int64(at: 3)),
                 person: row.isNull(at: 4) ? nil : Optional(row.int64(at: 4)),
                 sameContent: row.double(at: 5) == sample.quantity.value && row.double(at: 6) == sample.start.timeIntervalSince1970
                    && row.double(at: 7) == sample.end.timeIntervalSince1970)
            }
            if let existing {
                let version = Int64(sample.metadata.syncVersion ?? 0)
                if version == existing.version, !existing.sameContent { return .syncVersionConflict }
                guard version > existing.version else { return .duplicate }
                // Check the uuid before deleting the old version: the insert must not fail after it.
                if let holder = try uuidHolder(sample.uuid), holder.id != existing.id { return .uuidConflict }
                // The delete trigger must see every sample stored so far counted.
                try flushSampleCounts()
                let delete = try db.cachedStatement("DELETE FROM samples WHERE id = ?")
                try delete.bind(existing.id, at: 1)
                try delete.execute()
                replacing = (existing.id, existing.uuid, existing.person)
                if let stored = existing.person { person = stored }
                // Replacing a member also replaces it inside its correlation (HealthKit's rule).
                if correlation == nil { correlation = existing.correlation }
            }
        }
        let insert = insertSample
        try withUnsafeBytes(of: sample.uuid.uuid) { try insert.bind(bytes: $0, at: 1) }
        try insert.bind(type, at: 2)
        try insert.bind(sample.quantity.value, at: 3)
        try insert.bind(sample.start.timeIntervalSince1970, at: 4)
        try insert.bind(sample.end.timeIntervalSince1970, at: 5)
        try insert.bind(source, at: 6)
        let device = try deviceID(sample.device)
        if let device { try insert.bind(device, at: 7) } else { try insert.bindNull(at: 7) }
        try insert.bind(sample.device?.localIdentifier ?? "", at: 8)
        if let syncID = sample.metadata.syncIdentifier {
            try insert.bind(syncID, at: 9)
            try insert.bind(sample.metadata.syncVersion ?? 0, at: 10)
        } else {
            try insert.bindNull(at: 9)
            try insert.bindNull(at: 10)
        }
        if let json = metadataJSON(sample.metadata) { try insert.bind(json, at: 11) } else { try insert.bindNull(at: 11) }
        if let correlation { try insert.bind(correlation, at: 12) } else { try insert.bindNull(at: 12) }
        if let person { try insert.bind(person, at: 13) } else { try insert.bindNull(at: 13) }
        try insert.execute()
        guard db.changes > 0 else { return try ignoredOutcome(sample, type: type, source: source) }
        try countWritten(type: type, source: source, person: person, device: device,
                         start: sample.start.timeIntervalSince1970, end: sample.end.timeIntervalSince1970)
        guard let replacing else { return .written }
        let tombstone = try db.cachedStatement(
            "INSERT INTO tombstones(anchor, uuid, type, source, deleted_at, person) VALUES (?, ?, ?, ?, ?, ?)")
        try tombstone.bind(db.lastInsertRowID, at: 1)
        try tombstone.bind(replacing.uuid, at: 2)
        try tombstone.bind(type, at: 3)
        try tombstone.bind(source, at: 4)
        try tombstone.bind(now.timeIntervalSince1970, at: 5)
        if let old = replacing.person { try tombstone.bind(old, at: 6) } else { try tombstone.bindNull(at: 6) }
        try tombstone.execute()
        return .replaced
    }

    /// What became of a sample whose insert was ignored: a duplicate when its identity is stored,
    /// or when its uuid names a stored sample of the same content; a uuid conflict when that
    /// sample's content differs.
    func ignoredOutcome(_ sample: QuantitySample, type: Int64, source: Int64) throws -> WriteOutcome {
        guard let holder = try uuidHolder(sample.uuid) else { return .duplicate }
        return holder.holdsSameContent(as: sample, type: type, source: source) ? .duplicate : .uuidConflict
    }

    /// Counts one newly stored sample, for the commit log and `sample_counts`.
    mutating func countWritten(type: Int64, source: Int64, person: Int64?, device: Int64?, start: Double, end: Double) throws {
        countStored(type: type, source: source, person: person)
        try countSample(HealthStore.CountKey(source: source, type: type, person: person ?? 0, device: device ?? 0),
                        start: start, end: end)
    }

    /// The stored sample that has `uuid`, if any, with the columns that make its content.
    private func uuidHolder(_ uuid: UUID) throws -> StoredContent? {
        let find = try store.db.cachedStatement(
            "SELECT id, type, value, start_time, end_time, source, device_local_id, sync_id FROM samples WHERE uuid = ?")
        try withUnsafeBytes(of: uuid.uuid) { try find.bind(bytes: $0, at: 1) }
        return try find.firstRow { row in
            StoredContent(id: row.int64(at: 0), type: row.int64(at: 1), value: row.double(at: 2),
                          start: row.double(at: 3), end: row.double(at: 4), source: row.int64(at: 5),
                          deviceLocalID: row.string(at: 6) ?? "", syncID: row.string(at: 7))
        }
    }

    /// What identifies a stored sample's content (for telling a re-sent sample from a reused uuid).
    struct StoredContent {
        var id: Int64
        var type: Int64
        var value: Double
        var start: Double
        var end: Double
        var source: Int64
        var deviceLocalID: String
        var syncID: String?

        func holdsSameContent(as sample: QuantitySample, type: Int64, source: Int64) -> Bool {
            self.type == type && self.source == source && value == sample.quantity.value
                && start == sample.start.timeIntervalSince1970 && end == sample.end.timeIntervalSince1970
                && deviceLocalID == (sample.device?.localIdentifier ?? "") && syncID == sample.metadata.syncIdentifier
        }
    }

    /// Inserts a correlation and its members. A correlation already stored (same source, type
    /// and ``Correlation/identity``, never its dates alone) keeps its row; its members are
    /// deduplicated one by one. A new row that got no member (all were stored already, under
    /// another correlation) is not kept.
    mutating func insert(_ correlation: Correlation, person: Int64?) throws -> [WriteOutcome] {
        let db = store.db
        let source = try sourceID(correlation.source)
        let identity = correlation.identity
        let find = try db.cachedStatement("SELECT id FROM correlations WHERE source = ? AND type = ? AND identity = ?")
        try find.bind(source, at: 1)
        try find.bind(correlation.type.identifier, at: 2)
        try find.bind(identity, at: 3)
        var created = false
        let correlationID: Int64
        if let stored = try find.firstRow({ $0.int64(at: 0) }) {
            correlationID = stored
        } else {
            // A uuid names one correlation: one taken by another keeps its owner, this one gets a new uuid.
            let taken = try db.cachedStatement("SELECT 1 FROM correlations WHERE uuid = ?")
            try withUnsafeBytes(of: correlation.uuid.uuid) { try taken.bind(bytes: $0, at: 1) }
            let uuid = try taken.firstRow({ _ in true }) == true ? SampleIdentifierGenerator.shared.next() : correlation.uuid
            let insertCorrelation = try db.cachedStatement("""
                INSERT INTO correlations(uuid, type, start_time, end_time, source, device, metadata, identity)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            try withUnsafeBytes(of: uuid.uuid) { try insertCorrelation.bind(bytes: $0, at: 1) }
            try insertCorrelation.bind(correlation.type.identifier, at: 2)
            try insertCorrelation.bind(correlation.start.timeIntervalSince1970, at: 3)
            try insertCorrelation.bind(correlation.end.timeIntervalSince1970, at: 4)
            try insertCorrelation.bind(source, at: 5)
            if let device = try deviceID(correlation.device) { try insertCorrelation.bind(device, at: 6) } else { try insertCorrelation.bindNull(at: 6) }
            if let json = metadataJSON(correlation.metadata) { try insertCorrelation.bind(json, at: 7) } else { try insertCorrelation.bindNull(at: 7) }
            try insertCorrelation.bind(identity, at: 8)
            try insertCorrelation.execute()
            correlationID = db.lastInsertRowID
            created = true
        }
        var outcomes: [WriteOutcome] = []
        outcomes.reserveCapacity(correlation.objects.count)
        for member in correlation.objects {
            outcomes.append(try insert(member, correlation: correlationID, person: person))
        }
        if created, !outcomes.contains(where: { $0 == .written || $0 == .replaced }) {
            let forget = try db.cachedStatement("DELETE FROM correlations WHERE id = ?")
            try forget.bind(correlationID, at: 1)
            try forget.execute()
        }
        return outcomes
    }
}
