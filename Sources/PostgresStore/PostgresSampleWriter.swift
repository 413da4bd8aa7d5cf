import Foundation
import HealthModel

/// One change a gateway sends to the shared database, in feed order.
public enum PostgresChange: Sendable {
    /// A stored sample: `record` is its JSON line (DESIGN.md's form), `person` its person's name.
    case upsert(QuantitySample, record: String, person: String?, anchor: Int64)
    /// A tombstone: the sample with `uuid` was deleted at `anchor`.
    case delete(uuid: UUID, anchor: Int64)
}

/// Writes a gateway's changes into the shared schema, one transaction per batch.
///
/// A batch of samples only (no tombstone, no uuid twice: the usual backlog) is first copied in
/// binary (`COPY … (FORMAT binary)`) straight into the samples table, its source spans and the
/// gateway's position upserted in the same transaction. When the server refuses that COPY (a uuid
/// this gateway already stored: a batch re-sent after a crash; or a value the table does not take)
/// the transaction is rolled back and the batch takes the general path: it is copied (`COPY`) into
/// a temporary staging table, then upserted by (gateway, uuid) (a sample re-sent after a crash
/// overwrites itself, never a second row; another gateway's sample with the same uuid is never
/// touched) and tombstones mark their rows deleted. Within a
/// batch the last change of a uuid wins, so a delete followed by a re-add (a sample moved to
/// another person) leaves the row present. Both paths write the same row for a sample (the
/// timestamps are computed as `to_timestamp` computes them).
public final class PostgresSampleWriter {
    public let connection: PostgresConnection
    public let schema: PostgresSchema
    public let gateway: String
    /// The identity of the store delivering (nil: none, e.g. a benchmark): the gateway id belongs to
    /// the store that first delivered under it, and every batch checks that it still does.
    public let storeIdentity: String?
    /// Whether batches of new samples are first tried by one binary COPY into the table (the
    /// tests turn it off to compare both paths' rows).
    public var copiesNewSamplesDirectly = true
    private var stagingReady = false

    /// Migrates `schema` on `connection` (first contact) and registers `gateway` for the store
    /// `storeIdentity`; throws `PostgresError.gatewayTaken` when another store delivers under it.
    public init(connection: PostgresConnection, schema: PostgresSchema, gateway: String,
                storeIdentity: String? = nil) throws(PostgresError) {
        self.connection = connection
        self.schema = schema
        self.gateway = gateway
        self.storeIdentity = storeIdentity
        try schema.migrate(connection)
        try claimGateway()
    }

    /// Registers the gateway id for this store, or (an id from before version 3, unclaimed) claims
    /// it; throws when the id belongs to another store.
    private func claimGateway() throws(PostgresError) {
        let rows = try connection.execute("""
            INSERT INTO \(schema.table("gateways")) AS x (id, store_id) VALUES ($1, $2)
            ON CONFLICT (id) DO UPDATE SET store_id = COALESCE(x.store_id, EXCLUDED.store_id)
            RETURNING x.store_id
            """, [gateway, storeIdentity])
        let owner = rows.rows.first?.first ?? nil
        guard owner == storeIdentity else { throw .gatewayTaken(gateway: gateway, schema: schema.name) }
    }

    private func prepareStaging() throws(PostgresError) {
        guard !stagingReady else { return }
        try connection.execute("""
            CREATE TEMP TABLE IF NOT EXISTS ingestd_incoming (
                seq integer NOT NULL, op "char" NOT NULL, uuid uuid NOT NULL, person text, type text,
                value double precision, unit text, start_time double precision, end_time double precision,
                source text, record text, anchor bigint NOT NULL
            ) ON COMMIT DELETE ROWS
            """)
        stagingReady = true
    }

    /// The staging rows of `changes` in COPY text format.
    static func copyData(_ changes: [PostgresChange]) -> String {
        var data = ""
        data.reserveCapacity(changes.count * 400)
        for (index, change) in changes.enumerated() {
            switch change {
            case .upsert(let sample, let record, let person, let anchor):
                data += PostgresCopyText.row([
                    String(index), "a", sample.uuid.uuidString, person, sample.type.identifier,
                    String(sample.quantity.value), sample.type.canonicalUnit.description,
                    String(sample.start.timeIntervalSince1970), String(sample.end.timeIntervalSince1970),
                    sample.source, record, String(anchor),
                ])
            case .delete(let uuid, let anchor):
                data += PostgresCopyText.row([String(index), "d", uuid.uuidString, nil, nil, nil, nil, nil, nil, nil, nil,
                                              String(anchor)])
            }
        }
        return data
    }

    /// The samples table's columns the direct COPY fills, in `directRows`' order.
    static let directColumns = "uuid, gateway, person, type, value, unit, start_time, end_time, source, record, anchor, start_epoch, end_epoch"

