import Foundation
import HealthModel
import IngestRuntime
import Pipeline
import SQLiteStore

/// The ingest benchmark: the same generated stream through `Pipeline.ingest` into a fresh
/// `HealthStore`, and as precomputed rows through the raw sqlite3 baseline into a fresh file
/// with the same schema. Only the ingest calls / insert transactions are timed; generating the
/// samples (and, for the baseline, turning them into rows) is not.
///
/// The arms run alone (`runAlone`), or interleaved batch by batch (`runInterleaved`) so that
/// both see the same background load: on a shared machine the disk and CPU load of other
/// processes changes within seconds, and a 1M-sample arm takes tens of seconds.
struct IngestBenchmark {
    var samples: Int
    var batchSize: Int
    var directory: String

    /// Which arms a run drives.
    struct Arms: OptionSet {
        let rawValue: Int
        static let pipeline = Arms(rawValue: 1)
        static let raw = Arms(rawValue: 2)
    }

    /// Rates in samples per second (nil for an arm that did not run) and the fingerprints of
    /// the rows each arm stored.
    struct Result {
        var pipelineRate: Double?
        var rawRate: Double?
        var fingerprints: [String]
    }

    /// Runs `arms` over the whole stream; with both arms, each batch goes through both, in an
    /// order that alternates from batch to batch.
    func run(_ arms: Arms, run: Int) throws -> Result {
        let pipelineArm = arms.contains(.pipeline) ? try PipelineArm(path: directory + "/pipeline-\(run).sqlite") : nil
        let rawArm = arms.contains(.raw) ? try RawArm(path: directory + "/raw-\(run).sqlite") : nil
        defer {
            pipelineArm?.remove()
            rawArm?.remove()
        }
        var generator = SampleGenerator()
        try feedInTurn(&generator, samples: samples, batchSize: batchSize,
                       { try pipelineArm?.ingest($0) }, { try rawArm?.ingest($0) })
        let expectedWritten = samples - generator.duplicates
        var result = Result(fingerprints: [])
        if let pipelineArm {
            try pipelineArm.check(written: expectedWritten, duplicates: generator.duplicates)
            result.pipelineRate = Double(samples) / Measure.seconds(pipelineArm.elapsed)
            result.fingerprints.append(try pipelineArm.fingerprint())
        }
        if let rawArm {
            guard rawArm.written == expectedWritten else {
                throw BenchError("raw: wrote \(rawArm.written), expected \(expectedWritten)")
            }
            result.rawRate = Double(samples) / Measure.seconds(rawArm.elapsed)
            result.fingerprints.append(try rawArm.fingerprint())
        }
        return result
    }
}

/// The arm under test: a fresh store with every generated source granted all types, fed
/// through `Pipeline.ingest`, one call (one transaction) per batch.
final class PipelineArm {
    let path: String
    private let store: HealthStore
    private let pipeline: Ingestion
    private(set) var elapsed = Duration.zero
    /// CPU seconds of this thread inside the ingest calls.
    private(set) var cpuSeconds = 0.0
    private var totals = TypeCounts()

    /// A fresh store at `path`; with `keepingItsSamples`, the store already there (a copy of a
    /// full one) with the generated sources granted on top.
    init(path: String, keepingItsSamples: Bool = false) throws {
        self.path = path
        if !keepingItsSamples { removeDatabase(path) }
        if ProcessInfo.processInfo.environment["INGESTBENCH_WITHOUT_COUNT_TRIGGERS"] == "1" {
            // Diagnosis only (the counts go wrong): the store without the triggers that keep its
            // counts, to see what they cost against a run with them.
            try HealthStore(path: path).close()
            try RawInserter.dropCountTriggers(path: path)
        }
        store = try HealthStore(path: path)
        for source in SampleGenerator.sources {
            try store.grant(source: source.name, types: [], all: true)
        }
        pipeline = try Ingestion(store: store)
    }

    deinit { store.close() }

    func ingest(_ batch: [HealthRecord]) throws {
        let cpuBefore = Measure.threadCPUSeconds()
        let report = try Measure.timed(&elapsed) { try pipeline.ingest(batch) }
        cpuSeconds += Measure.threadCPUSeconds() - cpuBefore
        totals += report.totals
    }

    func check(written: Int, duplicates: Int) throws {
        guard totals.written == written, totals.duplicate == duplicates, totals.denied == 0, totals.invalid == 0 else {
            throw BenchError("""
                pipeline: wrote \(totals.written) (expected \(written)), \(totals.duplicate) duplicates \
                (expected \(duplicates)), \(totals.denied) denied, \(totals.invalid) invalid
                """)
        }
    }

    func fingerprint() throws -> String { try RawInserter.fingerprint(path: path) }

    func remove() {
        store.close()
        removeDatabase(path)
    }
}

/// The baseline arm: a file the store created (schema, indexes, WAL), then filled through
/// `RawInserter`, one transaction per batch.
final class RawArm {
    let path: String
    private let inserter: RawInserter
    private var rows: [RawSampleRow] = []
    private(set) var elapsed = Duration.zero
    private(set) var written = 0

    init(path: String) throws {
        self.path = path
        removeDatabase(path)
        // The store creates the file with its schema, indexes and WAL mode; then it is closed.
        try HealthStore(path: path).close()
        inserter = try RawInserter(path: path)
    }

    func ingest(_ batch: [HealthRecord]) throws {
        rows.removeAll(keepingCapacity: true)
        for record in batch {
            guard case .sample(let sample) = record else { continue }
            rows.append(try inserter.row(for: sample))
        }
        written += try Measure.timed(&elapsed) { try inserter.insert(rows) }
    }

    func fingerprint() throws -> String { try RawInserter.fingerprint(path: path) }

    func remove() { removeDatabase(path) }
}

/// Feeds `samples` generated samples in batches of `batchSize` to both arms, the one going first
/// alternating from batch to batch, so both see the same background load.
func feedInTurn(_ generator: inout SampleGenerator, samples: Int, batchSize: Int,
                _ first: ([HealthRecord]) throws -> Void, _ second: ([HealthRecord]) throws -> Void) throws {
    var remaining = samples
    var index = 0
    while remaining > 0 {
        let batch = generator.nextBatch(min(batchSize, remaining))
        remaining -= batch.count
        if index % 2 == 0 {
            try first(batch)
            try second(batch)
        } else {
            try second(batch)
            try first(batch)
        }
        index += 1
    }
}

/// Deletes a database file and its WAL and shared-memory files.
func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
}
