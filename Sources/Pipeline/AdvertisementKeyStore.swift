import Foundation

/// The per-device keys of encrypted advertisements a store keeps (`ingestd keys add|list|remove`,
/// and the runtime's key lookup). The bytes never leave the store except into that lookup.
public protocol AdvertisementKeyStore: StoreConnection {
    /// Every stored key by address.
    func advertisementKeys() throws -> [(address: String, key: [UInt8])]
    /// Stores (replacing) the key of the device at `address`.
    func setAdvertisementKey(_ key: [UInt8], address: String, now: Date) throws
    /// The stored keys' addresses with the sources read from each device (`keys list`); never a key.
    func advertisementKeyListing() throws -> [StoredKeyListing]
    /// Removes the key of `address`; whether there was one.
    @discardableResult
    func removeAdvertisementKey(address: String) throws -> Bool
}

/// A stored key's address, when it was added and the sample sources that have read the device (the adapters
/// using it); never the key itself.
public struct StoredKeyListing: Sendable, Equatable {
    public var address: String
    public var addedAt: Date
    public var sources: [String]

    public init(address: String, addedAt: Date, sources: [String]) {
        self.address = address
        self.addedAt = addedAt
        self.sources = sources
    }
}

extension AdvertisementKeyStore {
    /// Stores (replacing) the key of the device at `address`, added now.
    public func setAdvertisementKey(_ key: [UInt8], address: String) throws {
        try setAdvertisementKey(key, address: address, now: Date())
    }
}
