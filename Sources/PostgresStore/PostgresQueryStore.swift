import Foundation
import HealthModel
import Pipeline

/// The shared PostgreSQL store as the query commands' port: the samples every gateway delivered
/// (tombstoned rows left out), optionally narrowed to one gateway.
///
/// Statistics are computed in the database where the data is large: the calendar buckets are
/// chosen exactly as the SQLite store chooses them (`StatisticsRange`, in Swift, so DST and week
/// starts agree) and sent as one array; each sample finds its buckets with `width_bucket` on the
/// epoch seconds stored with it (`start_epoch`, `end_epoch`: no per-row timestamp conversion), interval
/// samples are split across bucket edges in proportion to time, and sums, minimums, maximums,
/// arithmetic means and latest values are aggregated in SQL. Two cases need the priority timeline
/// or per-source holds, so their rows are read and handed to the same `StatisticsEngine` the
/// SQLite store uses, per (gateway, person): sums where one person's samples come from more than
/// one source in the range, and temporally weighted averages.
public final class PostgresQueryStore: QueryStore {
    public let connection: PostgresConnection
    public let schema: PostgresSchema

    /// Connects to `url` and checks that ingestd's schema is there (a query never creates it).
    public init(url: String, schema: PostgresSchema) throws(PostgresError) {
        connection = try PostgresConnection(url: url)
        self.schema = schema
        // The statistics statements are built per query with large row estimates: JIT compiling
        // them costs seconds and saves nothing.
        try connection.execute("SET jit = off")
        let found = try connection.execute("SELECT to_regclass($1) IS NOT NULL", [schema.table("schema_version")])
        guard found.rows.first?.first == "t" else {
            throw .statementFailed(statement: "schema \(schema.name)", state: "3F000",
                                   message: "no ingestd schema '\(schema.name)' in the database (no sink has delivered to it yet; see --schema)")
        }
        let version = try schema.currentVersion(connection)
        guard version <= PostgresSchema.latestVersion else {
            throw .schemaTooNew(schema: schema.name, version: version, known: PostgresSchema.latestVersion)
        }
        guard version >= PostgresSchema.latestVersion else {
            throw .schemaTooOld(schema: schema.name, version: version, needed: PostgresSchema.latestVersion)
        }
    }

    public func close() { connection.close() }

    /// A fleet's shared store holds no samples of undecided sources (each gateway keeps its own).
    public func heldSampleCounts() throws -> [String: Int] { [:] }

    /// The gateways that delivered, by id.
    public func gateways() throws(PostgresError) -> [String] {
        try connection.execute("SELECT id FROM \(schema.table("gateways")) ORDER BY id").rows.compactMap { $0.first ?? nil }
    }

    public func queryPeopleNames() throws -> [String] {
        try connection.execute("SELECT DISTINCT person FROM \(schema.table("samples")) WHERE person IS NOT NULL ORDER BY person")
            .rows.compactMap { $0.first ?? nil }
    }

    public func sourceSummaries(scope: QueryScope) throws -> [SourceSummary] {
        let samples = schema.table("samples")
        let gateway = scope.gateway.map { _ in " AND x.gateway = $1" } ?? ""
        let parameters: [String?] = scope.gateway.map { [$0] } ?? []
        var result: [String: SourceSummary] = [:]
        let counts = try connection.execute(
            "SELECT x.source, x.type, count(*) FROM \(samples) x WHERE x.deleted_at IS NULL\(gateway) GROUP BY 1, 2", parameters)
        for row in counts.rows {
            guard row.count == 3, let name = row[0], let type = row[1], let count = row[2].flatMap(Int.init) else { continue }
            result[name, default: SourceSummary(name: name, sampleCount: 0, countsByType: [:], devices: [])].countsByType[type] = count
            result[name]?.sampleCount += count
        }
        let decoder = HealthRecordDecoder(defaultSource: "")
        let devices = try connection.execute(
            "SELECT DISTINCT x.source, (x.record->'device')::text FROM \(samples) x WHERE x.deleted_at IS NULL AND x.record ? 'device'"
                + gateway + " ORDER BY 1, 2", parameters)
        for row in devices.rows {
            guard row.count == 2, let name = row[0], let json = row[1], let device = try? decoder.decodeDevice(json) else { continue }
            result[name]?.devices.append(device)
        }
        return result.values.sorted { $0.name < $1.name }
    }

