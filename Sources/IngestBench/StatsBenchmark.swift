import CSQLite
import Foundation
import HealthModel
import IngestRuntime
import SQLiteStore

/// The statistics benchmark: a year of one-minute step samples (2025 in Europe/Berlin), then
/// `ingestd stats stepCount --sum --by day --tz Europe/Berlin --from 2025-01-01 --to 2026-01-01`
/// (open the store, `HealthStore.statistics`, close) against a raw
/// `SELECT … GROUP BY day` on the same file that shifts each start by the zone's offset
/// (standard or summer time) before cutting days.
struct StatsBenchmark {
    static let source = "bench-pedometer"
    var samples: Int
    var directory: String
    let zone: TimeZone
    let from: Date
    let to: Date

    var path: String { directory + "/stats.sqlite" }

    init(samples: Int, directory: String) throws {
        guard let zone = TimeZone(identifier: "Europe/Berlin") else { throw BenchError("no Europe/Berlin zone data") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let from = calendar.date(from: DateComponents(year: 2025, month: 1, day: 1)),
              let to = calendar.date(from: DateComponents(year: 2026, month: 1, day: 1))
        else { throw BenchError("cannot compute 2025 in Europe/Berlin") }
        self.samples = samples
        self.directory = directory
        self.zone = zone
        self.from = from
        self.to = to
    }

    /// Fills the store (not timed): one stepCount sample per minute from local 2025-01-01 00:00.
    func fill() throws {
        removeDatabase(path)
        let store = try HealthStore(path: path)
        defer { store.close() }
        try store.grant(source: Self.source, types: [.stepCount])
        let pipeline = try Ingestion(store: store)
        var random = SplitMix64(seed: 0x57E9_5000)
        var batch: [HealthRecord] = []
        batch.reserveCapacity(5000)
        let start = from.timeIntervalSince1970
        for minute in 0..<samples {
            let begin = start + Double(minute) * 60
            let steps = Double(random.below(121))
            let uuid = UUID(uuid: SampleGenerator.uuidBytes(random.next(), random.next()))
            batch.append(.sample(QuantitySample(
                uuid: uuid, type: .stepCount, quantity: Quantity(value: steps, unit: .count),
                start: Date(timeIntervalSince1970: begin), end: Date(timeIntervalSince1970: begin + 60),
                source: Self.source)))
            if batch.count == 5000 || minute == samples - 1 {
                let report = try pipeline.ingest(batch)
                guard report.totals.written == batch.count else { throw BenchError("stats fill: \(report.totals)") }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// The CLI's path: per-day sums, timed, and the bucket values.
    func runStore() throws -> (seconds: Double, days: [Double?]) {
        let clock = ContinuousClock()
        let begin = clock.now
        // As `CommonArguments.openStore` does for `ingestd stats`.
        let store = try HealthStore(path: path)
        let buckets = try store.statistics(.sum, type: .stepCount, from: from, to: to, granularity: .day, zone: zone)
        store.close()
        let elapsed = clock.now - begin
        return (Measure.seconds(elapsed), buckets.map(\.value))
    }

    /// The raw GROUP BY: timed, and the per-day sums in day order.
    func runRaw() throws -> (seconds: Double, days: [Double]) {
        // Summer time in 2025: the zone's two transitions inside the year.
        guard let summerStart = zone.nextDaylightSavingTimeTransition(after: from),
              let summerEnd = zone.nextDaylightSavingTimeTransition(after: summerStart)
        else { throw BenchError("no DST transitions in \(zone.identifier)") }
        let standardOffset = Double(zone.secondsFromGMT(for: from))
        let summerOffset = Double(zone.secondsFromGMT(for: summerStart))
        let sql = """
            SELECT CAST((start_time + CASE WHEN start_time >= ?3 AND start_time < ?4 THEN ?6 ELSE ?5 END) / 86400
                        AS INTEGER) AS day, SUM(value)
            FROM samples
            WHERE type = (SELECT id FROM types WHERE identifier = ?1) AND start_time >= ?2 AND start_time < ?7
            GROUP BY day ORDER BY day
            """
        let clock = ContinuousClock()
        let begin = clock.now
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("raw group by: cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("raw group by: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, QuantityType.stepCount.identifier, -1, csqlite_transient())
        sqlite3_bind_double(statement, 2, from.timeIntervalSince1970)
        sqlite3_bind_double(statement, 3, summerStart.timeIntervalSince1970)
        sqlite3_bind_double(statement, 4, summerEnd.timeIntervalSince1970)
        sqlite3_bind_double(statement, 5, standardOffset)
        sqlite3_bind_double(statement, 6, summerOffset)
        sqlite3_bind_double(statement, 7, to.timeIntervalSince1970)
        var days: [Double] = []
        var result = sqlite3_step(statement)
        while result == SQLITE_ROW {
            days.append(sqlite3_column_double(statement, 1))
            result = sqlite3_step(statement)
        }
        guard result == SQLITE_DONE else { throw BenchError("raw group by: \(String(cString: sqlite3_errmsg(db)))") }
        let elapsed = clock.now - begin
        return (Measure.seconds(elapsed), days)
    }

    /// Checks that both arms computed the same per-day sums.
    func verify(store: [Double?], raw: [Double]) throws {
        let ours = store.compactMap { $0 }
        guard ours.count == raw.count else {
            throw BenchError("stats: \(ours.count) days with data, the raw GROUP BY has \(raw.count)")
        }
        for (day, (a, b)) in zip(ours, raw).enumerated() where abs(a - b) > 1e-6 * max(1, abs(b)) {
            throw BenchError("stats: day \(day) sums to \(a), the raw GROUP BY to \(b)")
        }
    }
}
