import Foundation
import HealthModel
import SQLiteStore

/// What users run, measured on the release `ingestd` next to IngestBench as child processes:
///
/// - `cli.decode_json_reports_per_s`: `ingestd decode CAPTURE --json > /dev/null` on the capture
///   benchmark's mixed advertising capture (300,000 reports), reports per second of the child's
///   CPU time (user + system); `cli.decode_text_reports_per_s` the same printing text.
/// - `cli.decode_json_samples_per_s`: `ingestd decode CAPTURE --json > FILE` on a capture of Mi
///   Smart Scale broadcasts from 10 scales in which every report is a new weighing (150,000
///   reports), samples printed per second of the child's CPU time (user + system); the printed
///   lines are counted and must be one per report. `cli.decode_json_samples_per_s_65536` the same
///   from 65,536 scales (each device's state made, matched and forgotten as the router's bound of
///   devices passes). `cli.decode_json_peak_rss_mb` / `_4x` / `_65536`: the child's peak resident
///   set on the 10-scale capture, on one four times its size, and on the 65,536-scale capture.
/// - `cli.replay_jsonl_vs_raw_insert`: `ingestd replay` of 200,000 generated JSON sample lines
///   (the ingest benchmark's stream, sources granted beforehand) against the sqlite3 C API
///   inserting the same rows into the same schema in this process (one transaction per 1,000
///   rows, as replay's batches); wall time of both, the child's including its start.
///   `cli.replay_jsonl_cpu_vs_raw_insert`: the same in CPU time, user + system of every thread:
///   the child's rusage (its decoding thread included) against this process's rusage across
///   the raw insert. `--repeats` runs of both in turn, each into new files; medians.
///   `INGESTBENCH_KEEP_REPLAY_INPUT=DIR` copies the lines and the granted empty store into DIR
///   (to profile the replay alone).
/// - `import.records_per_s` / `import.peak_rss_mb`: `ingestd import export.zip --grant` on an
///   export written by `../shared/tools/gen_apple_health_export.py -n 200000` (the child's wall
///   time and its peak resident set, VmHWM read while it runs); `import_1m.*` the same for 1,000,000 records.
///   `import.raw_insert_rows_per_s`: the rows that import stored, inserted again through the
///   sqlite3 C API alone into a new store of the same schema (2,000 rows per transaction, as the
///   import's batches) — the ceiling of any import into this store; `import.vs_raw_insert` the
///   import's wall time against it (`import.cpu_vs_raw_insert` the same in CPU time, every thread
///   of both sides). The import and the raw insert run `--repeats` times (the raw insert into
///   the emptied table); medians.
/// - `import.vs_healthkit_to_sqlite` (with `--healthkit-to-sqlite PATH`): healthkit-to-sqlite
///   importing the same export.zip into a new database, its wall time against the import's (the
///   issue's target is 30).
struct CLIBench {
    var directory: String
    var ingestd: String
    var generator: String
    var healthkitToSQLite: String?
    let out = FigurePrinter()

    /// A finished child: wall seconds, CPU seconds, peak resident set in MB, exit status.
    struct ChildRun {
        var wall: Double
        var cpu: Double { user + system }
        var user: Double
        var system: Double
        var peakMegabytes: Double
        var status: Int32
    }

    /// Runs `arguments[0]` with its stdout to `stdoutPath` (or /dev/null), stderr to /dev/null,
    /// until it exits.
    static func run(_ arguments: [String], stdoutPath: String = "/dev/null") throws -> ChildRun {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let started = ContinuousClock.now
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw BenchError("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        var usage = rusage()
        // The child's own peak resident set is read from /proc while it runs (every 5 ms; it
        // only grows): wait4's ru_maxrss is not the child's alone, since the kernel counts the
        // spawning process's resident set (posix_spawn shares its memory until exec) into it,
        // which after the bench's own large arms is the larger figure.
        var peakKilobytes = 0.0
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            guard reaped == 0 || errno == EINTR else { throw BenchError("wait4: \(String(cString: strerror(errno)))") }
            peakKilobytes = max(peakKilobytes, DaemonBench.Proc.statusKilobytes(pid: pid, "VmHWM") ?? 0)
            usleep(5_000)
        }
        let wall = Measure.seconds(ContinuousClock.now - started)
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return ChildRun(wall: wall, user: Measure.seconds(usage.ru_utime), system: Measure.seconds(usage.ru_stime), peakMegabytes: peakKilobytes / 1024, status: exitStatus)
    }


