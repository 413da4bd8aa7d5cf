import Foundation

// IngestBench: ingest throughput and statistics latency of ingestd's store against raw sqlite3.
// Build and run in release: `swift run -c release IngestBench [--quick] [--samples N] …`.
// Prints one `<name> <value> <unit>` line per figure on stdout; progress and errors go to stderr.

/// Command-line settings of the benchmark.
struct BenchOptions {
    var samples = 1_000_000
    var statsSamples = 525_600
    var batchSize = 5000
    var repeats = 3
    var statsRepeats = 5
    var directory: String?
    /// Runs only some parts (for profiling): `pipeline`, `raw`, `ingest` (both), `stats`, `capture`,
    /// `cli`, `import`, `daemon`, `daemon-idle` (the idle figures alone), `sink` or `postgres`.
    var only: String?
    /// The Apple Health export generator the `import` part runs (python3).
    var exportGenerator = "../shared/tools/gen_apple_health_export.py"
    /// healthkit-to-sqlite (PyPI), run on the same export as the import's baseline when given.
    var healthkitToSQLite: String?
    /// Samples of the delivery backlog (MQTT and HTTP) and of the daemon's drain (and of the PostgreSQL sink's backlog).
    var sinkBacklog = 100_000
    var sinkDrain = 1_000_000
    /// Samples of the store `ingestd status` answers from (the `query` part; cached under `.build/`).
    var querySamples = 10_000_000
    /// Runs of `ingestd status` (and of the old scans beside it); the median is reported.
    var queryRepeats = 11

    static let usage = """
        usage: IngestBench [--quick] [--samples N] [--stats-samples N] [--batch N] [--repeats N]
                           [--stats-repeats N] [--dir PATH]
          --samples N        samples through the pipeline and the raw baseline (default 1000000)
          --stats-samples N  one-minute step samples for the statistics part (default 525600, a year)
          --batch N          records per ingest call / transaction (default 5000)
          --repeats N        ingest runs (both arms interleaved by batch); medians are reported (default 3)
          --stats-repeats N  runs of each statistics arm; the median is reported (default 5)
          --query-samples N  samples of the store the query part asks (default 10000000; generated
                             once into .build/ingestbench-cache/)
          --dir PATH         where the temporary databases go (default: a new folder in $TMPDIR)
          --only PART        run only pipeline, raw, ingest, stats, capture, cli, import, daemon, daemon-idle, sink, postgres, serve, query or scale
          --export-generator PATH  the Apple Health export generator for the import part
                             (default ../shared/tools/gen_apple_health_export.py)
          --healthkit-to-sqlite PATH  also import the 200,000-record export with healthkit-to-sqlite
                             (pip install healthkit-to-sqlite) and print the ratio against it
          --quick            a fast smoke run: 50000 samples, 52560 step samples, 1 and 3 runs,
                             sinks 10000 backlog and 50000 drained
        The pipeline first runs once alone; the peak resident set (VmHWM) is read right after it.
        """

