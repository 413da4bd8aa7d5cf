import Foundation

/// What an adapter keeps per device between contacts (a scale's user slot, the last record a
/// conversation read), as text under a key: the device memory a store keeps for the daemon's
/// conversations (`DeviceMemory` in AdapterKit is the adapters' side of it).
public protocol DeviceMemoryStore: StoreConnection {
    /// The value `adapter` keeps for `device` under `key`, nil when none.
    func deviceMemory(adapter: String, device: String, key: String) throws -> String?
    /// Stores (replacing) the value `adapter` keeps for `device` under `key`, changed at `now`.
    func setDeviceMemory(_ value: String, adapter: String, device: String, key: String, now: Date) throws
}