    func decodeJSON(reports: Int) throws {
        let capture = directory + "/cli-capture.btsnoop"
        defer { try? FileManager.default.removeItem(atPath: capture) }
        log("cli: writing a \(reports)-report capture")
        try CaptureDecodeBench(reports: reports, repeats: 1).writeCapture(to: capture)
        let json = try Self.run([ingestd, "decode", capture, "--json"])
        let text = try Self.run([ingestd, "decode", capture])
        guard json.status == 0, text.status == 0 else { throw BenchError("ingestd decode exited \(json.status)/\(text.status)") }
        log(String(format: "cli: decode --json %.2f s CPU (%.2f s wall), text %.2f s CPU", json.cpu, json.wall, text.cpu))
        out.print("cli.decode_json_reports_per_s", Double(reports) / json.cpu, "1/s", decimals: 0)
        out.print("cli.decode_text_reports_per_s", Double(reports) / text.cpu, "1/s", decimals: 0)
    }

    /// `decode --json` on Mi scale captures where every report is a new reading (see the type's comment).
    func decodeJSONSamples(reports: Int) throws {
        struct Arm {
            var devices: Int
            var reports: Int
        }
        let arms = [Arm(devices: 10, reports: reports), Arm(devices: 65_536, reports: reports),
                    Arm(devices: 10, reports: 4 * reports)]
        var results: [ChildRun] = []
        for arm in arms {
            let capture = directory + "/cli-mi-scales.btsnoop"
            let printed = directory + "/cli-mi-scales.jsonl"
            defer {
                try? FileManager.default.removeItem(atPath: capture)
                try? FileManager.default.removeItem(atPath: printed)
            }
            log("cli: writing a \(arm.reports)-report capture of \(arm.devices) Mi scales, every report a new weighing")
            try CaptureDecodeBench(reports: arm.reports, repeats: 1, devicesPerKind: arm.devices, repeatsPerReading: 1,
                                   miScaleOnly: true).writeCapture(to: capture)
            let run = try Self.run([ingestd, "decode", capture, "--json"], stdoutPath: printed)
            guard run.status == 0 else { throw BenchError("ingestd decode --json exited \(run.status)") }
            let lines = try Self.countLines(path: printed)
            guard lines == arm.reports else {
                throw BenchError("decode --json printed \(lines) samples for \(arm.reports) reports of \(arm.devices) scales")
            }
            log(String(format: "cli: decode --json of %d reports from %d scales: %d samples, %.2f s CPU (%.2f s wall), %.0f samples/s CPU, peak RSS %.1f MB",
                       arm.reports, arm.devices, lines, run.cpu, run.wall, Double(lines) / run.cpu, run.peakMegabytes))
            results.append(run)
        }
        out.print("cli.decode_json_samples_per_s", Double(arms[0].reports) / results[0].cpu, "1/s", decimals: 0)
        out.print("cli.decode_json_samples_per_s_65536", Double(arms[1].reports) / results[1].cpu, "1/s", decimals: 0)
        out.print("cli.decode_json_peak_rss_mb", results[0].peakMegabytes, "MB", decimals: 1)
        out.print("cli.decode_json_peak_rss_mb_4x", results[2].peakMegabytes, "MB", decimals: 1)
        out.print("cli.decode_json_peak_rss_mb_65536", results[1].peakMegabytes, "MB", decimals: 1)
    }