    init(arguments: [String]) throws {
        var index = 0
        func number(_ name: String) throws -> Int {
            index += 1
            guard index < arguments.count, let value = Int(arguments[index]), value > 0 else {
                throw BenchError("\(name) needs a positive integer\n\(Self.usage)")
            }
            return value
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--samples": samples = try number("--samples")
            case "--stats-samples": statsSamples = try number("--stats-samples")
            case "--batch": batchSize = try number("--batch")
            case "--repeats": repeats = try number("--repeats")
            case "--stats-repeats": statsRepeats = try number("--stats-repeats")
            case "--query-samples": querySamples = try number("--query-samples")
            case "--dir":
                index += 1
                guard index < arguments.count else { throw BenchError("--dir needs a path\n\(Self.usage)") }
                directory = arguments[index]
            case "--only":
                index += 1
                guard index < arguments.count,
                    ["pipeline", "raw", "ingest", "stats", "capture", "cli", "import", "daemon", "daemon-idle", "sink", "postgres", "serve", "query", "scale"].contains(arguments[index])
                else {
                    throw BenchError("--only needs pipeline, raw, ingest, stats, capture, cli, import, daemon, daemon-idle, sink, postgres, serve, query or scale\n\(Self.usage)")
                }
                only = arguments[index]
            case "--export-generator":
                index += 1
                guard index < arguments.count else { throw BenchError("--export-generator needs a path\n\(Self.usage)") }
                exportGenerator = arguments[index]
            case "--healthkit-to-sqlite":
                index += 1
                guard index < arguments.count else { throw BenchError("--healthkit-to-sqlite needs a path\n\(Self.usage)") }
                healthkitToSQLite = arguments[index]
            case "--quick":
                samples = 50_000
                statsSamples = 52_560
                repeats = 1
                statsRepeats = 3
                sinkBacklog = 10_000
                sinkDrain = 50_000
                querySamples = 100_000
                queryRepeats = 3
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default:
                throw BenchError("unknown argument \(arguments[index])\n\(Self.usage)")
            }
            index += 1
        }
        guard statsSamples <= 525_600 else { throw BenchError("--stats-samples: at most 525600 (one year of minutes)") }
    }
}

func log(_ message: String) {
    FileHandle.standardError.write(Data(("# " + message + "\n").utf8))
}

