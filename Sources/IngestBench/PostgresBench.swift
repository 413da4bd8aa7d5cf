import Delivery
import Foundation
import LocalPostgres
import Pipeline
import PostgresStore

/// PostgreSQL figures, against a throwaway server the bench starts (initdb in a temporary
/// directory, as the postgres user when run as root):
/// - `sink.postgres_samples_per_s`: the engine drains a backlog of step samples from a SQLite
///   store into the database through the `postgresql://` sink (one transaction per batch of 10,000,
///   the default: new samples by a binary COPY into the table, else COPY into staging and upsert by uuid); `sink.postgres_copy_samples_per_s`: the same
///   rows, written to a file by the server, loaded by one `COPY … FROM` file into a table of the same
///   shape (primary key and indexes); `sink.postgres_vs_copy` is their ratio (target ≥ 0.5).
/// - `stats.postgres_year_by_day_ms`: `stats --sum --by day` for a year in Europe/Berlin over a
///   year of minute samples from 10 gateways, through `PostgresQueryStore`; the baseline is the
///   hand-written `date_trunc('day', start_time, 'Europe/Berlin')` GROUP BY; medians of `repeats`
///   runs, interleaved; `stats.postgres_vs_sql` is ours / theirs (target ≤ 2). The answers are compared.
enum PostgresBench {
    static func note(_ message: String) {
        FileHandle.standardError.write(Data("# postgres: \(message)\n".utf8))
    }

    static func run(backlog: Int, statsSamples: Int, gateways: Int, repeats: Int, directory: String) throws {
        let out = FigurePrinter()
        guard LocalPostgres.binaryDirectory() != nil else {
            note("PostgreSQL server binaries are not installed (scripts/bootstrap-tests): skipped")
            return
        }
        let server = try LocalPostgres()
        defer { server.shutDown() }

        let storePath = directory + "/postgres-sink.sqlite"
        note("writing \(backlog) step samples (not timed)")
        try SinkBench.fill(storePath, count: backlog)
        let rate = try SinkBench.drain(storePath: storePath, name: "postgres", url: server.url(), count: backlog,
                                       batchSize: Int(ProcessInfo.processInfo.environment["PG_BATCH"] ?? "") ?? PostgresSinkOptions.defaultBatchSize)
        out.print("sink.postgres_samples_per_s", rate, "1/s", decimals: 0)

        let file = server.directory + "/rows.copy"
        try server.psql("COPY ingestd.samples TO '\(file)'")
        try server.psql("CREATE SCHEMA baseline; CREATE TABLE baseline.samples (LIKE ingestd.samples INCLUDING ALL)")
        note("COPY of the same \(backlog) rows from a file")
        let clock = ContinuousClock()
        let started = clock.now
        let copied = try server.psql("COPY baseline.samples FROM '\(file)'")
        let copySeconds = Measure.seconds(clock.now - started)
        guard try server.psql("SELECT count(*) FROM baseline.samples") == String(backlog) else {
            throw SinkBench.Failure("COPY loaded \(copied), not \(backlog) rows")
        }
        let copyRate = Double(backlog) / copySeconds
        out.print("sink.postgres_copy_samples_per_s", copyRate, "1/s", decimals: 0)
        out.print("sink.postgres_vs_copy", rate / copyRate, "x", decimals: 2)

        try statistics(server: server, samples: statsSamples, gateways: gateways, repeats: repeats, out: out)
    }

    static func statistics(server: LocalPostgres, samples: Int, gateways: Int, repeats: Int, out: FigurePrinter) throws {
        note("loading \(gateways) gateways × \(samples) minute step samples (not timed)")
        try server.psql("TRUNCATE ingestd.samples, ingestd.source_spans")
        let start = 1_672_527_600  // 2023-01-01T00:00:00+01:00
        try server.psql("""
            INSERT INTO ingestd.samples (uuid, gateway, person, type, value, unit, start_time, end_time, source, record, anchor,
                                         start_epoch, end_epoch)
            SELECT gen_random_uuid(), 'gateway-' || g, 'me', 'HKQuantityTypeIdentifierStepCount', 10 + (i % 90), 'count',
                   to_timestamp(\(start) + i * 60), to_timestamp(\(start) + i * 60 + 59), 'band', '{}'::jsonb, i + 1,
                   \(start) + i * 60, \(start) + i * 60 + 59
            FROM generate_series(1, \(gateways)) AS g, generate_series(0, \(samples - 1)) AS i
            """)
        try server.psql("""
            INSERT INTO ingestd.source_spans SELECT gateway, person, type, source, min(start_time), max(end_time)
            FROM ingestd.samples GROUP BY 1, 2, 3, 4 ON CONFLICT DO NOTHING
            """)
        try server.psql("VACUUM ANALYZE ingestd.samples")
        let zone = TimeZone(identifier: "Europe/Berlin") ?? .current
        let from = Date(timeIntervalSince1970: Double(start))
        let to = Date(timeIntervalSince1970: Double(start + 365 * 86_400))
        let store = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { store.close() }
        let handWritten = """
            SELECT date_trunc('day', start_time, 'Europe/Berlin') AS day, sum(value) FROM ingestd.samples
            WHERE type = 'HKQuantityTypeIdentifierStepCount' AND deleted_at IS NULL
              AND start_time >= to_timestamp(\(start)) AND start_time < to_timestamp(\(start + 365 * 86_400))
            GROUP BY 1 ORDER BY 1
            """
        var ours: [Double] = []
        var theirs: [Double] = []
        var ourTotal = 0.0
        var theirTotal = 0.0
        let clock = ContinuousClock()
        for run in 1...repeats {
            note("stats run \(run)/\(repeats)")
            var started = clock.now
            let buckets = try store.statistics(.sum, type: .stepCount, from: from, to: to, granularity: .day, zone: zone,
                                               scope: QueryScope())
            ours.append(Measure.seconds(clock.now - started))
            ourTotal = buckets.compactMap(\.value).reduce(0, +)
            started = clock.now
            let rows = try store.connection.execute(handWritten).rows
            theirs.append(Measure.seconds(clock.now - started))
            theirTotal = rows.compactMap { $0[1].flatMap(Double.init) }.reduce(0, +)
            guard buckets.count == 365, !rows.isEmpty else {
                throw SinkBench.Failure("expected 365 days, got \(buckets.count) and \(rows.count)")
            }
        }
        guard abs(ourTotal - theirTotal) <= 1e-6 * theirTotal else {
            throw SinkBench.Failure("the totals differ: \(ourTotal) and \(theirTotal)")
        }
        let ourMedian = Measure.median(ours)
        let theirMedian = Measure.median(theirs)
        out.print("stats.postgres_year_by_day_ms", ourMedian * 1000, "ms", decimals: 1)
        out.print("stats.postgres_handwritten_sql_ms", theirMedian * 1000, "ms", decimals: 1)
        out.print("stats.postgres_vs_sql", ourMedian / theirMedian, "x", decimals: 2)
    }
}