    /// The newline bytes in a file, read in blocks.
    static func countLines(path: String) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchError("cannot read \(path)") }
        defer { try? handle.close() }
        var lines = 0
        while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
            lines += block.withUnsafeBytes { bytes in bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } }
        }
        return lines
    }

    func replayJSONLines(samples: Int, runs: Int) throws {
        let lines = directory + "/cli-replay.jsonl"
        let store = directory + "/cli-replay.sqlite"
        let raw = directory + "/cli-raw.sqlite"
        defer {
            for path in [lines, store, raw] {
                for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        }
        var generator = SampleGenerator()
        let encoder = HealthRecordEncoder()
        var text = ""
        var records: [HealthRecord] = []
        records.reserveCapacity(samples)
        while records.count < samples { records += generator.nextBatch(min(10_000, samples - records.count)) }
        for record in records {
            encoder.append(record, to: &text)
            text += "\n"
        }
        try text.write(toFile: lines, atomically: false, encoding: .utf8)
        text = ""
        // Runs in turn (replay, then the raw insert), each into fresh files; medians.
        var replays: [ChildRun] = []
        var raws: [(wall: Double, user: Double, system: Double)] = []
        for run in 1...max(1, runs) {
            for path in [store, raw] {
                for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            let granting = try HealthStore(path: store)
            for source in SampleGenerator.sources { try granting.grant(source: source.name, types: [], all: true) }
            granting.close()
            if run == 1, let keep = ProcessInfo.processInfo.environment["INGESTBENCH_KEEP_REPLAY_INPUT"] {
                // For profiling the replay alone: its lines and the granted, still empty store.
                for (from, to) in [(lines, "/cli-replay.jsonl"), (store, "/cli-replay-granted.sqlite")] {
                    try? FileManager.default.removeItem(atPath: keep + to)
                    try FileManager.default.copyItem(atPath: from, toPath: keep + to)
                }
            }
            sync()  // the lines' writeback would otherwise compete with the replay's fsyncs
            log("cli: replaying \(samples) JSON lines (run \(run) of \(max(1, runs)))")
            let replay = try Self.run([ingestd, "replay", lines, "--store", store])
            guard replay.status == 0 else { throw BenchError("ingestd replay exited \(replay.status)") }
            try HealthStore(path: raw).close()
            let rawRun = try {
                let inserter = try RawInserter(path: raw)
                let rows = try records.map { record -> RawSampleRow in
                    guard case .sample(let sample) = record else { throw BenchError("not a sample") }
                    return try inserter.row(for: sample)
                }
                return try inserter.timedInsert(rows, perTransaction: 1_000)
            }()
            log(String(format: "cli: replay %.2f s wall, %.2f s CPU (user %.2f, system %.2f); "
                           + "raw insert %.2f s wall, %.2f s CPU (user %.2f, system %.2f)",
                       replay.wall, replay.cpu, replay.user, replay.system,
                       rawRun.wall, rawRun.user + rawRun.system, rawRun.user, rawRun.system))
            replays.append(replay)
            raws.append(rawRun)
        }
        let replayWall = Measure.median(replays.map(\.wall))
        let replayCPU = Measure.median(replays.map(\.cpu))
        let rawWall = Measure.median(raws.map(\.wall))
        let rawCPU = Measure.median(raws.map { $0.user + $0.system })
        out.print("cli.replay_lines_per_s", Double(samples) / replayWall, "1/s", decimals: 0)
        out.print("cli.replay_jsonl_vs_raw_insert", rawWall / replayWall, "ratio", decimals: 2)
        out.print("cli.replay_cpu_s", replayCPU, "s", decimals: 2)
        out.print("cli.raw_insert_cpu_s", rawCPU, "s", decimals: 2)
        out.print("cli.replay_jsonl_cpu_vs_raw_insert", rawCPU / replayCPU, "ratio", decimals: 2)
    }

    func importExport(records: Int, prefix: String, runs: Int = 1) throws {
        let exportDirectory = directory + "/export-\(records)"
        let store = directory + "/import-\(records).sqlite"
        defer {
            try? FileManager.default.removeItem(atPath: exportDirectory)
            for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        }
        log("import: generating a \(records)-record export")
        let generated = try Self.run(["/usr/bin/env", "python3", generator, "-n", "\(records)", "-o", exportDirectory])
        guard generated.status == 0 else { throw BenchError("\(generator) exited \(generated.status)") }
        // The export's writeback (hundreds of MB) would otherwise compete with the import's fsyncs.
        sync()
        // The 200,000-record import runs `runs` times, each into a new store (the last one kept
        // for the raw insert's rows): the run of median wall time is reported.
        var imports: [ChildRun] = []
        for _ in 1...(prefix == "import" ? max(1, runs) : 1) {
            for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: store + suffix) }
            let run = try Self.run([ingestd, "import", exportDirectory + "/export.zip", "--grant", "--store", store])
            guard run.status == 0 else { throw BenchError("ingestd import exited \(run.status)") }
            log(String(format: "import: %d records in %.2f s wall (%.2f s CPU: user %.2f, system %.2f), peak RSS %.1f MB",
                       records, run.wall, run.cpu, run.user, run.system, run.peakMegabytes))
            imports.append(run)
        }
        let imported = imports.sorted { $0.wall < $1.wall }[imports.count / 2]
        out.print("\(prefix).records_per_s", Double(records) / imported.wall, "1/s", decimals: 0)
        out.print("\(prefix).peak_rss_mb", imported.peakMegabytes, "MB", decimals: 1)
        guard prefix == "import" else { return }
        if let healthkitToSQLite {
            let database = directory + "/healthkit-to-sqlite.db"
            defer { try? FileManager.default.removeItem(atPath: database) }
            let baseline = try Self.run([healthkitToSQLite, exportDirectory + "/export.zip", database])
            guard baseline.status == 0 else { throw BenchError("\(healthkitToSQLite) exited \(baseline.status)") }
            log(String(format: "import: healthkit-to-sqlite %.2f s wall (%.2f s CPU), peak RSS %.1f MB",
                       baseline.wall, baseline.cpu, baseline.peakMegabytes))
            out.print("import.healthkit_to_sqlite_records_per_s", Double(records) / baseline.wall, "1/s", decimals: 0)
            out.print("import.vs_healthkit_to_sqlite", baseline.wall / imported.wall, "ratio", decimals: 1)
        }
        // The ceiling: the rows the import stored, inserted again through the sqlite3 C API alone
        // into a new store of the same schema, in the import's transactions of 2,000 rows.
        let raw = directory + "/import-raw.sqlite"
        defer { for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: raw + suffix) } }
        try HealthStore(path: raw).close()
        let inserter = try RawInserter(path: raw)
        let rows = try inserter.rowsCopied(fromStore: store)
        var rawRuns: [(wall: Double, user: Double, system: Double)] = []
        for run in 1...max(1, runs) {
            if run > 1 { try inserter.deleteSamples() }
            let rawRun = try inserter.timedInsert(rows, perTransaction: 2_000)
            log(String(format: "import: the same %d rows through the sqlite3 C API: %.2f s wall, %.2f s CPU (user %.2f, system %.2f)",
                       rows.count, rawRun.wall, rawRun.user + rawRun.system, rawRun.user, rawRun.system))
            rawRuns.append(rawRun)
        }
        let rawSeconds = Measure.median(rawRuns.map(\.wall))
        let rawCPU = Measure.median(rawRuns.map { $0.user + $0.system })
        out.print("import.raw_insert_rows_per_s", Double(rows.count) / rawSeconds, "1/s", decimals: 0)
        out.print("import.vs_raw_insert", rawSeconds / imported.wall, "ratio", decimals: 2)
        out.print("import.cpu_vs_raw_insert", rawCPU / Measure.median(imports.map(\.cpu)), "ratio", decimals: 2)
    }
}