func runBenchmark(_ options: BenchOptions) throws {
    let directory = options.directory
        ?? (NSTemporaryDirectory() + "/ingestbench-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { if options.directory == nil { try? FileManager.default.removeItem(atPath: directory) } }

    let runsPipeline = options.only == nil || options.only == "pipeline" || options.only == "ingest"
    let runsRaw = options.only == nil || options.only == "raw" || options.only == "ingest"
    if runsPipeline || runsRaw { try runIngest(options, directory: directory, pipeline: runsPipeline, raw: runsRaw) }
    if options.only == nil || options.only == "stats" { try runStats(options, directory: directory) }
    if options.only == nil || options.only == "capture" {
        captureDecodeBenchmark(reports: options.samples >= 1_000_000 ? 1_000_000 : 100_000,
                               repeats: options.repeats)
        mibeaconDecryptBenchmark(frames: options.samples >= 1_000_000 ? 200_000 : 50_000, repeats: options.repeats)
    }
    if options.only == nil || options.only == "cli" || options.only == "import" {
        try cliBenchmarks(options, directory: directory, parts: options.only.map { [$0] } ?? ["cli", "import"])
    }
    if options.only == nil || options.only == "sink" {
        do {
            try SinkBench.run(backlog: options.sinkBacklog, drainSamples: options.sinkDrain, directory: directory)
        } catch {
            SinkBench.note("delivery benchmarks failed: \(error)")
        }
    }
    if options.only == nil || options.only == "serve" {
        try ServeBench.run(directory: directory, minutes: options.statsSamples)
    }
    if options.only == nil || options.only == "query" {
        try QueryBench.run(samples: options.querySamples, repeats: options.queryRepeats, directory: directory)
    }
    if options.only == nil || options.only == "scale" {
        try ScaleBench.run(querySamples: options.querySamples, samples: min(options.samples, 200_000),
                           batchSize: options.batchSize, repeats: max(1, min(options.repeats, 3)), directory: directory)
    }
    if options.only == nil || options.only == "postgres" {
        do {
            try PostgresBench.run(backlog: options.sinkDrain, statsSamples: options.statsSamples, gateways: 10,
                                  repeats: options.statsRepeats, directory: directory)
        } catch {
            PostgresBench.note("PostgreSQL benchmarks failed: \(error)")
        }
    }
}

func runIngest(_ options: BenchOptions, directory: String, pipeline runsPipeline: Bool, raw runsRaw: Bool) throws {
    let out = FigurePrinter()
    let ingest = IngestBenchmark(samples: options.samples, batchSize: options.batchSize, directory: directory)
    var arms: IngestBenchmark.Arms = []
    if runsPipeline { arms.insert(.pipeline) }
    if runsRaw { arms.insert(.raw) }
    var peakMegabytes: Double?
    if runsPipeline {
        // The pipeline alone first: VmHWM right after it is the pipeline's peak resident set.
        log("ingest: pipeline alone, \(options.samples) samples (for the peak resident set)")
        let alone = try ingest.run(.pipeline, run: 0)
        peakMegabytes = Measure.procStatusKilobytes("VmHWM").map { Double($0) / 1024 }
        log(String(format: "  pipeline %.0f/s, VmHWM %.0f MB", alone.pipelineRate ?? 0, peakMegabytes ?? 0))
    }
    var pipelineRates: [Double] = []
    var rawRates: [Double] = []
    // Every run of both arms must leave the same rows behind.
    var fingerprints: Set<String> = []
    for run in 1...options.repeats {
        let mode = arms == [.pipeline, .raw] ? "pipeline and raw sqlite3 interleaved by batch" : "one arm"
        log("ingest run \(run)/\(options.repeats): \(mode), \(options.samples) samples")
        let result = try ingest.run(arms, run: run)
        if let rate = result.pipelineRate { pipelineRates.append(rate) }
        if let rate = result.rawRate { rawRates.append(rate) }
        fingerprints.formUnion(result.fingerprints)
        log(String(format: "  pipeline %.0f/s, raw %.0f/s", result.pipelineRate ?? 0, result.rawRate ?? 0))
    }
    guard fingerprints.count == 1 else {
        throw BenchError("the runs stored different rows: \(fingerprints.sorted().joined(separator: " / "))")
    }
    let pipelineRate = Measure.median(pipelineRates)
    let rawRate = Measure.median(rawRates)
    if runsPipeline { out.print("pipeline.samples_per_s", pipelineRate, "1/s", decimals: 0) }
    if runsRaw { out.print("raw_insert.samples_per_s", rawRate, "1/s", decimals: 0) }
    if runsPipeline, runsRaw { out.print("pipeline.vs_raw_insert", pipelineRate / rawRate, "ratio", decimals: 2) }
    if let peakMegabytes { out.print("pipeline.peak_rss_mb", peakMegabytes, "MB", decimals: 0) }
}

func runStats(_ options: BenchOptions, directory: String) throws {
    let out = FigurePrinter()

    // Statistics: a year of minute steps, per-day sums in Europe/Berlin.
    let stats = try StatsBenchmark(samples: options.statsSamples, directory: directory)
    log("stats: filling \(options.statsSamples) one-minute step samples (not timed)")
    try stats.fill()
    var storeTimes: [Double] = []
    var rawTimes: [Double] = []
    for run in 0..<options.statsRepeats {
        let ours = try stats.runStore()
        let raw = try stats.runRaw()
        try stats.verify(store: ours.days, raw: raw.days)
        storeTimes.append(ours.seconds)
        rawTimes.append(raw.seconds)
        log(String(format: "stats run %d/%d: store %.1f ms, raw %.1f ms", run + 1, options.statsRepeats,
                   ours.seconds * 1000, raw.seconds * 1000))
    }
    let storeTime = Measure.median(storeTimes)
    let rawTime = Measure.median(rawTimes)
    out.print("stats.day_sum_ms", storeTime * 1000, "ms", decimals: 1)
    out.print("raw_group_by.ms", rawTime * 1000, "ms", decimals: 1)
    out.print("stats.vs_raw_group_by", storeTime / rawTime, "ratio", decimals: 2)
}

do {
    let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    let started = ContinuousClock.now
    try runBenchmark(options)
    if options.only == nil || options.only == "daemon" || options.only == "daemon-idle" {
        // Needs the release `ingestd` next to IngestBench for the idle figures.
        await daemonBenchmarks(idleOnly: options.only == "daemon-idle")
    }
    // The whole run's wall time: a full run must stay under 15 minutes (the 10M-sample store cached).
    let elapsed = ContinuousClock.now - started
    FigurePrinter().print("bench.wall_minutes", Double(elapsed.components.seconds) / 60
                          + Double(elapsed.components.attoseconds) / 6e19, "min", decimals: 1)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
