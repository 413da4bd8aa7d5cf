import Foundation
import Pipeline

extension HealthStore {
    /// Every stored key by address (for the runtime's key lookup; nothing else reads the bytes).
    public func advertisementKeys() throws -> [(address: String, key: [UInt8])] {
        let select = try db.cachedStatement("SELECT address, key FROM advertisement_keys ORDER BY address")
        return try select.mapRows { row in (row.string(at: 0) ?? "", row.bytes(at: 1) ?? []) }
    }

    /// Stores (replacing) the key of the device at `address`.
    public func setAdvertisementKey(_ key: [UInt8], address: String, now: Date = Date()) throws {
        let upsert = try db.cachedStatement("""
            INSERT INTO advertisement_keys(address, key, added_at) VALUES (?, ?, ?)
            ON CONFLICT(address) DO UPDATE SET key = excluded.key, added_at = excluded.added_at
            """)
        try upsert.bind(address, at: 1)
        try upsert.bind(key, at: 2)
        try upsert.bind(now.timeIntervalSince1970, at: 3)
        try upsert.execute()
    }

    /// Removes the key of `address`; whether there was one.
    @discardableResult
    public func removeAdvertisementKey(address: String) throws -> Bool {
        let delete = try db.cachedStatement("DELETE FROM advertisement_keys WHERE address = ?")
        try delete.bind(address, at: 1)
        try delete.execute()
        return db.changes > 0
    }

    /// The stored keys' addresses, with the sources of the samples read from each device.
    public func advertisementKeyListing() throws -> [StoredKeyListing] {
        let select = try db.cachedStatement("""
            SELECT k.address, k.added_at,
                   (SELECT group_concat(name, ',') FROM (
                        SELECT DISTINCT s.name AS name FROM samples AS x
                        JOIN devices AS d ON d.id = x.device JOIN sources AS s ON s.id = x.source
                        WHERE upper(d.local_identifier) = k.address ORDER BY s.name))
            FROM advertisement_keys AS k ORDER BY k.address
            """)
        return try select.mapRows { row in
            StoredKeyListing(address: row.string(at: 0) ?? "", addedAt: Date(timeIntervalSince1970: row.double(at: 1)),
                             sources: (row.string(at: 2) ?? "").split(separator: ",").map(String.init))
        }
    }
}

/// The store file keeps the advertisement keys; `keys add|remove` and the key lookup reach them through this port.
extension HealthStore: AdvertisementKeyStore {}
