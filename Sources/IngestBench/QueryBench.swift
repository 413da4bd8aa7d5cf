import CSQLite
import Foundation
import HealthModel
import SQLiteStore

/// `--only query`: `ingestd status` and `ingestd today` (of the store's last day) against a
/// store of `--query-samples` samples (default 10,000,000), wall and CPU time of the whole process (start included), median of the runs;
/// beside it, in the same runs, the scans `status` ran before schema 14 (its per source and type
/// `GROUP BY` and the unassigned count) through the `sqlite3` shell, its start included too.
/// The store is generated once (rows written by SQL, then counted as the schema-14 migration
/// counts an existing store's rows) and cached under `.build/ingestbench-cache/`.
enum QueryBench {
    /// Runs of the old scans beside `status` (the first ones of its runs).
    static let scanRuns = 3

    static func run(samples: Int, repeats: Int, directory: String) throws {
        let out = FigurePrinter()
        guard let ingestd = DaemonBench.ingestdBinary() else {
            log("query: no ingestd binary next to IngestBench; build it too (swift build -c release --product ingestd)")
            return
        }
        let path = try cachedStore(samples: samples, fallback: directory)
        let sqlite3 = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") ? "/usr/bin/sqlite3" : nil
        // A first run of each warms the page cache and checks the answer.
        let check = directory + "/query-status.json"
        defer { try? FileManager.default.removeItem(atPath: check) }
        let first = try CLIBench.run([ingestd, "status", "--json", "--store", path], stdoutPath: check)
        guard first.status == 0 else { throw BenchError("ingestd status exited \(first.status)") }
        let counted = try String(contentsOfFile: check, encoding: .utf8).split(separator: "\n").reduce(0) { total, line in
            guard let range = line.range(of: "\"count\":") else { return total }
            return total + (Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0)
        }
        guard counted == samples else { throw BenchError("ingestd status counted \(counted) samples of \(samples)") }
        var status: [CLIBench.ChildRun] = []
        var scans: [CLIBench.ChildRun] = []
        for run in 1...repeats {
            let ours = try CLIBench.run([ingestd, "status", "--store", path])
            guard ours.status == 0 else { throw BenchError("ingestd status exited \(ours.status)") }
            status.append(ours)
            // The old scans take seconds each at ten million samples: three of them, in the first runs.
            if let sqlite3, run <= Self.scanRuns { scans.append(try CLIBench.run([sqlite3, path, scanSQL])) }
            let scanned = run <= scans.count ? String(format: ", the old scans in sqlite3 %.1f ms", scans[run - 1].wall * 1000) : ""
            log(String(format: "query run %d/%d: status %.1f ms", run, repeats, ours.wall * 1000) + scanned)
        }
        // `today` of the store's last day (the samples end 15 s apart from 2020-09-13 on).
        let lastDay = Date(timeIntervalSince1970: 1_600_000_000 + Double(samples - 1) * 15)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = utc.dateComponents([.year, .month, .day], from: lastDay)
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        let todayArguments = [ingestd, "today", "--date", day, "--tz", "UTC", "--store", path]
        _ = try CLIBench.run(todayArguments)
        var today: [CLIBench.ChildRun] = []
        for _ in 1...repeats {
            let run = try CLIBench.run(todayArguments)
            guard run.status == 0 else { throw BenchError("ingestd today exited \(run.status)") }
            today.append(run)
        }
        let streamed = try jsonOutput(ingestd: ingestd, sqlite3: sqlite3, store: path, samples: samples,
                                      repeats: max(1, min(repeats, 3)), directory: directory)
        out.print("query.store_samples", Double(samples), "samples", decimals: 0)
        out.print("query.today_ms", Measure.median(today.map(\.wall)) * 1000, "ms", decimals: 1)
        out.print("query.today_cpu_ms", Measure.median(today.map(\.cpu)) * 1000, "ms", decimals: 1)
        out.print("query.status_ms", Measure.median(status.map(\.wall)) * 1000, "ms", decimals: 1)
        out.print("query.status_cpu_ms", Measure.median(status.map(\.cpu)) * 1000, "ms", decimals: 1)
        if !scans.isEmpty {
            out.print("query.status_scans_sqlite3_ms", Measure.median(scans.map(\.wall)) * 1000, "ms", decimals: 1)
        }
        for (name, figures) in streamed {
            out.print("query.\(name)_json_rows", Double(figures.rows), "rows", decimals: 0)
            out.print("query.\(name)_json_cpu_s", figures.ours, "s", decimals: 2)
            out.print("query.\(name)_json_sqlite3_cpu_s", figures.sqlite3, "s", decimals: 2)
            out.print("query.\(name)_json_vs_sqlite3", figures.sqlite3 / figures.ours, "x", decimals: 2)
            out.print("query.\(name)_json_peak_mb", figures.peakMegabytes, "MB", decimals: 1)
        }
    }