    /// Per (person, type, source) of a batch, the earliest start and latest end (epoch seconds).
    struct SpanKey: Hashable {
        var person: String
        var type: String
        var source: String
    }

    /// A batch of new samples as binary COPY rows of the samples table, with its source spans.
    struct DirectRows {
        var data: [UInt8]
        var spans: [SpanKey: (first: Double, last: Double)]
    }

    /// `changes` (samples only) as rows of the samples table for `gateway`, or nil when a sample
    /// cannot go straight in (a tombstone, or a time `to_timestamp` refuses: the staging path
    /// reports that one).
    static func directRows(_ changes: [PostgresChange], gateway: String) -> DirectRows? {
        var copy = PostgresCopyBinary(capacity: changes.count * 420)
        var spans: [SpanKey: (first: Double, last: Double)] = [:]
        // Few types per batch: their identifier and unit are looked up once.
        var lastType: QuantityType?
        var typeText = ""
        var unitText = ""
        for change in changes {
            guard case .upsert(let sample, let record, let person, let anchor) = change else { return nil }
            let start = sample.start.timeIntervalSince1970
            let end = sample.end.timeIntervalSince1970
            guard let startTime = PostgresCopyBinary.timestampMicroseconds(fromUnixSeconds: start),
                  let endTime = PostgresCopyBinary.timestampMicroseconds(fromUnixSeconds: end) else { return nil }
            if sample.type != lastType {
                lastType = sample.type
                typeText = sample.type.identifier
                unitText = sample.type.canonicalUnit.description
            }
            copy.beginRow(fields: 13)
            copy.append(uuid: sample.uuid)
            copy.append(text: gateway)
            copy.append(text: person)
            copy.append(text: typeText)
            copy.append(float8: sample.quantity.value)
            copy.append(text: unitText)
            copy.append(timestampMicroseconds: startTime)
            copy.append(timestampMicroseconds: endTime)
            copy.append(text: sample.source)
            copy.append(jsonb: record)
            copy.append(int8: anchor)
            copy.append(float8: start)
            copy.append(float8: end)
            let key = SpanKey(person: person ?? "", type: typeText, source: sample.source)
            if let span = spans[key] {
                spans[key] = (min(span.first, start), max(span.last, end))
            } else {
                spans[key] = (start, end)
            }
        }
        return DirectRows(data: copy.finish(), spans: spans)
    }

    /// Writes `changes` in one transaction; returns how many rows were inserted or changed.
    @discardableResult
    public func write(_ changes: [PostgresChange]) throws(PostgresError) -> Int {
        guard !changes.isEmpty else { return 0 }
        let hasDeletions = changes.contains { if case .delete = $0 { true } else { false } }
        // The last change of a uuid wins; without repeats (the usual batch) no sort is needed.
        var seen = Set<UUID>(minimumCapacity: changes.count)
        let repeats = changes.contains { change in
            switch change {
            case .upsert(let sample, _, _, _): !seen.insert(sample.uuid).inserted
            case .delete(let uuid, _): !seen.insert(uuid).inserted
            }
        }
        let highestAnchor = changes.reduce(Int64(0)) { highest, change in
            switch change {
            case .upsert(_, _, _, let anchor), .delete(_, let anchor): max(highest, anchor)
            }
        }
        if copiesNewSamplesDirectly, !hasDeletions, !repeats, let rows = Self.directRows(changes, gateway: gateway),
           let written = try writeDirectly(rows, highestAnchor: highestAnchor) {
            return written
        }
        return try writeThroughStaging(changes, hasDeletions: hasDeletions, repeats: repeats, highestAnchor: highestAnchor)
    }

    /// The direct path: one transaction of the binary COPY, the spans and the gateway's position.
    /// Returns nil (the transaction rolled back) when the server refused it for a reason other
    /// than the connection.
    private func writeDirectly(_ rows: DirectRows, highestAnchor: Int64) throws(PostgresError) -> Int? {
        do {
            return try connection.transaction { () throws(PostgresError) -> Int in
                let copied = try connection.copyIn("COPY \(schema.table("samples")) (\(Self.directColumns)) FROM STDIN (FORMAT binary)",
                                                   bytes: rows.data)
                try writeSpans(rows.spans)
                try recordPosition(highestAnchor)
                return copied
            }
        } catch {
            if error.isConnectionProblem { throw error }
            if case .gatewayTaken = error { throw error }
            return nil
        }
    }

