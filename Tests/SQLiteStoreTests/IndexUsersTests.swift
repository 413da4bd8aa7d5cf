import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Issue 31, item 3: which statements use each index of the store. A workload of every kind of
/// read and write the store does through its public API (ingest through the pipeline with
/// duplicates, replaced sync versions, a correlation, held and released samples, unassigned
/// samples; statistics, samples, newest, today's read, the export cursor, changes, status,
/// sources, pending counts, a sink's feed, acknowledgements and dead letters; assignment and
/// removing a person) runs with `Connection.traceStatements` recording the SQL it really runs;
/// `EXPLAIN QUERY PLAN` of each distinct statement gives the index -> statements map, printed as
/// a table. Every index of `sqlite_master` must have a user.
@Suite struct IndexUsersTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)
    static let utc = TimeZone(identifier: "UTC") ?? .current

    /// The store's own indexes (SQLite's `sqlite_autoindex_*` of UNIQUE and PRIMARY KEY
    /// constraints aside). A new index must be added here, with its users shown by the workload.
    static let expectedIndexes: Set<String> = [
        "samples_sync_identity", "samples_identity", "samples_by_type_time", "samples_by_person_type_time",
        "samples_by_correlation", "pending_by_source_time", "pending_by_held_at", "dead_letters_by_sink",
    ]

    /// The index whose main user is the conflict check of the samples insert (`INSERT OR IGNORE`):
    /// it rejects a second sample of the same content (one lookup reads it too: a weighing's
    /// derived values, by source, device and time).
    static let constraintIndex = "samples_identity"

    /// The distinct statements run on one connection, in the order first seen.
    final class StatementLog {
        private(set) var statements: [String] = []
        private var seen: Set<String> = []

        func record(_ sql: String) {
            if seen.insert(sql).inserted { statements.append(sql) }
        }
    }

    /// One statement's plan line that names an index.
    struct IndexUse: Hashable {
        var statement: String
        var plan: String
    }

    /// What the workload found: the statements run and, per index, the plan lines using it.
    struct Findings {
        var statements: [String]
        var users: [String: [IndexUse]]
        /// Per index: whether it is UNIQUE.
        var indexes: [String: Bool]

        var indexesWithoutUsers: [String] {
            indexes.keys.filter { users[$0, default: []].isEmpty }.sorted()
        }

        /// The plan lines of `sql` (exactly as the store ran it) that use `index`.
        func plans(of sql: String, using index: String) -> [String] {
            users[index, default: []].filter { $0.statement == sql }.map(\.plan)
        }
    }

    // MARK: The workload

    static func heartRate(_ minute: Int, _ value: Double, device: String) -> HealthRecord {
        let begin = start.addingTimeInterval(Double(minute) * 60)
        return .sample(QuantitySample(type: .heartRate, quantity: Quantity(value: value, unit: QuantityType.heartRate.canonicalUnit),
                                      start: begin, end: begin, source: "band",
                                      device: Device(name: "Band", localIdentifier: device)))
    }

    static func weighing(_ kilograms: Double, sync: String?, version: Int?, minute: Int) -> HealthRecord {
        let begin = start.addingTimeInterval(Double(minute) * 60)
        return .sample(QuantitySample(type: .bodyMass, quantity: Quantity(value: kilograms, unit: QuantityType.bodyMass.canonicalUnit),
                                      start: begin, end: begin, source: "scale", device: Device(name: "Scale", localIdentifier: "scale-1"),
                                      metadata: Metadata(syncIdentifier: sync, syncVersion: version)))
    }

    static func bloodPressure(minute: Int) -> HealthRecord {
        let begin = start.addingTimeInterval(Double(minute) * 60)
        let cuff = Device(name: "Cuff", localIdentifier: "cuff-1")
        func member(_ type: QuantityType, _ value: Double) -> QuantitySample {
            QuantitySample(type: type, quantity: Quantity(value: value, unit: type.canonicalUnit), start: begin, end: begin,
                           source: "cuff", device: cuff)
        }
        return .correlation(Correlation(type: .bloodPressure, start: begin, end: begin,
                                        objects: [member(.bloodPressureSystolic, 121), member(.bloodPressureDiastolic, 79)],
                                        source: "cuff", device: cuff))
    }

    static func steps(_ minute: Int, source: String = "phone") -> HealthRecord {
        let begin = start.addingTimeInterval(Double(minute) * 60)
        return .sample(QuantitySample(type: .stepCount, quantity: Quantity(value: 30, unit: .count), start: begin,
                                      end: begin.addingTimeInterval(60), source: source))
    }

    /// Runs the workload on `store` and returns the distinct statements it ran.
    static func runWorkload(_ store: HealthStore) throws -> [String] {
        let log = StatementLog()
        store.db.traceStatements { log.record($0) }
        defer { store.db.traceStatements(nil) }
        let now = start.addingTimeInterval(10 * 86_400)
        let me = try store.person(named: HealthStore.firstPersonName)
        let ana = try store.addPerson(name: "ana", profile: UserProfile(), bodyMassKilograms: 60)
        try store.assignDevice("band-1", to: me)
        for source in ["band", "scale", "cuff"] { _ = try store.grant(source: source, types: [], all: true) }
        let pipeline = try Pipeline(store: store, now: { now })

        // Writes: new samples, an unowned device's (unassigned), weighings with sync
        // identifiers, a correlation, and samples of an undecided source (held).
        let owned = (0..<60).map { heartRate($0, 60 + Double($0 % 20), device: "band-1") }
        let unowned = (0..<5).map { heartRate(100 + $0, 70, device: "strap-9") }
        let plainWeighing = weighing(59.5, sync: nil, version: nil, minute: 202)
        let first = try pipeline.ingest(owned + unowned + [
            weighing(61, sync: "w1", version: 1, minute: 200), weighing(80, sync: "w2", version: 1, minute: 201),
            plainWeighing, bloodPressure(minute: 300),
        ] + (0..<3).map { steps(400 + $0) })
        try #require(first.totals.written >= 70)
        try #require(first.unassigned > 0)
        try #require(first.totals.held == 3)
        // Again: the same content under new uuids (duplicates by the identity index), a newer
        // version of one weighing (replaced) and the same version of the other (duplicate).
        let again = try pipeline.ingest((0..<60).map { heartRate($0, 60 + Double($0 % 20), device: "band-1") } + [
            weighing(61.5, sync: "w1", version: 2, minute: 200), weighing(80, sync: "w2", version: 1, minute: 201),
            bloodPressure(minute: 300),
        ])
        try #require(again.totals.duplicate >= 62)
        try #require(again.totals.replaced == 1)

        // Reads, as the commands and the daemon make them.
        let from = start.addingTimeInterval(10 * 60), to = start.addingTimeInterval(50 * 60)
        for person in [PersonScope.everyone, .person(me.id), .person(ana.id), .unassigned] {
            _ = try store.samples(type: .heartRate, from: from, to: to, person: person)
            _ = try store.samples(type: .heartRate, person: person, limit: 10)
            _ = try store.newestSamples(type: .heartRate, from: from, to: to, person: person, count: 5)
            _ = try store.statistics(.average(.temporal), type: .heartRate, from: from, to: to, granularity: .hour, zone: utc,
                                     person: person)
            _ = try store.points(type: .heartRate, from: nil, to: nil, person: person)
            _ = try store.changes(since: 0, person: person)
            _ = try store.forEachRecord(person: person) { _ in }
        }
        for scope in [QueryScope(), QueryScope(people: .named("ana"))] {
            // `today`: one day's statistics of several operations through the query port.
            _ = try store.statistics([.average(.temporal), .minimum, .latest], type: .heartRate, from: start,
                                     to: start.addingTimeInterval(86_400), granularity: nil, zone: utc, scope: scope)
            _ = try store.status(scope: scope, rejectionsSince: start)
            _ = try store.sourceSummaries(scope: scope)
        }
        _ = try store.forEachRecord(types: [.heartRate], from: from, to: to) { _ in }
        _ = try store.forEachRecord(types: [.bloodPressureSystolic]) { _ in }
        _ = try store.changes(since: 10, type: .bodyMass)
        _ = try store.commitEvents(afterCommit: 0)
        _ = try store.lastReadingsByDevice()
        _ = try store.heldSampleCounts()
        _ = try store.pendingGroups()
        _ = try store.pendingLosses()
        _ = try store.purgeExpiredPending(now: now)
        _ = try store.unassignedCount()
        _ = try store.sampleCount(of: ana)
        _ = try store.holdsSamples(person: "ana", type: QuantityType.bodyMass.identifier)
        _ = try store.personOfWeighing(source: "scale", syncIdentifier: "w2")

        // The delivery feed of a sink, its acknowledgements and dead letters.
        try store.addSink(SinkDefinition(name: "hass", url: "mqtt://127.0.0.1:1883", options: "{}", every: nil, readTypes: ["*"]),
                          now: now)
        let feed = try store.feedBatch(after: 0, types: [QuantityType.heartRate.identifier], limit: 50, person: .anyPerson)
        _ = try store.backlogCount(after: 0, types: [QuantityType.heartRate.identifier], person: .anyPerson)
        let refused = feed.entries.prefix(2).compactMap { entry -> RejectedRecord? in
            guard case .added(let sample, let anchor) = entry else { return nil }
            return RejectedRecord(anchor: anchor, uuid: sample.uuid, type: sample.type.identifier, record: "{}", reason: "refused")
        }
        try store.acknowledge(sink: "hass", through: feed.throughAnchor, delivered: [QuantityType.heartRate.identifier: 48],
                              rejected: refused, now: now)
        _ = try store.deadLetters(sink: "hass")
        _ = try store.retryDeadLetters(sink: "hass")
        _ = try store.hasDeadLettersToRetry(sink: "hass")
        let retrying = try store.deadLetters(sink: "hass", retryingOnly: true, limit: 10)
        try store.acknowledge(sink: "hass", through: nil, delivered: [:], resolvedDeadLetters: retrying.map(\.id), now: now)
        _ = try store.sinks()
        _ = try store.deliveredEvents(afterID: 0)

        // Assignment, the held samples released, a person removed.
        let unassigned = try store.unassignedSamples(limit: 2)
        _ = try store.assign(unassigned.map(\.uuid), to: ana)
        _ = try store.assign(plainWeighing.samples.map(\.uuid), to: me)
        _ = try store.assignUnassigned(fromDevice: "strap-9", to: ana)
        _ = try store.grant(source: "phone", types: [], all: true)
        _ = try store.releaseHeld(source: "phone", types: [], all: true, through: pipeline)
        _ = try store.setProfile(UserProfile(), of: ana)
        _ = try store.removePerson(named: "ana", samples: .reassign(to: HealthStore.firstPersonName))
        // Held records past the retention period, removed by the purge.
        try #require(try pipeline.ingest([steps(500, source: "watch")]).totals.held == 1)
        let expired = try store.purgeExpiredPending(now: Date().addingTimeInterval(store.pendingLimits.retention + 60))
        try #require(expired == ["watch": 1])
        try store.removeSink(named: "hass")
        return log.statements
    }

    // MARK: Plans

    /// The store's indexes from `sqlite_master` (not SQLite's own autoindexes), with their uniqueness.
    static func storeIndexes(_ db: Connection) throws -> [String: Bool] {
        var indexes: [String: Bool] = [:]
        let names = try db.prepare("""
            SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name
            """).mapRows { $0.string(at: 0) ?? "" }
        for name in names {
            let unique = try db.prepare("SELECT \"unique\" FROM pragma_index_list((SELECT tbl_name FROM sqlite_master WHERE name = ?1)) WHERE name = ?1")
            try unique.bind(name, at: 1)
            indexes[name] = try unique.firstRow { $0.int(at: 0) == 1 } ?? false
        }
        return indexes
    }

    /// The `EXPLAIN QUERY PLAN` detail lines of `sql` (none for statements without a plan:
    /// transactions, savepoints, pragmas).
    static func plan(of sql: String, in db: Connection) throws -> [String] {
        let word = sql.prefix { $0.isLetter }.uppercased()
        guard !["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA", "END"].contains(word) else { return [] }
        return try db.prepare("EXPLAIN QUERY PLAN " + sql).mapRows { $0.string(at: 3) ?? "" }
    }

    /// The index a plan line names (`USING INDEX x`, `USING COVERING INDEX x`), if any.
    static func index(in planLine: String) -> String? {
        for marker in ["USING COVERING INDEX ", "USING INDEX "] {
            guard let range = planLine.range(of: marker) else { continue }
            return String(planLine[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        }
        return nil
    }

    static func findings(_ store: HealthStore, statements: [String]) throws -> Findings {
        var users: [String: [IndexUse]] = [:]
        for statement in statements {
            for line in try plan(of: statement, in: store.db) {
                guard let index = index(in: line) else { continue }
                let use = IndexUse(statement: statement, plan: line)
                if !users[index, default: []].contains(use) { users[index, default: []].append(use) }
            }
        }
        return Findings(statements: statements, users: users, indexes: try storeIndexes(store.db))
    }

    /// One line of SQL: whitespace runs made one space, long texts shortened in the middle.
    static func oneLine(_ sql: String, limit: Int = 160) -> String {
        let line = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard line.count > limit else { return line }
        return line.prefix(limit - 40) + " … " + line.suffix(37)
    }

    /// The map as a readable table: per index, each plan line and the statement it belongs to.
    static func table(_ findings: Findings, constraintUsers: [String: String]) -> String {
        var text = "Index users (EXPLAIN QUERY PLAN of the \(findings.statements.count) distinct statements of the workload)\n"
        for index in findings.indexes.keys.sorted() {
            let uses = findings.users[index, default: []]
            let unique = findings.indexes[index] == true ? ", unique" : ""
            text += "\n\(index) (\(uses.count) plan lines\(unique))\n"
            if let constraint = constraintUsers[index] { text += "    constraint: \(constraint)\n" }
            for use in uses {
                text += "    \(use.plan)\n        \(oneLine(use.statement))\n"
            }
            if uses.isEmpty, constraintUsers[index] == nil { text += "    NO USER\n" }
        }
        return text
    }

    // MARK: The user of the constraint-only index

    /// Shows that `samples_identity` is what makes a re-sent sample (same source, device, type,
    /// times and value, a new uuid, no sync identifier) a duplicate: the pipeline says duplicate
    /// and stores nothing, and a plain INSERT of such a row fails on exactly that index's
    /// columns. Returns the description of its user for the table.
    static func identityConstraintUser(_ store: HealthStore) throws -> String {
        let pipeline = try Pipeline(store: store, now: { start.addingTimeInterval(10 * 86_400) })
        let resent = try pipeline.ingest([heartRate(0, 60, device: "band-1")])
        #expect(resent.totals.duplicate == 1 && resent.totals.written == 0,
                "a re-sent sample without a sync identifier must be a duplicate by \(constraintIndex)")
        let columns = try store.db.prepare("SELECT name FROM pragma_index_info('\(constraintIndex)') ORDER BY seqno")
            .mapRows { "samples." + ($0.string(at: 0) ?? "") }
        var message = ""
        do {
            try store.db.savepoint {
                try store.db.execute(sql: """
                    INSERT INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id, metadata, person)
                    SELECT randomblob(16), type, value, start_time, end_time, source, device, device_local_id, metadata, person
                    FROM samples WHERE sync_id IS NULL ORDER BY id LIMIT 1
                    """)
            }
        } catch let error as SQLiteError {
            message = error.message
        }
        #expect(message == "UNIQUE constraint failed: " + columns.joined(separator: ", "),
                "a duplicate insert must be refused by \(constraintIndex) (\(columns)): \(message)")
        return "the conflict check of every sample insert (`INSERT OR IGNORE INTO samples(…)`): a re-sent sample "
            + "is a duplicate; a plain INSERT fails with \"\(message)\""
    }

    // MARK: Tests

    @Test func everyIndexHasAUserAndTheTimeIndexesServeTheirReads() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore(path: directory.path("index-users.sqlite"))
        defer { store.close() }
        let statements = try Self.runWorkload(store)
        let findings = try Self.findings(store, statements: statements)
        let constraintUsers = [Self.constraintIndex: try Self.identityConstraintUser(store)]
        print(Self.table(findings, constraintUsers: constraintUsers))

        #expect(Set(findings.indexes.keys) == Self.expectedIndexes, "the store's indexes changed: update the list and show the users")
        let withoutUsers = findings.indexesWithoutUsers.filter { constraintUsers[$0] == nil }
        #expect(withoutUsers.isEmpty, "indexes no statement of the workload uses: \(withoutUsers)")

        // The deduplication of samples with a sync identifier looks the identity up by it.
        let syncLookup = try #require(statements.first { $0.contains("FROM samples WHERE source = ? AND type = ? AND sync_id = ?") })
        #expect(!findings.plans(of: syncLookup, using: "samples_sync_identity").isEmpty)

        // Statistics (and `today`) read from the time indexes alone: per type for everybody and
        // for the first person (whose samples the person index leaves out, schema 20), per
        // person and type for another person of the household.
        // "ana", the workload's second person (removed at its end), is person 2.
        let me = try store.person(named: HealthStore.firstPersonName).id, ana: Int64 = 2
        try #require(me == 1 && statements.contains { $0.contains("x.person = \(ana) AND x.person > 1") })
        let timeIndexes: [(PersonScope, String)] = [(.everyone, "samples_by_type_time"), (.person(me), "samples_by_type_time"),
                                                    (.person(ana), "samples_by_person_type_time")]
        for (scope, index) in timeIndexes {
            let from = Self.start.addingTimeInterval(10 * 60), to = Self.start.addingTimeInterval(50 * 60)
            let statistics = try #require(try store.pointsStatement(type: .heartRate, from: from, to: to, person: scope)).sql
            #expect(statements.contains(statistics), "the workload ran the statistics read of \(scope)")
            let plans = findings.plans(of: statistics, using: index)
            #expect(plans.contains { $0.contains("USING COVERING INDEX \(index) (") }, "\(scope): \(plans)")
        }
        // The samples queries take the index of their scope too.
        let samplesReads = statements.filter { $0.contains("FROM samples x JOIN sources s ON s.id = x.source") && $0.contains("WHERE x.type = ?1") }
        #expect(!samplesReads.isEmpty)
        for sql in samplesReads {
            let index = sql.contains("x.person > 1") ? "samples_by_person_type_time" : "samples_by_type_time"
            #expect(!findings.plans(of: sql, using: index).isEmpty, "\(index) for \(Self.oneLine(sql))")
        }
        // The hourly purge of the pending area finds expired records by the time they were held.
        let expiry = try #require(statements.first { $0.contains("FROM pending") && $0.contains("held_at < ?") && $0.hasPrefix("SELECT") })
        #expect(findings.plans(of: expiry, using: "pending_by_held_at").contains { $0.hasPrefix("SEARCH") })
    }

    /// The check above can fail: an index no statement uses is reported by name.
    @Test func anIndexNoStatementUsesIsReported() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore(path: directory.path("unused-index.sqlite"))
        defer { store.close() }
        try store.db.execute(sql: "CREATE INDEX samples_by_value ON samples(value)")
        let findings = try Self.findings(store, statements: try Self.runWorkload(store))
        #expect(findings.indexesWithoutUsers.contains("samples_by_value"))
        #expect(!findings.indexesWithoutUsers.contains("samples_by_type_time"))
    }

    /// Without `samples_identity` the same re-sent sample is stored twice: the index is what
    /// deduplicates samples without a sync identifier.
    @Test func withoutTheIdentityIndexAReSentSampleIsStoredAgain() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore(path: directory.path("no-identity.sqlite"))
        defer { store.close() }
        _ = try store.grant(source: "band", types: [], all: true)
        let pipeline = try Pipeline(store: store, now: { Self.start.addingTimeInterval(86_400) })
        #expect(try pipeline.ingest([Self.heartRate(0, 60, device: "band-1")]).totals.written == 1)
        #expect(try pipeline.ingest([Self.heartRate(0, 60, device: "band-1")]).totals.duplicate == 1)
        try store.db.execute(sql: "DROP INDEX \(Self.constraintIndex)")
        #expect(try pipeline.ingest([Self.heartRate(0, 60, device: "band-1")]).totals.written == 1)
        #expect(try store.samples(type: .heartRate).count == 2)
    }
}
