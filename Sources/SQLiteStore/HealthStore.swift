import Foundation
import HealthModel
import Pipeline

/// The default health store: samples, correlations, devices, sources, grants, priorities, the
/// profile and a change log with tombstones, in one SQLite file (WAL, `synchronous=FULL`, 0600).
///
/// One `HealthStore` wraps one connection and is used by one task at a time; several processes
/// may open the same file (SQLite's locking), e.g. `ingestd watch` while the daemon writes.
public final class HealthStore {
    /// `PRAGMA application_id` of ingestd stores ("IGST").
    public static let applicationID: Int32 = 0x4947_5354

    public let path: String
    let db: Connection
    /// Small integer ids for type identifiers and source names, cached for the write path.
    var typeIDs: [String: Int64] = [:]
    var typeNames: [Int64: String] = [:]
    var sourceIDs: [String: Int64] = [:]
    var sourceNames: [Int64: String] = [:]
    var deviceIDs: [Device: Int64] = [:]
    /// Person names by id (for commit events).
    var personNames: [Int64: String] = [:]
    /// The retention period and per-source bounds of the pending area (held samples of undecided sources).
    public var pendingLimits = PendingLimits()
    /// When this connection last removed expired pending records (at most hourly, inside a write).
    var lastPendingPurge: Date?
    /// Runs of at least this many plain samples in a batch are inserted by one statement
    /// (`BatchWriter.insertPlainSamples`); tests set it to compare both ways of writing.
    var plainRunMinimum = BatchWriter.plainRunMinimum