    /// One figure of `--only query`'s JSON output against the `sqlite3` shell: CPU time of each
    /// whole process (ours, then `-json` of `sql` selecting the same rows and the stored columns
    /// the lines carry, no formatting asked of SQLite), interleaved, medians; the first run checks
    /// that ours wrote `lines` lines and sqlite3 `rows` rows.
    private static func jsonArm(_ label: String, ours arguments: [String], writesTo outputPath: String?, lines: Int,
                                sqlite3: String, store: String, sql: String, rows: Int, repeats: Int,
                                directory: String) throws -> (rows: Int, ours: Double, sqlite3: Double, peakMegabytes: Double) {
        let oursPath = outputPath ?? directory + "/query-\(label).jsonl", theirsPath = directory + "/query-\(label)-sqlite3.json"
        defer {
            try? FileManager.default.removeItem(atPath: oursPath)
            try? FileManager.default.removeItem(atPath: theirsPath)
        }
        let theirs = [sqlite3, "-readonly", "-json", store, sql]
        var oursRuns: [CLIBench.ChildRun] = [], theirRuns: [CLIBench.ChildRun] = []
        for run in 1...repeats {
            let mine = try CLIBench.run(arguments, stdoutPath: outputPath == nil ? oursPath : "/dev/null")
            guard mine.status == 0 else { throw BenchError("ingestd \(label) exited \(mine.status)") }
            let shell = try CLIBench.run(theirs, stdoutPath: theirsPath)
            guard shell.status == 0 else { throw BenchError("sqlite3 -json exited \(shell.status)") }
            if run == 1 {
                let written = try lineCount(oursPath), objects = try lineCount(theirsPath)
                guard written == lines, objects == rows else {
                    throw BenchError("\(label): ingestd wrote \(written) lines (of \(lines)) and sqlite3 \(objects) rows (of \(rows))")
                }
            }
            oursRuns.append(mine)
            theirRuns.append(shell)
            log(String(format: "query %@ run %d/%d: %.2f s CPU against sqlite3 -json %.2f s, %.1f MB", label, run, repeats,
                       mine.cpu, shell.cpu, mine.peakMegabytes))
        }
        return (rows, Measure.median(oursRuns.map(\.cpu)), Measure.median(theirRuns.map(\.cpu)),
                oursRuns.map(\.peakMegabytes).max() ?? 0)
    }

    /// The stored columns a JSON line of a heart-rate sample carries, `ORDER BY order`, at most `limit` rows.
    private static func heartRateColumnsSQL(order: String, limit: Int?) -> String {
        """
        SELECT hex(x.uuid) AS uuid, t.identifier AS type, x.value AS value, x.start_time AS start, x.end_time AS "end",
        s.name AS source, d.name AS device, x.metadata AS metadata FROM samples x JOIN types t ON t.id = x.type
        JOIN sources s ON s.id = x.source LEFT JOIN devices d ON d.id = x.device
        WHERE t.identifier = '\(QuantityType.heartRate.identifier)' ORDER BY \(order)\(limit.map { " LIMIT \($0)" } ?? "");
        """
    }

    /// `samples heartRate --limit N --json` (N = a million, or a quarter of the store), `changes
    /// --since 0 --type heartRate --json` and `export --format jsonl --types heartRate` (the
    /// type's every sample: a quarter of the store), each against the `sqlite3` shell.
    private static func jsonOutput(ingestd: String, sqlite3: String?, store: String, samples: Int, repeats: Int,
                                   directory: String) throws -> [(name: String, figures: (rows: Int, ours: Double, sqlite3: Double, peakMegabytes: Double))] {
        guard let sqlite3, samples >= 4 else { return [] }
        let rows = min(samples / 4, 1_000_000)
        let everyHeartRate = samples / 4 + (samples % 4 > 1 ? 1 : 0)
        let count = try CLIBench.run([sqlite3, "-readonly", store,
                                      "SELECT count(*) FROM samples WHERE type = (SELECT id FROM types WHERE identifier = '\(QuantityType.heartRate.identifier)')"],
                                     stdoutPath: directory + "/query-count.txt")
        let counted = count.status == 0
            ? Int((try? String(contentsOfFile: directory + "/query-count.txt", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? everyHeartRate
            : everyHeartRate
        try? FileManager.default.removeItem(atPath: directory + "/query-count.txt")
        let export = directory + "/query-export.jsonl"
        return [
            ("samples", try jsonArm("samples", ours: [ingestd, "samples", "heartRate", "--limit", String(rows), "--json", "--store", store],
                                    writesTo: nil, lines: rows, sqlite3: sqlite3, store: store,
                                    sql: heartRateColumnsSQL(order: "x.start_time, x.end_time, x.id", limit: rows), rows: rows,
                                    repeats: repeats, directory: directory)),
            // changes ends with its anchor line.
            ("changes", try jsonArm("changes", ours: [ingestd, "changes", "--since", "0", "--type", "heartRate", "--json", "--store", store],
                                    writesTo: nil, lines: counted + 1, sqlite3: sqlite3, store: store,
                                    sql: heartRateColumnsSQL(order: "x.id", limit: nil), rows: counted,
                                    repeats: repeats, directory: directory)),
            ("export_jsonl", try jsonArm("export", ours: [ingestd, "export", "--format", "jsonl", "--types", "heartRate", "--out", export, "--store", store],
                                         writesTo: export, lines: counted, sqlite3: sqlite3, store: store,
                                         sql: heartRateColumnsSQL(order: "x.start_time, x.id", limit: nil), rows: counted,
                                         repeats: repeats, directory: directory)),
        ]
    }

    /// Newline-terminated lines of a file, read in chunks.
    private static func lineCount(_ path: String) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchError("cannot read \(path)") }
        defer { try? handle.close() }
        var count = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            count += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        }
        return count
    }

