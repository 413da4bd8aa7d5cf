import Foundation

/// ingestd's tables in one PostgreSQL schema (default `ingestd`), created and migrated on first
/// contact. Versions are applied in order inside one transaction holding an advisory lock, so
/// gateways meeting a fresh database at the same moment do not race.
///
/// `samples` holds every gateway's samples keyed (version 3) by (gateway, uuid): the person it
/// belongs to, the type, value in the type's canonical unit, interval, source, the sample as
/// DESIGN.md's JSON (`record`), the gateway's feed anchor and `deleted_at` for tombstones, and
/// (version 2) the interval's ends as epoch seconds for the statistics.
/// `source_spans` keeps, per gateway, person (`''` for unassigned), type and source, the time its
/// samples span: statistics look there to see whether one person's sources can overlap (then the
/// priority merge is needed) without scanning the samples. `gateways` holds each gateway's first and
/// last delivery and (version 2) its position in its own feed (`last_anchor`), the per-gateway part
/// of the fleet's change anchor (`FleetAnchor`), and (version 3) the identity of the store the id
/// belongs to (`store_id`).
public struct PostgresSchema: Sendable {
    /// The schema name used when none is given.
    public static let defaultName = "ingestd"
    /// The newest version this ingestd knows.
    public static var latestVersion: Int { migrations.count }

    /// The schema's name (validated: lowercase letters, digits, `_`).
    public let name: String

    public init(name: String = PostgresSchema.defaultName) throws(PostgresError) {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first), name.count <= 63,
              name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
            throw .invalidSchemaName(name)
        }
        self.name = name
    }

    /// `name.table`, quoted.
    public func table(_ table: String) -> String { "\"\(name)\".\(table)" }

    /// The migrations in order; `{s}` stands for the quoted schema name.
    static let migrations: [String] = [
        """
        CREATE TABLE {s}.samples (
            uuid uuid PRIMARY KEY,
            gateway text NOT NULL,
            person text,
            type text NOT NULL,
            value double precision NOT NULL,
            unit text NOT NULL,
            start_time timestamptz NOT NULL,
            end_time timestamptz NOT NULL,
            source text NOT NULL,
            record jsonb NOT NULL,
            anchor bigint NOT NULL,
            deleted_at timestamptz,
            written_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX samples_type_start ON {s}.samples (type, start_time);
        CREATE TABLE {s}.source_spans (
            gateway text NOT NULL,
            person text NOT NULL,
            type text NOT NULL,
            source text NOT NULL,
            first_start timestamptz NOT NULL,
            last_end timestamptz NOT NULL,
            PRIMARY KEY (gateway, person, type, source)
        );
        CREATE TABLE {s}.gateways (
            id text PRIMARY KEY,
            first_delivery timestamptz NOT NULL DEFAULT now(),
            last_delivery timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE {s}.source_priority (
            type text NOT NULL,
            source text NOT NULL,
            rank integer NOT NULL,
            PRIMARY KEY (type, source)
        );
        """,
        // 2: the fleet's change order. Each gateway's position (the highest feed anchor it delivered)
        // is kept with the gateway, and its rows are found by (gateway, anchor): `changes` reads a
        // composite anchor, one position per gateway, without a database-wide sequence.
        // Statistics: the interval's ends as epoch seconds (`start_epoch`, `end_epoch`, the gateway's
        // own numbers), written with the row, so bucketing reads them instead of converting every
        // row's timestamps (existing rows are filled once here).
        """
        ALTER TABLE {s}.gateways ADD COLUMN last_anchor bigint NOT NULL DEFAULT 0;
        UPDATE {s}.gateways g SET last_anchor = COALESCE((SELECT max(anchor) FROM {s}.samples x WHERE x.gateway = g.id), 0);
        CREATE INDEX samples_gateway_anchor ON {s}.samples (gateway, anchor);
        ALTER TABLE {s}.samples ADD COLUMN start_epoch double precision, ADD COLUMN end_epoch double precision;
        UPDATE {s}.samples SET start_epoch = date_part('epoch', start_time), end_epoch = date_part('epoch', end_time);
        ALTER TABLE {s}.samples ALTER COLUMN start_epoch SET NOT NULL, ALTER COLUMN end_epoch SET NOT NULL
        """,
        // 3: a sample is a gateway's: the key is (gateway, uuid), so a second gateway's sample with
        // the same uuid (JSON lines and plugins may bring their own) is a row of its own instead of
        // replacing the first's. A gateway id belongs to the store that first delivered under it
        // (`store_id`, the store's random identity); a gateway row from before stays unclaimed until
        // its store (or the first store to deliver under that id) next delivers.
        """
        ALTER TABLE {s}.samples DROP CONSTRAINT samples_pkey;
        ALTER TABLE {s}.samples ADD PRIMARY KEY (gateway, uuid);
        ALTER TABLE {s}.gateways ADD COLUMN store_id text
        """,
        // 4: heart and respiratory rates in count/min instead of count/s (a device's 85 bpm is 85, not
        // 1.4166666666666667), as in the gateways' own stores from their schema 13: the value column
        // and the record's value and unit, rounded to nine decimals as there. A gateway of an older
        // ingestd meets version 4 and refuses to write (`schemaTooNew`) instead of adding count/s rows.
        """
        UPDATE {s}.samples SET value = round((value * 60)::numeric, 9)::double precision, unit = 'count/min',
            record = CASE WHEN record ? 'value'
                THEN jsonb_set(jsonb_set(record, '{value}', to_jsonb(round((value * 60)::numeric, 9)::double precision)), '{unit}', '"count/min"')
                ELSE record END
        WHERE unit = 'count/s' AND type IN ('HKQuantityTypeIdentifierHeartRate', 'HKQuantityTypeIdentifierRespiratoryRate')
        """,
    ]

    /// Creates the schema or brings it to `latestVersion`; returns the version found before.
    @discardableResult
    public func migrate(_ connection: PostgresConnection) throws(PostgresError) -> Int {
        try connection.transaction { () throws(PostgresError) -> Int in
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", ["ingestd-schema:" + name])
            try connection.execute("CREATE SCHEMA IF NOT EXISTS \"\(name)\"")
            try connection.execute("CREATE TABLE IF NOT EXISTS \(table("schema_version")) (version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
            let found = try currentVersion(connection)
            guard found <= Self.latestVersion else {
                throw .schemaTooNew(schema: name, version: found, known: Self.latestVersion)
            }
            for version in (found + 1)...max(found + 1, Self.latestVersion) where version <= Self.latestVersion {
                let sql = Self.migrations[version - 1].replacingOccurrences(of: "{s}", with: "\"\(name)\"")
                for statement in sql.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !statement.isEmpty {
                    try connection.execute(statement)
                }
                try connection.execute("INSERT INTO \(table("schema_version")) (version) VALUES ($1)", [String(version)])
            }
            return found
        }
    }

    /// The version recorded in the schema (0 when none).
    public func currentVersion(_ connection: PostgresConnection) throws(PostgresError) -> Int {
        let rows = try connection.execute("SELECT COALESCE(MAX(version), 0) FROM \(table("schema_version"))")
        let text = rows.rows.first?.first.flatMap { $0 } ?? "0"
        guard let version = Int(text) else { throw .unexpectedValue(column: "schema_version.version", value: text) }
        return version
    }
}
