import Foundation
import HealthModel

/// A device's newest stored reading, from the counts the store keeps per source and device.
public struct DeviceLastReading: Sendable, Equatable {
    public var source: String
    public var device: Device
    /// The reading's type identifier.
    public var type: String
    /// In the type's canonical unit; nil when the sample is gone since the counts were read.
    public var value: Double?
    public var end: Date

    public init(source: String, device: Device, type: String, value: Double?, end: Date) {
        self.source = source
        self.device = device
        self.type = type
        self.value = value
        self.end = end
    }
}

extension HealthStore {
    /// Each device's last battery charge, by source and device key, with the device as it said it.
    static let schemaV17 = """
        CREATE TABLE device_batteries(
            source TEXT NOT NULL,
            device_key TEXT NOT NULL,
            name TEXT, manufacturer TEXT, model TEXT, local_identifier TEXT,
            percent INTEGER NOT NULL CHECK (percent BETWEEN 0 AND 100),
            at REAL NOT NULL,
            PRIMARY KEY(source, device_key)
        ) WITHOUT ROWID;
        """

    /// Keeps the newest charge of each device whose source holds a grant (a source nobody allowed
    /// leaves no trace, as its samples do not); an older charge than the one kept is ignored, as
    /// is one outside 0–100. Returns how many were kept.
    @discardableResult
    public func recordBatteries(_ batteries: [DeviceBattery]) throws -> Int {
        guard !batteries.isEmpty else { return 0 }
        let upsert = try db.cachedStatement("""
            INSERT INTO device_batteries(source, device_key, name, manufacturer, model, local_identifier, percent, at)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM grants WHERE source = ?1)
            ON CONFLICT(source, device_key) DO UPDATE SET
                name = excluded.name, manufacturer = excluded.manufacturer, model = excluded.model,
                local_identifier = excluded.local_identifier, percent = excluded.percent, at = excluded.at
            WHERE excluded.at >= device_batteries.at
            """)
        var kept = 0
        try db.transaction {
            for battery in batteries where DeviceBattery.isCharge(battery.percent) {
                try upsert.bind(battery.source, at: 1)
                try upsert.bind(battery.deviceKey, at: 2)
                try upsert.bind(battery.device.name, at: 3)
                try upsert.bind(battery.device.manufacturer, at: 4)
                try upsert.bind(battery.device.model, at: 5)
                try upsert.bind(battery.device.localIdentifier, at: 6)
                try upsert.bind(Int64(battery.percent), at: 7)
                try upsert.bind(battery.at.timeIntervalSince1970, at: 8)
                try upsert.execute()
                kept += db.changes > 0 ? 1 : 0
            }
        }
        return kept
    }

    /// The last charge of every device that said one, by source and device key.
    public func deviceBatteries() throws -> [DeviceBattery] {
        try db.prepare("""
            SELECT source, name, manufacturer, model, local_identifier, percent, at FROM device_batteries
            ORDER BY source, device_key
            """).mapRows { row in
            DeviceBattery(source: row.string(at: 0) ?? "",
                          device: Device(name: row.string(at: 1), manufacturer: row.string(at: 2), model: row.string(at: 3),
                                         localIdentifier: row.string(at: 4)),
                          percent: row.int(at: 5), at: Date(timeIntervalSince1970: row.double(at: 6)))
        }
    }

    /// Per source and device, its newest reading (the type whose count ends last, and its value).
    public func lastReadingsByDevice() throws -> [DeviceLastReading] {
        var readings: [(sourceID: Int64, deviceID: Int64, typeID: Int64, reading: DeviceLastReading)] = []
        try db.prepare("""
            SELECT c.source, c.device, c.type, s.name, t.identifier, MAX(c.last_end),
                   d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
                   d.local_identifier, d.udi_device_identifier
            FROM sample_counts c JOIN sources s ON s.id = c.source JOIN types t ON t.id = c.type
            JOIN devices d ON d.id = c.device
            WHERE c.count > 0 GROUP BY c.source, c.device ORDER BY s.name, d.id
            """).forEachRow { row in
            let device = Self.readDevice(row, at: 6) ?? Device()
            readings.append((row.int64(at: 0), row.int64(at: 1), row.int64(at: 2),
                             DeviceLastReading(source: row.string(at: 3) ?? "", device: device, type: row.string(at: 4) ?? "",
                                               value: nil, end: Date(timeIntervalSince1970: row.double(at: 5)))))
        }
        // The value: the newest sample of that type, source and device ending then (the time index, newest first).
        let find = try db.cachedStatement("""
            SELECT value FROM samples WHERE type = ?1 AND start_time <= ?4 AND source = ?2 AND device = ?3 AND end_time = ?4
            ORDER BY start_time DESC LIMIT 1
            """)
        return try readings.map { entry in
            var reading = entry.reading
            try find.bind(entry.typeID, at: 1)
            try find.bind(entry.sourceID, at: 2)
            try find.bind(entry.deviceID, at: 3)
            try find.bind(reading.end.timeIntervalSince1970, at: 4)
            reading.value = try find.firstRow { $0.double(at: 0) }
            return reading
        }
    }
}
