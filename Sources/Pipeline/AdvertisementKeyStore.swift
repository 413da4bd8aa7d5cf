import Foundation

/// The per-device keys of encrypted advertisements a store keeps (`ingestd keys add|remove`, and
/// the runtime's key lookup). The bytes never leave the store except into that lookup.
public protocol AdvertisementKeyStore: StoreConnection {
    /// Every stored key by address.
    func advertisementKeys() throws -> [(address: String, key: [UInt8])]
    /// Stores (replacing) the key of the device at `address`.
    func setAdvertisementKey(_ key: [UInt8], address: String, now: Date) throws
    /// Removes the key of `address`; whether there was one.
    @discardableResult
    func removeAdvertisementKey(address: String) throws -> Bool
}

extension AdvertisementKeyStore {
    /// Stores (replacing) the key of the device at `address`, added now.
    public func setAdvertisementKey(_ key: [UInt8], address: String) throws {
        try setAdvertisementKey(key, address: address, now: Date())
    }
}
