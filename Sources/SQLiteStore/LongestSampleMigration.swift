/// Schema 16: the longest sample per count key (issue 31), so that a query for the samples
/// overlapping `[from, to)` reads a bounded range of the time index.
///
/// A sample overlaps the range when it ends after `from` or starts in it; the end is not in any
/// index, so the condition alone made SQLite read every sample of the type (or the person's
/// type) that started before `from`: the dashboard's 31 days on a year of minute samples read the
/// whole year. A sample ending after `from` started after `from - longest`, where `longest` is
/// the longest duration of the type's samples, so the queries add `start_time >= from - longest`
/// (`HealthStore.overlapBound`), a range the index answers.
///
/// `sample_counts.longest` is kept like the other columns there: the insert code adds it
/// (`addSamplesSQL`), the update trigger re-adds the new row; a removal leaves it as it was, an
/// upper bound that is still correct (the bound only has to be at least the true longest).
enum LongestSampleMigration {
    static let migration = Migration(version: 16, name: "the longest sample per count key", sql: sql)

    static let sql = """
        ALTER TABLE sample_counts ADD COLUMN longest REAL NOT NULL DEFAULT 0;
        UPDATE sample_counts SET longest = g.longest
            FROM (SELECT source, type, COALESCE(person, 0) AS person, COALESCE(device, 0) AS device,
                         MAX(end_time - start_time) AS longest
                  FROM samples GROUP BY 1, 2, 3, 4) AS g
            WHERE sample_counts.source = g.source AND sample_counts.type = g.type
              AND sample_counts.person = g.person AND sample_counts.device = g.device;
        DROP TRIGGER sample_counts_update;
        CREATE TRIGGER sample_counts_update AFTER UPDATE OF source, type, person, device, start_time, end_time ON samples BEGIN
            \(CountsMigration.sampleRemoved("OLD"))
            INSERT INTO sample_counts(source, type, person, device, count, last_end, last_exact, longest)
                VALUES (NEW.source, NEW.type, COALESCE(NEW.person, 0), COALESCE(NEW.device, 0), 1, NEW.end_time, 1,
                        NEW.end_time - NEW.start_time)
                ON CONFLICT DO UPDATE SET count = count + 1,
                    last_exact = CASE WHEN excluded.last_end >= last_end THEN 1 ELSE last_exact END,
                    last_end = max(last_end, excluded.last_end),
                    longest = max(longest, excluded.longest);
        END;
        """

    /// Adds stored samples of one key (`CountsMigration.addSamplesSQL` with the longest
    /// duration among them, seventh).
    static let addSamplesSQL = """
        INSERT INTO sample_counts(source, type, person, device, count, last_end, last_exact, longest) VALUES (?, ?, ?, ?, ?, ?, 1, ?)
        ON CONFLICT DO UPDATE SET count = count + excluded.count,
            last_exact = CASE WHEN excluded.last_end >= last_end THEN 1 ELSE last_exact END,
            last_end = max(last_end, excluded.last_end),
            longest = max(longest, excluded.longest)
        """
}