    /// Opens (creating if needed) the store at `path`, migrating its schema to this build's.
    /// Throws `StoreFileError` for a store in a directory every user may write to, a symlink in a
    /// shared directory, or a loose-mode file the user does not own (one the user owns is made 0600).
    public init(path: String, readOnly: Bool = false) throws {
        self.path = path
        if !readOnly {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            }
        }
        // Ownership, modes and symlinks first (StoreFileGuard); SQLite then opens the checked
        // path without following symlinks.
        let checkedPath = path == ":memory:" ? path : try StoreFileGuard.check(path: path)
        db = try Self.migrator.openDatabase(path: checkedPath, mode: readOnly ? .readOnly : .createIfMissing)
        if !readOnly { try db.registerSampleRows() }
        try refreshIDs()
    }

    /// The default location: `$XDG_DATA_HOME/ingestd/health.sqlite` or `~/.local/share/ingestd/health.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return xdg + "/ingestd/health.sqlite"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/ingestd/health.sqlite"
    }

    static let migrator = Migrator(applicationID: applicationID, migrations: [
        Migration(version: 1, name: "initial schema", sql: schemaV1),
        Migration(version: 2, name: "pending area and explicit denials", sql: schemaV2),
        Migration(version: 3, name: "what adapters remember per device", sql: schemaV3),
        Migration(version: 4, name: "sinks, read grants, cursors, dead letters", sql: schemaV4),
        Migration(version: 5, name: "people", sql: schemaV5),
        Migration(version: 6, name: "sinks read one person or everybody", sql: schemaV6),
        Migration(version: 7, name: "the store's own identity", sql: schemaV7),
        Migration(version: 8, name: "keys of devices that encrypt their advertisements", sql: schemaV8),
        CorrelationIdentityMigration.migration,
        Migration(version: 10, name: "what each sink last published as a current state", sql: schemaV10),
        Migration(version: 11, name: "each person's body-composition formula", sql: schemaV11),
        Migration(version: 12, name: "body-composition formulas per device", sql: schemaV12),
        RatePerMinuteMigration.migration,
        CountsMigration.migration,
        Migration(version: 15, name: "each person's measurement system", sql: schemaV15),
        LongestSampleMigration.migration,
        Migration(version: 17, name: "each device's last battery charge", sql: schemaV17),
        Migration(version: 18, name: "correlation members indexed", sql: schemaV18),
        Migration(version: 19, name: "the time indexes cover the statistics' reads", sql: schemaV19),
        Migration(version: 20, name: "the person index leaves the first person's samples to the type index", sql: schemaV20),
    ])

    /// The person index holds only the samples of people after the first (`person > 1`). Most
    /// stores have one person, whose samples then cost no entry here (a sample is four B-trees,
    /// not five): their reads go through `samples_by_type_time`, which carries the person
    /// (covering, the same entries the person index held for them). A household's other people
    /// keep their own index; their reads name `person > 1` (`PersonScope.condition`) so that
    /// SQLite may use it.
    static let schemaV20 = """
        DROP INDEX samples_by_person_type_time;
        CREATE INDEX samples_by_person_type_time ON samples(person, type, start_time, end_time, value, source)
            WHERE person > 1;
        """

    /// The two time indexes carry what statistics, `today` and the dashboard read of each sample
    /// (end, value, source, person), so those reads never visit the table: a year of one type
    /// out of ten million samples is read from the index alone (`EXPLAIN QUERY PLAN`: COVERING
    /// INDEX). Same names and leading columns, so every query that used them still does.
    static let schemaV19 = """
        DROP INDEX samples_by_type_time;
        CREATE INDEX samples_by_type_time ON samples(type, start_time, end_time, value, source, person);
        DROP INDEX samples_by_person_type_time;
        CREATE INDEX samples_by_person_type_time ON samples(person, type, start_time, end_time, value, source);
        """

    /// The samples that belong to a correlation (blood pressure, food: few), so an export finds
    /// whether the types it reads have any, and a correlation's members, without a scan.
    static let schemaV18 = """
        CREATE INDEX samples_by_correlation ON samples(correlation) WHERE correlation IS NOT NULL;
        """

    /// `ingestd people set P --units metric|us`: NULL (the configuration's) for everybody so far.
    static let schemaV15 = """
        ALTER TABLE people ADD COLUMN units TEXT CHECK (units IN ('metric', 'us'));
        """

    /// `ingestd people set P --body-composition standard|vendor|estimate|none`: standard for everybody so far.
    static let schemaV11 = """
        ALTER TABLE people ADD COLUMN body_composition TEXT NOT NULL DEFAULT 'standard';
        """

    /// `ingestd devices set DEVICE --body-composition …`, by device key (as device owners); over
    /// the person's choice.
    static let schemaV12 = """
        CREATE TABLE device_body_composition(
            device TEXT PRIMARY KEY,
            label TEXT NOT NULL,
            formula TEXT NOT NULL
        ) WITHOUT ROWID;
        """

    /// Per device address (upper case, `AA:BB:CC:DD:EE:FF`): the key of its encrypted
    /// advertisements (MiBeacon bindkey, BTHome key), 16 bytes. In the store file, so in its 0600.
    static let schemaV8 = """
        CREATE TABLE advertisement_keys(
            address TEXT PRIMARY KEY,
            key BLOB NOT NULL,
            added_at REAL NOT NULL
        ) WITHOUT ROWID;
        """

    /// Per adapter and device: small values an adapter keeps between connections (the last
    /// record sequence number of a glucose meter).
    static let schemaV3 = """
        CREATE TABLE device_memory(
            adapter TEXT NOT NULL,
            device TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY(adapter, device, key)
        ) WITHOUT ROWID;
        """

    static let schemaV1 = """
        CREATE TABLE types(
            id INTEGER PRIMARY KEY,
            identifier TEXT NOT NULL UNIQUE
        );
        CREATE TABLE sources(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL
        );
        CREATE TABLE devices(
            id INTEGER PRIMARY KEY,
            name TEXT, manufacturer TEXT, model TEXT, hardware_version TEXT, firmware_version TEXT,
            software_version TEXT, local_identifier TEXT, udi_device_identifier TEXT,
            identity TEXT NOT NULL UNIQUE
        );
        CREATE TABLE correlations(
            id INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            type TEXT NOT NULL,
            start_time REAL NOT NULL,
            end_time REAL NOT NULL,
            source INTEGER NOT NULL REFERENCES sources(id),
            device INTEGER REFERENCES devices(id),
            metadata TEXT,
            UNIQUE(source, type, start_time, end_time)
        );
        -- The id is the change anchor of the insert (AUTOINCREMENT: never reused).
        CREATE TABLE samples(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid BLOB NOT NULL UNIQUE,
            type INTEGER NOT NULL REFERENCES types(id),
            value REAL NOT NULL,
            start_time REAL NOT NULL,
            end_time REAL NOT NULL,
            source INTEGER NOT NULL REFERENCES sources(id),
            device INTEGER REFERENCES devices(id),
            device_local_id TEXT NOT NULL DEFAULT '',
            sync_id TEXT,
            sync_version INTEGER,
            metadata TEXT,
            correlation INTEGER REFERENCES correlations(id)
        );
        -- One reading of a device (a blood pressure with its pulse, a weight with BMI and height)
        -- shares one sync identifier across its types: the identity is (source, type, sync id).
        CREATE UNIQUE INDEX samples_sync_identity ON samples(source, type, sync_id) WHERE sync_id IS NOT NULL;
        CREATE UNIQUE INDEX samples_identity
            ON samples(source, device_local_id, type, start_time, end_time, value) WHERE sync_id IS NULL;
        CREATE INDEX samples_by_type_time ON samples(type, start_time);
        -- Deleted (replaced) samples, for anchored queries. anchor = the replacing sample's id.
        CREATE TABLE tombstones(
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL,
            type INTEGER NOT NULL,
            source INTEGER NOT NULL,
            deleted_at REAL NOT NULL
        );
        -- One row per commit and one count per (commit, type, source): the "records processed" log.
        CREATE TABLE commits(
            id INTEGER PRIMARY KEY,
            anchor INTEGER NOT NULL,
            committed_at REAL NOT NULL
        );
        CREATE TABLE commit_counts(
            commit_id INTEGER NOT NULL REFERENCES commits(id),
            type INTEGER NOT NULL,
            source INTEGER NOT NULL,
            count INTEGER NOT NULL
        );
        CREATE TABLE rejections(
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            source TEXT NOT NULL,
            type TEXT NOT NULL,
            reason TEXT NOT NULL,
            count INTEGER NOT NULL
        );
        -- type '*' grants every type to the source.
        CREATE TABLE grants(
            source TEXT NOT NULL,
            type TEXT NOT NULL,
            granted_at REAL NOT NULL,
            PRIMARY KEY(source, type)
        ) WITHOUT ROWID;
        CREATE TABLE source_types(
            source INTEGER NOT NULL,
            type INTEGER NOT NULL,
            first_written REAL NOT NULL,
            PRIMARY KEY(source, type)
        ) WITHOUT ROWID;
        CREATE TABLE priorities(
            type TEXT NOT NULL,
            source TEXT NOT NULL,
            rank INTEGER NOT NULL,
            PRIMARY KEY(type, source)
        ) WITHOUT ROWID;
        CREATE TABLE profile(
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """

    /// Three authorization states: `grants` (granted), `denials` (denied), neither (undecided). The
    /// samples of undecided pairs wait in `pending`, one row per record (a correlation is one row)
    /// as its JSON line, deduplicated per source by `identity` like samples are; never visible to
    /// queries, the change feed or sinks.
    static let schemaV2 = """
        -- type '*' denies every type to the source.
        CREATE TABLE denials(
            source TEXT NOT NULL,
            type TEXT NOT NULL,
            denied_at REAL NOT NULL,
            PRIMARY KEY(source, type)
        ) WITHOUT ROWID;
        CREATE TABLE pending(
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            -- The sample's type; for a correlation, its first undecided member type.
            type TEXT NOT NULL,
            device TEXT NOT NULL DEFAULT '',
            identity TEXT NOT NULL,
            sync_version INTEGER NOT NULL DEFAULT 0,
            start_time REAL NOT NULL,
            end_time REAL NOT NULL,
            record TEXT NOT NULL,
            -- The record's size in bytes (UTF-8), for the per-source size bound.
            size INTEGER NOT NULL,
            held_at REAL NOT NULL,
            UNIQUE(source, identity)
        );
        -- Covers the per-source count and size of the bounds check and its oldest-first walk.
        CREATE INDEX pending_by_source_time ON pending(source, start_time, size);
        CREATE INDEX pending_by_held_at ON pending(held_at);
        -- Per source: when it was first held, and how many records the bounds and the retention removed.
        CREATE TABLE pending_sources(
            source TEXT PRIMARY KEY,
            first_held REAL NOT NULL,
            dropped INTEGER NOT NULL DEFAULT 0,
            expired INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        """

    /// Delivery: each sink is a named reading client with its read grants (per type, `*` for
    /// all, default deny), its cursor (the change-feed anchor through which the receiver
    /// acknowledged), its dead letters, and a log of delivered batches for `ingestd watch`.
    static let schemaV4 = """
        CREATE TABLE sinks(
            name TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            -- The kind's options as JSON (owned by the Delivery module; secrets only as references).
            options TEXT NOT NULL,
            -- Seconds between scheduled deliveries; NULL = immediate.
            every REAL,
            cursor INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            last_success REAL,
            last_error TEXT,
            last_error_at REAL
        ) WITHOUT ROWID;
        CREATE TABLE read_grants(
            sink TEXT NOT NULL REFERENCES sinks(name) ON DELETE CASCADE,
            type TEXT NOT NULL,
            granted_at REAL NOT NULL,
            PRIMARY KEY(sink, type)
        ) WITHOUT ROWID;
        CREATE TABLE dead_letters(
            id INTEGER PRIMARY KEY,
            sink TEXT NOT NULL REFERENCES sinks(name) ON DELETE CASCADE,
            anchor INTEGER NOT NULL,
            uuid BLOB NOT NULL,
            type TEXT NOT NULL,
            -- The sample as its JSON line, or {"deleted":uuid,"type":…} for a deletion.
            record TEXT NOT NULL,
            reason TEXT NOT NULL,
            at REAL NOT NULL,
            -- 1 after `sinks retry`: sent again before the feed.
            retry INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX dead_letters_by_sink ON dead_letters(sink, retry, id);
        CREATE TABLE deliveries(
            id INTEGER PRIMARY KEY,
            sink TEXT NOT NULL,
            type TEXT NOT NULL,
            count INTEGER NOT NULL,
            anchor INTEGER NOT NULL,
            at REAL NOT NULL
        );
        """

    /// People (issue 15): every sample belongs to one person (`samples.person`) or is unassigned
    /// (NULL). The single-user profile becomes the first person, `me`, who receives every stored
    /// sample, so an old store answers as before. Tombstones and commit counts carry the person
    /// too, for per-person change feeds and `watch`.
    static let schemaV5 = """
        CREATE TABLE people(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            -- The characteristics (UserProfile JSON).
            profile TEXT NOT NULL DEFAULT '{}',
            -- The weight (kg) given by 'people add --weight', for shared-scale assignment.
            body_mass REAL,
            -- The person's user slot on multi-user scales (UDS user index, vendor user id).
            scale_user_index INTEGER UNIQUE,
            created_at REAL NOT NULL
        );
        INSERT INTO people(name, profile, created_at)
            VALUES ('\(firstPersonName)', COALESCE((SELECT value FROM profile WHERE key = 'profile'), '{}'),
                    (julianday('now') - 2440587.5) * 86400.0);
        DELETE FROM profile;
        -- Owners of devices, by the identifier given (lowercased): BLE address, serial number, local identifier.
        CREATE TABLE device_owners(
            device TEXT PRIMARY KEY,
            label TEXT NOT NULL,
            person INTEGER NOT NULL REFERENCES people(id),
            assigned_at REAL NOT NULL
        ) WITHOUT ROWID;
        ALTER TABLE samples ADD COLUMN person INTEGER REFERENCES people(id);
        UPDATE samples SET person = (SELECT id FROM people WHERE name = '\(firstPersonName)');
        CREATE INDEX samples_by_person_type_time ON samples(person, type, start_time);
        ALTER TABLE tombstones ADD COLUMN person INTEGER;
        UPDATE tombstones SET person = (SELECT id FROM people WHERE name = '\(firstPersonName)');
        ALTER TABLE commit_counts ADD COLUMN person INTEGER;
        UPDATE commit_counts SET person = (SELECT id FROM people WHERE name = '\(firstPersonName)');
        """

    /// A sink reads one person's samples (`sinks.person`) or, NULL, the samples of every person
    /// (never the unassigned ones). A sink that existed before keeps reading everybody.
    static let schemaV6 = """
        ALTER TABLE sinks ADD COLUMN person INTEGER REFERENCES people(id);
        """

    /// The store's identity: 128 random bits (hex) made once, when the store is created or first
    /// migrated to this version. A fleet's database binds a gateway id to the store that first
    /// delivered under it, so two stores left at one default gateway id are told apart.
    static let schemaV7 = """
        CREATE TABLE store_identity(id TEXT NOT NULL);
        INSERT INTO store_identity(id) VALUES (lower(hex(randomblob(16))));
        """

    /// Per sink and (person name, type identifier): the end time of the reading last published
    /// as the current state (Home Assistant's retained state), so that an older reading arriving
    /// later, even after a restart, never replaces a newer one. Removed with its sink.
    static let schemaV10 = """
        CREATE TABLE sink_states(
            sink TEXT NOT NULL REFERENCES sinks(name) ON DELETE CASCADE,
            person TEXT NOT NULL,
            type TEXT NOT NULL,
            published_end REAL NOT NULL,
            PRIMARY KEY(sink, person, type)
        ) WITHOUT ROWID;
        """

    /// The store's identity (`schemaV7`): random, made once, never changed.
    public func identity() throws -> String {
        guard case .text(let id) = try db.scalar("SELECT id FROM store_identity LIMIT 1"), !id.isEmpty else {
            throw StoreOpenError.corrupt(path: path)
        }
        return id
    }

    /// The name of the person a store starts with (and an old single-user store's profile becomes).
    public static let firstPersonName = "me"

    func typeID(_ identifier: String) throws -> Int64 {
        if let id = typeIDs[identifier] { return id }
        // Idempotent: another process (a replay beside a grant) may have added the row since
        // this store was opened; the row is then taken, never inserted twice.
        let insert = try db.cachedStatement("INSERT OR IGNORE INTO types(identifier) VALUES (?)")
        try insert.bind(identifier, at: 1)
        try insert.execute()
        let find = try db.cachedStatement("SELECT id FROM types WHERE identifier = ?")
        try find.bind(identifier, at: 1)
        guard let id = try find.firstRow({ $0.int64(at: 0) }) else { throw StoreRowError.missingAfterInsert(table: "types", key: identifier) }
        typeIDs[identifier] = id
        typeNames[id] = identifier
        return id
    }

    func sourceID(_ name: String, now: Date) throws -> Int64 {
        if let id = sourceIDs[name] { return id }
        let insert = try db.cachedStatement("INSERT OR IGNORE INTO sources(name, created_at) VALUES (?, ?)")
        try insert.bind(name, at: 1)
        try insert.bind(now.timeIntervalSince1970, at: 2)
        try insert.execute()
        let find = try db.cachedStatement("SELECT id FROM sources WHERE name = ?")
        try find.bind(name, at: 1)
        guard let id = try find.firstRow({ $0.int64(at: 0) }) else { throw StoreRowError.missingAfterInsert(table: "sources", key: name) }
        sourceIDs[name] = id
        sourceNames[id] = name
        return id
    }

    func deviceID(_ device: Device?) throws -> Int64? {
        guard let device, !Self.isEmpty(device) else { return nil }
        if let id = deviceIDs[device] { return id }
        let identity = HealthRecordEncoder().encode(device)
        let find = try db.cachedStatement("SELECT id FROM devices WHERE identity = ?")
        try find.bind(identity, at: 1)
        if let id = try find.firstRow({ $0.int64(at: 0) }) {
            deviceIDs[device] = id
            return id
        }
        let insert = try db.cachedStatement("""
            INSERT OR IGNORE INTO devices(name, manufacturer, model, hardware_version, firmware_version, software_version,
                                local_identifier, udi_device_identifier, identity)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let fields = [device.name, device.manufacturer, device.model, device.hardwareVersion, device.firmwareVersion,
                      device.softwareVersion, device.localIdentifier, device.udiDeviceIdentifier]
        for (index, field) in fields.enumerated() {
            if let field { try insert.bind(field, at: index + 1) } else { try insert.bindNull(at: index + 1) }
        }
        try insert.bind(identity, at: 9)
        try insert.execute()
        find.reset()
        try find.bind(identity, at: 1)
        guard let id = try find.firstRow({ $0.int64(at: 0) }) else { throw StoreRowError.missingAfterInsert(table: "devices", key: identity) }
        deviceIDs[device] = id
        return id
    }

    /// `Device.isEmpty` without building its field list (this runs once per written sample).
    static func isEmpty(_ device: Device) -> Bool {
        device.name == nil && device.manufacturer == nil && device.model == nil && device.hardwareVersion == nil
            && device.firmwareVersion == nil && device.softwareVersion == nil && device.localIdentifier == nil
            && device.udiDeviceIdentifier == nil
    }

    /// Closes the store; further use throws.
    public func close() {
        db.close()
    }
}

/// A row the store had just inserted (or found inserted by another process) could not be read back.
public enum StoreRowError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingAfterInsert(table: String, key: String)

    public var description: String {
        switch self {
        case .missingAfterInsert(let table, let key): "the \(table) row \"\(key)\" is missing right after it was inserted"
        }
    }
}
