import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// The ingest benchmark: the same generated stream through `Pipeline.ingest` into a fresh
/// `HealthStore`, and as precomputed rows through the raw sqlite3 baseline into a fresh file
/// with the same schema. Only the ingest calls / insert transactions are timed; generating the
/// samples (and, for the baseline, turning them into rows) is not.
struct IngestBenchmark {
    var samples: Int
    var batchSize: Int
    var directory: String

    /// Samples per second through the pipeline, and the fingerprint of the rows it stored.
    func runPipeline(run: Int) throws -> (rate: Double, fingerprint: String) {
        let path = directory + "/pipeline-\(run).sqlite"
        defer { removeDatabase(path) }
        let store = try HealthStore(path: path)
        defer { store.close() }
        for source in SampleGenerator.sources {
            try store.grant(source: source.name, types: [], all: true)
        }
        let pipeline = try Pipeline(store: store)
        var generator = SampleGenerator()
        var elapsed = Duration.zero
        var totals = TypeCounts()
        var remaining = samples
        while remaining > 0 {
            let batch = generator.nextBatch(min(batchSize, remaining))
            remaining -= batch.count
            let report = try Measure.timed(&elapsed) { try pipeline.ingest(batch) }
            totals += report.totals
        }
        let expectedWritten = samples - generator.duplicates
        guard totals.written == expectedWritten, totals.duplicate == generator.duplicates,
              totals.denied == 0, totals.invalid == 0
        else {
            throw BenchError("""
                pipeline: wrote \(totals.written) (expected \(expectedWritten)), \(totals.duplicate) duplicates \
                (expected \(generator.duplicates)), \(totals.denied) denied, \(totals.invalid) invalid
                """)
        }
        store.close()
        return (Double(samples) / Measure.seconds(elapsed), try RawInserter.fingerprint(path: path))
    }

    /// Samples per second through the raw sqlite3 baseline, and the fingerprint of its rows.
    func runRaw(run: Int) throws -> (rate: Double, fingerprint: String) {
        let path = directory + "/raw-\(run).sqlite"
        defer { removeDatabase(path) }
        // The store creates the file with its schema, indexes and WAL mode; then it is closed.
        try HealthStore(path: path).close()
        let raw = try RawInserter(path: path)
        var generator = SampleGenerator()
        var elapsed = Duration.zero
        var written = 0
        var remaining = samples
        var rows: [RawSampleRow] = []
        rows.reserveCapacity(batchSize)
        while remaining > 0 {
            let batch = generator.nextBatch(min(batchSize, remaining))
            remaining -= batch.count
            rows.removeAll(keepingCapacity: true)
            for record in batch {
                guard case .sample(let sample) = record else { continue }
                rows.append(try raw.row(for: sample))
            }
            written += try Measure.timed(&elapsed) { try raw.insert(rows) }
        }
        guard written == samples - generator.duplicates else {
            throw BenchError("raw: wrote \(written), expected \(samples - generator.duplicates)")
        }
        return (Double(samples) / Measure.seconds(elapsed), try RawInserter.fingerprint(path: path))
    }
}

/// Deletes a database file and its WAL and shared-memory files.
func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
}
