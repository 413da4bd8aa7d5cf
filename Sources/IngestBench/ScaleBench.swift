import CSQLite
import Foundation
import HealthModel
import SQLiteStore

/// `--only scale`: the store that holds years of a household's data (the `--query-samples`
/// store, ten million samples by default, cached as the query part caches it) against an empty
/// one.
/// - `scale.ingest_10m_vs_empty`: the pipeline's samples per second into a copy of that store
///   against a fresh empty store, the same generated batches fed to both in turn (the order
///   alternating per batch, so both see the same load), wall and CPU time of the ingest calls,
///   medians over `repeats` runs; both must store the same counts.
/// - `scale.stats_year_by_day_ms`: `ingestd stats stepCount --sum --by day` over the store's
///   last full year (525,600 minute samples of steps), the whole process, start included, median
///   of `repeats` runs after a warm-up; its CPU time beside it.
/// - `scale.store_bytes_per_sample`: the store's pages in use over its samples (a migration
///   that dropped an index leaves its pages free in the file, for the next writes).
enum ScaleBench {
    static func run(querySamples: Int, samples: Int, batchSize: Int, repeats: Int, directory: String) throws {
        let out = FigurePrinter()
        let cached = try QueryBench.cachedStore(samples: querySamples, fallback: directory)
        let pages = try pagesInUse(path: cached)
        log(String(format: "scale: the store's file %.1f MB, %.1f MB of it free pages", pages.file / 1e6, pages.free / 1e6))
        out.print("scale.store_samples", Double(querySamples), "samples", decimals: 0)
        out.print("scale.store_bytes_per_sample", (pages.file - pages.free) / Double(max(querySamples, 1)), "B", decimals: 1)

        var fullRates: [Double] = [], emptyRates: [Double] = []
        var fullCPURates: [Double] = [], emptyCPURates: [Double] = []
        for run in 1...repeats {
            let copy = directory + "/scale-full-\(run).sqlite"
            removeDatabase(copy)
            log("scale run \(run)/\(repeats): copying the \(querySamples)-sample store (not timed)")
            try FileManager.default.copyItem(atPath: cached, toPath: copy)
            let full = try PipelineArm(path: copy, keepingItsSamples: true)
            let empty = try PipelineArm(path: directory + "/scale-empty-\(run).sqlite")
            defer {
                full.remove()
                empty.remove()
            }
            var generator = SampleGenerator()
            try feedInTurn(&generator, samples: samples, batchSize: batchSize, full.ingest, empty.ingest)
            let written = samples - generator.duplicates
            try full.check(written: written, duplicates: generator.duplicates)
            try empty.check(written: written, duplicates: generator.duplicates)
            fullRates.append(Double(samples) / Measure.seconds(full.elapsed))
            emptyRates.append(Double(samples) / Measure.seconds(empty.elapsed))
            fullCPURates.append(Double(samples) / full.cpuSeconds)
            emptyCPURates.append(Double(samples) / empty.cpuSeconds)
            log(String(format: "  into the full store %.0f/s (CPU %.0f/s), into an empty one %.0f/s (CPU %.0f/s)",
                       fullRates.last ?? 0, fullCPURates.last ?? 0, emptyRates.last ?? 0, emptyCPURates.last ?? 0))
        }
        out.print("scale.ingest_10m_samples_per_s", Measure.median(fullRates), "1/s", decimals: 0)
        out.print("scale.ingest_empty_samples_per_s", Measure.median(emptyRates), "1/s", decimals: 0)
        out.print("scale.ingest_10m_vs_empty", Measure.median(fullRates) / Measure.median(emptyRates), "ratio", decimals: 2)
        out.print("scale.ingest_10m_vs_empty_cpu", Measure.median(fullCPURates) / Measure.median(emptyCPURates), "ratio", decimals: 2)

        guard let ingestd = DaemonBench.ingestdBinary() else {
            log("scale: no ingestd binary next to IngestBench; build it too (swift build -c release --product ingestd)")
            return
        }
        // The last full calendar year (UTC) the store's minute steps cover (one sample every 15 s from
        // 2020-09-13 on, every fourth a step count).
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? .current
        let lastYear = utc.component(.year, from: Date(timeIntervalSince1970: 1_600_000_000 + Double(querySamples) * 15)) - 1
        guard lastYear >= 2021 else {
            log("scale: the store covers no full year (--query-samples \(querySamples)); stats not measured")
            return
        }
        let arguments = [ingestd, "stats", "stepCount", "--sum", "--by", "day", "--from", "\(lastYear)-01-01",
                         "--to", "\(lastYear + 1)-01-01", "--tz", "UTC", "--json", "--store", cached]
        let answer = directory + "/scale-stats.jsonl"
        defer { try? FileManager.default.removeItem(atPath: answer) }
        let first = try CLIBench.run(arguments, stdoutPath: answer)
        let days = try String(contentsOfFile: answer, encoding: .utf8).split(separator: "\n").count
        guard first.status == 0, days >= 365 else { throw BenchError("ingestd stats exited \(first.status) with \(days) days") }
        var runs: [CLIBench.ChildRun] = []
        for _ in 1...max(repeats, 5) {
            let run = try CLIBench.run(arguments)
            guard run.status == 0 else { throw BenchError("ingestd stats exited \(run.status)") }
            runs.append(run)
        }
        log(String(format: "scale: stats of %d by day over %d days: %@ ms", lastYear, days,
                   runs.map { String(format: "%.0f", $0.wall * 1000) }.joined(separator: ", ")))
        out.print("scale.stats_year_by_day_ms", Measure.median(runs.map(\.wall)) * 1000, "ms", decimals: 1)
        out.print("scale.stats_year_by_day_cpu_ms", Measure.median(runs.map(\.cpu)) * 1000, "ms", decimals: 1)
    }

    /// The bytes of the store file at `path` and of its free pages (`PRAGMA page_count`,
    /// `freelist_count`, `page_size`).
    static func pagesInUse(path: String) throws -> (file: Double, free: Double) {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("scale: cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        let sql = "SELECT page_count * page_size, freelist_count * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()"
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, sqlite3_step(statement) == SQLITE_ROW else {
            throw BenchError("scale: the page counts: \(String(cString: sqlite3_errmsg(db)))")
        }
        return (sqlite3_column_double(statement, 0), sqlite3_column_double(statement, 1))
    }
}
