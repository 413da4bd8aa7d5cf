/// Schema 14: counts the store maintains as it commits (issue 31), so that `ingestd status`,
/// `ingestd sources` and `ingestd auth pending` read a few rows instead of scanning the samples
/// and the pending area.
///
/// `sample_counts` holds, per (source, type, person, device) of the stored samples, their count
/// and the latest end time; `pending_counts`, per (source, type, device) of the held records,
/// their count, the earliest start and the latest end, both in the transaction of the write.
/// Triggers keep them for every statement that deletes or updates a sample (replacements,
/// person removal, derived values removed, migrations) and that inserts, deletes or updates a
/// held record (holding, grants bringing records in, denials, bounds, retention), so no such
/// path can forget them. Inserting a sample has no trigger: one cost the pipeline half its
/// rate (0.50 of the raw insert against 0.86 without it, IngestBench `--only ingest`), so the
/// code that inserts samples counts them (`BatchWriter` once per key and batch, a move per row,
/// through `HealthStore.addSampleCounts` with `LongestSampleMigration.addSamplesSQL`); any new statement inserting
/// samples must do the same. A key whose last row goes away loses its count row.
///
/// An extreme (latest end, earliest start) stays exact while rows arrive; when the row holding
/// it is removed, the count row keeps the removed value as a bound (the true latest end is at
/// most it, the true earliest start at least it) and is marked inexact (`last_exact = 0`,
/// `first_exact = 0`) instead of searching the table inside the write; a later row at or beyond
/// the bound makes it exact again (a replaced reading's newer version usually does). Readers
/// compute an inexact extreme from the rows of its one key (`HealthStore.sourceTypeStatus`,
/// `pendingGroups`).
///
/// A conflict resolved by REPLACE deletes rows without firing delete triggers (unless
/// `recursive_triggers` is on): writes to `samples` and `pending` must not use `OR REPLACE`.
/// Unassigned samples count under person 0, samples without a device under device 0 (row ids
/// start at 1).
enum CountsMigration {
    static let migration = Migration(version: 14, name: "counts maintained at commit", sql: sql)

    /// The tables and triggers, without the counts of existing rows.
    static let schema = """
        CREATE TABLE sample_counts(
            source INTEGER NOT NULL,
            type INTEGER NOT NULL,
            person INTEGER NOT NULL,
            device INTEGER NOT NULL,
            count INTEGER NOT NULL,
            last_end REAL NOT NULL,
            last_exact INTEGER NOT NULL,
            PRIMARY KEY(source, type, person, device)
        ) WITHOUT ROWID;
        CREATE TABLE pending_counts(
            source TEXT NOT NULL,
            type TEXT NOT NULL,
            device TEXT NOT NULL,
            count INTEGER NOT NULL,
            first_start REAL NOT NULL,
            first_exact INTEGER NOT NULL,
            last_end REAL NOT NULL,
            last_exact INTEGER NOT NULL,
            PRIMARY KEY(source, type, device)
        ) WITHOUT ROWID;
        \(triggers(table: "samples", counts: "sample_counts", columns: "source, type, person, device, end_time",
                   added: sampleAdded, removed: sampleRemoved, onInsert: false))
        \(triggers(table: "pending", counts: "pending_counts", columns: "source, type, device, start_time, end_time",
                   added: pendingAdded, removed: pendingRemoved, onInsert: true))
        """

    /// The schema, then the counts of the rows an existing store holds.
    static let sql = schema + """

        INSERT INTO sample_counts(source, type, person, device, count, last_end, last_exact)
            SELECT source, type, COALESCE(person, 0), COALESCE(device, 0), COUNT(*), MAX(end_time), 1
            FROM samples GROUP BY 1, 2, 3, 4;
        INSERT INTO pending_counts(source, type, device, count, first_start, first_exact, last_end, last_exact)
            SELECT source, type, device, COUNT(*), MIN(start_time), 1, MAX(end_time), 1
            FROM pending GROUP BY 1, 2, 3;
        """

    /// The delete and update triggers of `table` keeping `counts`, and with `onInsert` the
    /// insert trigger (an update of one of `columns` is the old row's removal and the new row's
    /// addition).
    private static func triggers(table: String, counts: String, columns: String,
                                 added: (String) -> String, removed: (String) -> String, onInsert: Bool) -> String {
        (onInsert ? """
        CREATE TRIGGER \(counts)_insert AFTER INSERT ON \(table) BEGIN
                \(added("NEW"))
            END;

        """ : "") + """
            CREATE TRIGGER \(counts)_delete AFTER DELETE ON \(table) BEGIN
                \(removed("OLD"))
            END;
            CREATE TRIGGER \(counts)_update AFTER UPDATE OF \(columns) ON \(table) BEGIN
                \(removed("OLD"))
                \(added("NEW"))
            END;
        """
    }

    private static func sampleKey(_ row: String) -> String {
        "source = \(row).source AND type = \(row).type AND person = COALESCE(\(row).person, 0) AND device = COALESCE(\(row).device, 0)"
    }

    private static func sampleAdded(_ row: String) -> String {
        """
        INSERT INTO sample_counts(source, type, person, device, count, last_end, last_exact)
                VALUES (\(row).source, \(row).type, COALESCE(\(row).person, 0), COALESCE(\(row).device, 0), 1, \(row).end_time, 1)
                ON CONFLICT DO UPDATE SET count = count + 1,
                    last_exact = CASE WHEN excluded.last_end >= last_end THEN 1 ELSE last_exact END,
                    last_end = max(last_end, excluded.last_end);
        """
    }

    static func sampleRemoved(_ row: String) -> String {
        """
        UPDATE sample_counts SET count = count - 1,
                    last_exact = CASE WHEN \(row).end_time >= last_end THEN 0 ELSE last_exact END
                WHERE \(sampleKey(row));
                DELETE FROM sample_counts WHERE \(sampleKey(row)) AND count <= 0;
        """
    }

    private static func pendingKey(_ row: String) -> String {
        "source = \(row).source AND type = \(row).type AND device = \(row).device"
    }

    private static func pendingAdded(_ row: String) -> String {
        """
        INSERT INTO pending_counts(source, type, device, count, first_start, first_exact, last_end, last_exact)
                VALUES (\(row).source, \(row).type, \(row).device, 1, \(row).start_time, 1, \(row).end_time, 1)
                ON CONFLICT DO UPDATE SET count = count + 1,
                    first_exact = CASE WHEN excluded.first_start <= first_start THEN 1 ELSE first_exact END,
                    first_start = min(first_start, excluded.first_start),
                    last_exact = CASE WHEN excluded.last_end >= last_end THEN 1 ELSE last_exact END,
                    last_end = max(last_end, excluded.last_end);
        """
    }

    private static func pendingRemoved(_ row: String) -> String {
        """
        UPDATE pending_counts SET count = count - 1,
                    first_exact = CASE WHEN \(row).start_time <= first_start THEN 0 ELSE first_exact END,
                    last_exact = CASE WHEN \(row).end_time >= last_end THEN 0 ELSE last_exact END
                WHERE \(pendingKey(row));
                DELETE FROM pending_counts WHERE \(pendingKey(row)) AND count <= 0;
        """
    }
}
