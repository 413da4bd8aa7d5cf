import Foundation

/// What an adapter remembers about a device between connections (the last record sequence
/// number a glucose meter gave), per adapter and device. The daemon keeps it in the store;
/// replay keeps it for the replay's run.
public protocol DeviceMemory: Sendable {
    /// The value stored under `key` for `device`, nil when none.
    func recall(_ key: String, device: String) async -> String?
    /// Stores `value` under `key` for `device` (replacing the previous one).
    func remember(_ value: String, for key: String, device: String) async throws
}

/// A ``DeviceMemory`` in memory only (replay, tests).
public final class EphemeralDeviceMemory: DeviceMemory {
    private let values = MemoryTable()

    public init() {}

    public func recall(_ key: String, device: String) async -> String? { await values.get(device + "\u{1F}" + key) }

    public func remember(_ value: String, for key: String, device: String) async throws {
        await values.set(value, for: device + "\u{1F}" + key)
    }
}

/// The table behind ``EphemeralDeviceMemory``.
private actor MemoryTable {
    private var values: [String: String] = [:]
    func get(_ key: String) -> String? { values[key] }
    func set(_ value: String, for key: String) { values[key] = value }
}
