import Foundation
import Pipeline

extension HealthStore: DeviceMemoryStore {
    /// The value an adapter keeps for a device under `key`, nil when none.
    public func deviceMemory(adapter: String, device: String, key: String) throws -> String? {
        let find = try db.cachedStatement("SELECT value FROM device_memory WHERE adapter = ? AND device = ? AND key = ?")
        try find.bind(adapter, at: 1)
        try find.bind(device, at: 2)
        try find.bind(key, at: 3)
        return try find.firstRow { $0.string(at: 0) } ?? nil
    }

    /// Stores (replacing) the value an adapter keeps for a device under `key`.
    public func setDeviceMemory(_ value: String, adapter: String, device: String, key: String, now: Date = Date()) throws {
        let upsert = try db.cachedStatement("""
            INSERT INTO device_memory(adapter, device, key, value, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(adapter, device, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
            """)
        try upsert.bind(adapter, at: 1)
        try upsert.bind(device, at: 2)
        try upsert.bind(key, at: 3)
        try upsert.bind(value, at: 4)
        try upsert.bind(now.timeIntervalSince1970, at: 5)
        try upsert.execute()
    }
}
