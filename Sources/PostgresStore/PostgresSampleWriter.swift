import Foundation
import HealthModel

/// One change a gateway sends to the shared database, in feed order.
public enum PostgresChange: Sendable {
    /// A stored sample: `record` is its JSON line (DESIGN.md's form), `person` its person's name.
    case upsert(QuantitySample, record: String, person: String?, anchor: Int64)
    /// A tombstone: the sample with `uuid` was deleted at `anchor`.
    case delete(uuid: UUID, anchor: Int64)
}

/// Writes a gateway's changes into the shared schema, one transaction per batch: the batch is
/// copied (`COPY`) into a temporary staging table, then upserted by uuid (a sample re-sent after a
/// crash overwrites itself, never a second row) and tombstones mark their rows deleted. Within a
/// batch the last change of a uuid wins, so a delete followed by a re-add (a sample moved to
/// another person) leaves the row present.
public final class PostgresSampleWriter {
    public let connection: PostgresConnection
    public let schema: PostgresSchema
    public let gateway: String
    private var stagingReady = false

    /// Migrates `schema` on `connection` (first contact) and registers `gateway`.
    public init(connection: PostgresConnection, schema: PostgresSchema, gateway: String) throws(PostgresError) {
        self.connection = connection
        self.schema = schema
        self.gateway = gateway
        try schema.migrate(connection)
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

    /// Writes `changes` in one transaction; returns how many rows were inserted or changed.
    @discardableResult
    public func write(_ changes: [PostgresChange]) throws(PostgresError) -> Int {
        guard !changes.isEmpty else { return 0 }
        try prepareStaging()
        let samples = schema.table("samples")
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
                ON CONFLICT (uuid) DO UPDATE SET gateway = EXCLUDED.gateway, person = EXCLUDED.person, type = EXCLUDED.type,
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
            try connection.execute("""
                INSERT INTO \(schema.table("gateways")) AS x (id, last_anchor) VALUES ($1, $2)
                ON CONFLICT (id) DO UPDATE SET last_delivery = now(), last_anchor = greatest(x.last_anchor, EXCLUDED.last_anchor)
                """, [gateway, String(highestAnchor)])
            return upserted + deleted
        }
    }
}