    /// The WHERE clause of live samples of `type` overlapping `[from, to)` in `scope`, and its parameters.
    private func condition(type: QuantityType, from: Date?, to: Date?, source: String? = nil, scope: QueryScope)
        -> (sql: String, parameters: [String?]) {
        var parameters: [String?] = [type.identifier]
        var sql = "x.type = $1 AND x.deleted_at IS NULL"
        func parameter(_ value: String) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        if let from {
            let p = parameter(String(from.timeIntervalSince1970))
            sql += " AND (x.end_time > to_timestamp(\(p)::float8) OR x.start_time >= to_timestamp(\(p)::float8))"
        }
        if let to { sql += " AND x.start_time < to_timestamp(\(parameter(String(to.timeIntervalSince1970)))::float8)" }
        if let source { sql += " AND x.source = \(parameter(source))" }
        switch scope.people {
        case .everyone: break
        case .unassigned: sql += " AND x.person IS NULL"
        case .named(let name): sql += " AND x.person = \(parameter(name))"
        }
        if let gateway = scope.gateway { sql += " AND x.gateway = \(parameter(gateway))" }
        return (sql, parameters)
    }

    public func samples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int) throws
        -> [QuantitySample] {
        try samples(type: type, from: from, to: to, source: source, scope: scope, limit: limit, newestFirst: false)
    }

    public func newestSamples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, count: Int) throws
        -> [QuantitySample] {
        try samples(type: type, from: from, to: to, source: source, scope: scope, limit: max(count, 1), newestFirst: true)
            .reversed()
    }

    private func samples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int,
                         newestFirst: Bool) throws -> [QuantitySample] {
        let (sql, parameters) = condition(type: type, from: from, to: to, source: source, scope: scope)
        let order = newestFirst
            ? "x.start_time DESC, x.end_time DESC, x.gateway DESC, x.anchor DESC"
            : "x.start_time, x.end_time, x.gateway, x.anchor"
        var query = "SELECT x.record::text FROM \(schema.table("samples")) x WHERE \(sql) ORDER BY \(order)"
        if limit > 0 { query += " LIMIT \(limit)" }
        let decoder = HealthRecordDecoder(defaultSource: "")
        return try connection.execute(query, parameters).rows.compactMap { row in
            guard let text = row.first ?? nil else { return nil }
            if case .sample(let sample) = try decoder.decodeLine(text) { return sample }
            return nil
        }
    }

    /// Rows per page of `forEachSample` (a test makes it small to cross pages).
    public var samplePageSize = 5_000

    /// Pages of `samplePage` rows in `samples`' order, each after the last row of the one before
    /// (keyset: start, end, gateway, anchor, compared as PostgreSQL's own text of them), so a
    /// read of any size holds one page.
    public func forEachSample(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int,
                              _ body: (QuantitySample) throws -> Void) throws {
        let (sql, parameters) = condition(type: type, from: from, to: to, source: source, scope: scope)
        let decoder = HealthRecordDecoder(defaultSource: "")
        var after: [String?]?
        var handed = 0
        while limit == 0 || handed < limit {
            let page = limit == 0 ? max(1, samplePageSize) : min(max(1, samplePageSize), limit - handed)
            var query = "SELECT x.record::text, x.start_time::text, x.end_time::text, x.gateway, x.anchor::text FROM \(schema.table("samples")) x WHERE \(sql)"
            var values = parameters
            if let after {
                let first = values.count + 1
                query += " AND x.start_time >= $\(first)::timestamptz AND (x.start_time, x.end_time, x.gateway, x.anchor) > ($\(first)::timestamptz, $\(first + 1)::timestamptz, $\(first + 2), $\(first + 3)::bigint)"
                values += after
            }
            query += " ORDER BY x.start_time, x.end_time, x.gateway, x.anchor LIMIT \(page)"
            let rows = try connection.execute(query, values).rows
            for row in rows {
                guard row.count == 5, let text = row[0] else { continue }
                if case .sample(let sample) = try decoder.decodeLine(text) { try body(sample) }
                handed += 1
            }
            guard rows.count == page, let last = rows.last, last.count == 5 else { return }
            after = Array(last[1...4])
        }
    }

    private func extent(_ sql: String, _ parameters: [String?]) throws -> SampleExtent? {
        let samples = schema.table("samples")
        let row = try connection.execute("""
            SELECT min(x.start_epoch), max(x.end_epoch) FROM \(samples) x WHERE \(sql)
            """, parameters).rows.first
        guard let first = row?[0].flatMap(Double.init), let last = row?[1].flatMap(Double.init) else { return nil }
        let instant = try connection.execute("""
            SELECT EXISTS (SELECT 1 FROM \(samples) x WHERE \(sql) AND x.start_time = x.end_time
                           AND x.end_epoch = $\(parameters.count + 1)::float8)
            """, parameters + [String(last)]).rows.first?.first == "t"
        return SampleExtent(earliestStart: Date(timeIntervalSince1970: first), latestEnd: Date(timeIntervalSince1970: last),
                            instantAtLatestEnd: instant)
    }

    public func statistics(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                           granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [StatisticsBucket] {
        let (sql, parameters) = condition(type: type, from: from, to: to, scope: scope)
        let needsExtent = from == nil || to == nil
        guard let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone,
                                                        extent: needsExtent ? try extent(sql, parameters) : nil) else { return [] }
        switch operation {
        case .average(.temporal), .average(.equivalentContinuousLevel):
            return try engineStatistics(operation, type: type, sql: sql, parameters: parameters, buckets: buckets)
        case .sum:
            if try sourcesMayOverlap(type: type, buckets: buckets, scope: scope) {
                return try engineStatistics(operation, type: type, sql: sql, parameters: parameters, buckets: buckets)
            }
            return try sqlStatistics(operation, sql: sql, parameters: parameters, buckets: buckets)
        case .minimum, .maximum, .latest, .average(.arithmetic):
            return try sqlStatistics(operation, sql: sql, parameters: parameters, buckets: buckets)
        }
    }

    /// Whether one person (of one gateway) in `scope` has samples of `type` from more than one
    /// source within the buckets' range, read from `source_spans` (kept by the writer).
    private func sourcesMayOverlap(type: QuantityType, buckets: CalendarBuckets, scope: QueryScope) throws -> Bool {
        guard let first = buckets.boundaries.first, let last = buckets.boundaries.last else { return false }
        var parameters: [String?] = [type.identifier, String(first.timeIntervalSince1970), String(last.timeIntervalSince1970)]
        var sql = """
            SELECT 1 FROM \(schema.table("source_spans")) x WHERE x.type = $1
            AND x.last_end >= to_timestamp($2::float8) AND x.first_start < to_timestamp($3::float8)
            """
        switch scope.people {
        case .everyone: break
        case .unassigned: sql += " AND x.person = ''"
        case .named(let name):
            parameters.append(name)
            sql += " AND x.person = $\(parameters.count)"
        }
        if let gateway = scope.gateway {
            parameters.append(gateway)
            sql += " AND x.gateway = $\(parameters.count)"
        }
        sql += " GROUP BY x.gateway, x.person HAVING count(*) > 1 LIMIT 1"
        return try !connection.execute(sql, parameters).rows.isEmpty
    }

    /// The statistics computed in SQL (see the type's overview).
    private func sqlStatistics(_ operation: StatisticsOperation, sql: String, parameters: [String?],
                               buckets: CalendarBuckets) throws -> [StatisticsBucket] {
        let bounds = buckets.boundaries.map(\.timeIntervalSince1970)
        let n = bounds.count - 1
        // The boundaries as a constant (numbers only), folded once when the statement is planned.
        let b = "'{" + bounds.map { String($0) }.joined(separator: ",") + "}'::float8[]"
        // ws/we: the 1-based buckets of start and end (B[k] ≤ t < B[k+1]). A sample with both in
        // one bucket lies wholly in it; others are assigned to the buckets from max(ws, 1) through
        // we, where an interval ending exactly on a boundary does not reach the bucket starting there.
        // One scan, grouped so that the server can aggregate in parallel: samples inside one bucket
        // group by that bucket; a sample crossing an edge keeps its own group (its start and end), and
        // only those few groups are then spread over the buckets they overlap.
        let grouped = """
            WITH x AS NOT MATERIALIZED (
                SELECT x.start_epoch AS s, x.end_epoch AS e, x.value AS v
                FROM \(schema.table("samples")) x WHERE \(sql)
            ), y AS NOT MATERIALIZED (
                SELECT s, e, v, width_bucket(s, \(b)) AS ws, width_bucket(e, \(b)) AS we FROM x
            ), g AS (
                SELECT ws, we, CASE WHEN ws = we THEN NULL ELSE s END AS gs, CASE WHEN ws = we THEN NULL ELSE e END AS ge,
                       sum(v) AS total, count(*) AS c, min(v) AS low, max(v) AS high
                FROM y WHERE ws <> we OR ws BETWEEN 1 AND \(n) GROUP BY 1, 2, 3, 4
            ), spread AS (
                SELECT ws AS k, total AS t, c, low, high FROM g WHERE gs IS NULL
                UNION ALL
                SELECT k, total * (least(ge, (\(b))[k + 1]) - greatest(gs, (\(b))[k])) / (ge - gs), c, low, high
                FROM (SELECT generate_series(greatest(ws, 1), least(CASE WHEN (\(b))[we] = ge THEN we - 1 ELSE we END, \(n))) AS k,
                             gs, ge, total, c, low, high FROM g WHERE gs IS NOT NULL) AS z
            )
            """
        let split = """
            (SELECT generate_series(greatest(ws, 1), least(CASE WHEN e > s AND (\(b))[we] = e THEN we - 1 ELSE we END, \(n))) AS k,
                    s, e, v FROM y WHERE ws <> we) AS z
            """
        let statement: String
        switch operation {
        case .sum: statement = grouped + "SELECT k, sum(t), sum(c), NULL::float8, NULL::float8 FROM spread GROUP BY k"
        case .minimum: statement = grouped + "SELECT k, min(low), sum(c), NULL::float8, NULL::float8 FROM spread GROUP BY k"
        case .maximum: statement = grouped + "SELECT k, max(high), sum(c), NULL::float8, NULL::float8 FROM spread GROUP BY k"
        case .average:
            // A crossing sample counts whole (its value, not a share) in every bucket it overlaps.
            statement = grouped + """
                SELECT k, sum(a) / sum(c), sum(c), NULL::float8, NULL::float8 FROM (
                    SELECT ws AS k, total AS a, c FROM g WHERE gs IS NULL
                    UNION ALL
                    SELECT k, total, c FROM (SELECT generate_series(greatest(ws, 1),
                        least(CASE WHEN (\(b))[we] = ge THEN we - 1 ELSE we END, \(n))) AS k, total, c FROM g WHERE gs IS NOT NULL) AS z
                ) AS parts GROUP BY k
                """
        case .latest:
            statement = """
                WITH x AS NOT MATERIALIZED (
                    SELECT x.start_epoch AS s, x.end_epoch AS e, x.value AS v
                    FROM \(schema.table("samples")) x WHERE \(sql)
                ), y AS NOT MATERIALIZED (
                    SELECT s, e, v, width_bucket(s, \(b)) AS ws, width_bucket(e, \(b)) AS we FROM x
                )
                SELECT DISTINCT ON (k) k, v, count(*) OVER (PARTITION BY k), s, e FROM (
                    SELECT ws AS k, s, e, v FROM y WHERE ws = we AND ws BETWEEN 1 AND \(n) UNION ALL SELECT k, s, e, v FROM \(split)
                ) AS assigned ORDER BY k, e DESC, s DESC
                """
        }
        let rows = try connection.execute(statement, parameters).rows
        var values = [Double?](repeating: nil, count: n)
        var counts = [Int](repeating: 0, count: n)
        var intervals = [DateInterval?](repeating: nil, count: n)
        for row in rows {
            guard row.count == 5, let k = row[0].flatMap(Int.init), (1...n).contains(k) else { continue }
            values[k - 1] = row[1].flatMap(Double.init)
            counts[k - 1] = row[2].flatMap(Int.init) ?? 0
            if let s = row[3].flatMap(Double.init), let e = row[4].flatMap(Double.init) {
                intervals[k - 1] = DateInterval(start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: e))
            }
        }
        return (0..<n).map { j in
            StatisticsBucket(start: buckets.boundaries[j], end: buckets.boundaries[j + 1], value: counts[j] > 0 ? values[j] : nil,
                             latestInterval: intervals[j], sampleCount: counts[j])
        }
    }

    /// The statistics of the `StatisticsEngine` over the rows, per (gateway, person), combined. Each
    /// gateway's sources rank as on the gateway: the fleet's `source_priority` first, then by the
    /// gateway's first write (its lowest feed anchor) of the source.
    private func engineStatistics(_ operation: StatisticsOperation, type: QuantityType, sql: String, parameters: [String?],
                                  buckets: CalendarBuckets) throws -> [StatisticsBucket] {
        let samples = schema.table("samples")
        let rows = try connection.execute("""
            WITH ranks AS (
                SELECT g.gateway, g.source, row_number() OVER (PARTITION BY g.gateway ORDER BY p.rank NULLS LAST, g.first) - 1 AS rank
                FROM (SELECT gateway, source, min(anchor) AS first FROM \(samples) WHERE type = $1 GROUP BY gateway, source) g
                LEFT JOIN \(schema.table("source_priority")) p ON p.type = $1 AND p.source = g.source
            )
            SELECT x.gateway, x.person, r.rank, x.start_epoch, x.end_epoch, x.value
            FROM \(samples) x JOIN ranks r ON r.gateway = x.gateway AND r.source = x.source
            WHERE \(sql) ORDER BY x.gateway, x.person, x.start_time
            """, parameters).rows
        var groups: [[StatisticsSample]] = []
        var lastKey: [String?] = []
        for row in rows {
            guard row.count == 6, let rank = row[2].flatMap(Int.init), let s = row[3].flatMap(Double.init),
                  let e = row[4].flatMap(Double.init), let v = row[5].flatMap(Double.init) else {
                throw PostgresError.unexpectedValue(column: "samples row", value: row.map { $0 ?? "NULL" }.joined(separator: "|"))
            }
            let key = [row[0], row[1]]
            if key != lastKey || groups.isEmpty {
                groups.append([])
                lastKey = key
            }
            groups[groups.count - 1].append(StatisticsSample(start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: e),
                                                             value: v, sourceRank: rank))
        }
        let engine = StatisticsEngine()
        let parts = try groups.map { try engine.statistics(operation, of: $0, in: buckets) }
        guard !parts.isEmpty else { return try engine.statistics(operation, of: [], in: buckets) }
        return StatisticsCombination.combine(operation, parts)
    }
}