    /// Widens the stored source spans by the batch's, up to 1,000 spans per statement.
    private func writeSpans(_ spans: [SpanKey: (first: Double, last: Double)]) throws(PostgresError) {
        let entries = Array(spans)
        var index = 0
        while index < entries.count {
            let chunk = entries[index..<min(entries.count, index + 1000)]
            var parameters: [String?] = [gateway]
            var rows: [String] = []
            for (key, span) in chunk {
                let base = parameters.count
                rows.append("($\(base + 1)::text, $\(base + 2)::text, $\(base + 3)::text, $\(base + 4)::float8, $\(base + 5)::float8)")
                parameters += [key.person, key.type, key.source, String(span.first), String(span.last)]
            }
            try connection.execute("""
                INSERT INTO \(schema.table("source_spans")) AS x (gateway, person, type, source, first_start, last_end)
                SELECT $1, v.person, v.type, v.source, to_timestamp(v.first), to_timestamp(v.last)
                FROM (VALUES \(rows.joined(separator: ", "))) AS v (person, type, source, first, last)
                ON CONFLICT (gateway, person, type, source) DO UPDATE
                SET first_start = least(x.first_start, EXCLUDED.first_start), last_end = greatest(x.last_end, EXCLUDED.last_end)
                """, parameters)
            index += chunk.count
        }
    }

    /// Records the gateway's delivery and its position (the highest anchor delivered), in the
    /// batch's transaction; throws (the batch rolls back) when the id is no longer this store's.
    private func recordPosition(_ highestAnchor: Int64) throws(PostgresError) {
        let recorded = try connection.execute("""
            INSERT INTO \(schema.table("gateways")) AS x (id, last_anchor, store_id) VALUES ($1, $2, $3)
            ON CONFLICT (id) DO UPDATE SET last_delivery = now(), last_anchor = greatest(x.last_anchor, EXCLUDED.last_anchor)
            WHERE x.store_id IS NOT DISTINCT FROM EXCLUDED.store_id
            """, [gateway, String(highestAnchor), storeIdentity])
        guard recorded.affected == 1 else { throw .gatewayTaken(gateway: gateway, schema: schema.name) }
    }

    /// The general path: COPY into the staging table, upsert by (gateway, uuid), tombstones, spans, position.
    private func writeThroughStaging(_ changes: [PostgresChange], hasDeletions: Bool, repeats: Bool,
                                     highestAnchor: Int64) throws(PostgresError) -> Int {
        try prepareStaging()
        let samples = schema.table("samples")
        let latest = repeats ? "DISTINCT ON (uuid)" : ""
        let order = repeats ? "ORDER BY uuid, seq DESC" : ""
        return try connection.transaction { () throws(PostgresError) -> Int in
            try connection.copyIn("COPY ingestd_incoming FROM STDIN", data: Self.copyData(changes))
            let upserted = try connection.execute("""
                INSERT INTO \(samples) AS x (uuid, gateway, person, type, value, unit, start_time, end_time, source, record, anchor,
                                              start_epoch, end_epoch)
                SELECT \(latest) uuid, $1, person, type, value, unit, to_timestamp(start_time), to_timestamp(end_time),
                       source, record::jsonb, anchor, start_time, end_time
                FROM ingestd_incoming WHERE op = 'a' \(order)
                ON CONFLICT (gateway, uuid) DO UPDATE SET person = EXCLUDED.person, type = EXCLUDED.type,
                    value = EXCLUDED.value, unit = EXCLUDED.unit, start_time = EXCLUDED.start_time,
                    end_time = EXCLUDED.end_time, source = EXCLUDED.source, record = EXCLUDED.record,
                    anchor = EXCLUDED.anchor, deleted_at = NULL, written_at = now(), start_epoch = EXCLUDED.start_epoch,
                    end_epoch = EXCLUDED.end_epoch
                WHERE x.record IS DISTINCT FROM EXCLUDED.record OR x.person IS DISTINCT FROM EXCLUDED.person
                    OR x.deleted_at IS NOT NULL
                """, [gateway]).affected
            var deleted = 0
            if hasDeletions {
                deleted = try connection.execute("""
                    UPDATE \(samples) x SET deleted_at = now(), anchor = l.anchor
                    FROM (SELECT DISTINCT ON (uuid) uuid, op, anchor FROM ingestd_incoming ORDER BY uuid, seq DESC) l
                    WHERE l.op = 'd' AND x.uuid = l.uuid AND x.gateway = $1 AND x.deleted_at IS NULL
                    """, [gateway]).affected
            }
            try connection.execute("""
                INSERT INTO \(schema.table("source_spans")) AS x (gateway, person, type, source, first_start, last_end)
                SELECT $1, COALESCE(person, ''), type, source, to_timestamp(min(start_time)), to_timestamp(max(end_time))
                FROM ingestd_incoming WHERE op = 'a' GROUP BY 2, 3, 4
                ON CONFLICT (gateway, person, type, source) DO UPDATE
                SET first_start = least(x.first_start, EXCLUDED.first_start), last_end = greatest(x.last_end, EXCLUDED.last_end)
                """, [gateway])
            try recordPosition(highestAnchor)
            return upserted + deleted
        }
    }
}