    /// What `status` scanned before schema 14.
    static let scanSQL = """
        SELECT s.name, t.identifier, COUNT(*), MAX(x.end_time) FROM samples x
        JOIN sources s ON s.id = x.source JOIN types t ON t.id = x.type
        GROUP BY x.source, x.type ORDER BY s.name, t.identifier;
        SELECT COUNT(*) FROM samples WHERE person IS NULL;
        """

    /// `.build/ingestbench-cache/query-N.sqlite` (beside this executable's build folder, else in
    /// `fallback`), made when missing: four types from three sources, two devices, one sample
    /// every 15 s (ten million span 4.8 years), time-ordered uuids as the store's generator makes.
    static func cachedStore(samples: Int, fallback: String) throws -> String {
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let folder = own.range(of: "/.build/").map { String(own[..<$0.upperBound]) + "ingestbench-cache" } ?? fallback
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/query-\(samples).sqlite"
        if FileManager.default.fileExists(atPath: path) {
            // Opening migrates a store cached by an older build (the counts are built from its rows).
            try HealthStore(path: path).close()
            log("query: the cached store \(path)")
            return path
        }
        let partial = path + ".partial"
        removeDatabase(partial)
        try HealthStore(path: partial).close()
        log("query: generating \(samples) samples into \(path) (once; not timed)")
        try generate(samples: samples, into: partial)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: partial + suffix) }
        try FileManager.default.moveItem(atPath: partial, toPath: path)
        return path
    }

    private static func generate(samples: Int, into path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("query: cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw BenchError("query: \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        let types = [QuantityType.stepCount, .heartRate, .activeEnergyBurned, .distanceWalkingRunning]
        try exec("PRAGMA synchronous = OFF")
        try exec("""
            INSERT INTO types(id, identifier) VALUES \(types.enumerated().map { "(\($0.offset + 1), '\($0.element.identifier)')" }
                .joined(separator: ", "));
            INSERT INTO sources(id, name, created_at) VALUES (1, 'band', 0), (2, 'phone', 0), (3, 'strap', 0);
            INSERT INTO devices(id, name, identity) VALUES (1, 'Band', '{"name":"Band"}'), (2, 'Strap', '{"name":"Strap"}');
            """)
        let chunk = 1_000_000
        var done = 0
        while done < samples {
            let count = min(chunk, samples - done)
            try exec("""
                BEGIN IMMEDIATE;
                WITH RECURSIVE n(i) AS (SELECT \(done) UNION ALL SELECT i + 1 FROM n WHERE i < \(done + count - 1))
                INSERT INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id, person)
                SELECT CAST(printf('%016x', i) AS BLOB), 1 + i % 4, i % 100, 1600000000.0 + i * 15, 1600000000.0 + i * 15 + 15,
                       1 + i % 3, CASE i % 3 WHEN 0 THEN 1 WHEN 2 THEN 2 END, '', 1 FROM n;
                COMMIT;
                """)
            done += count
            log("query: \(done) samples")
        }
        // Rows inserted by SQL are not counted (the store's own inserts count themselves): the
        // counts are built from the rows as the schema-14 migration builds them.
        try exec("""
            DELETE FROM sample_counts;
            INSERT INTO sample_counts(source, type, person, device, count, last_end, last_exact, longest)
                SELECT source, type, COALESCE(person, 0), COALESCE(device, 0), COUNT(*), MAX(end_time), 1,
                       MAX(end_time - start_time)
                FROM samples GROUP BY 1, 2, 3, 4;
            """)
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