/// The `cli` and `import` parts of IngestBench (see `CLIBench`).
func cliBenchmarks(_ options: BenchOptions, directory: String, parts: Set<String>) throws {
    guard let ingestd = DaemonBench.ingestdBinary() else {
        log("cli/import: no ingestd binary next to IngestBench; build it too (swift build -c release --product ingestd)")
        return
    }
    let bench = CLIBench(directory: directory, ingestd: ingestd, generator: options.exportGenerator,
                         healthkitToSQLite: options.healthkitToSQLite)
    if parts.contains("cli") {
        try bench.decodeJSON(reports: options.samples >= 1_000_000 ? 300_000 : 30_000)
        try bench.decodeJSONSamples(reports: options.samples >= 1_000_000 ? 150_000 : 15_000)
        try bench.replayJSONLines(samples: options.samples >= 1_000_000 ? 200_000 : 20_000, runs: options.repeats)
    }
    if parts.contains("import") {
        guard FileManager.default.fileExists(atPath: options.exportGenerator) else {
            log("import: no export generator at \(options.exportGenerator) (--export-generator PATH)")
            return
        }
        try bench.importExport(records: options.samples >= 1_000_000 ? 200_000 : 20_000, prefix: "import", runs: options.repeats)
        if options.samples >= 1_000_000 { try bench.importExport(records: 1_000_000, prefix: "import_1m") }
    }
}
