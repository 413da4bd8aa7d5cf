import AdapterKit
import Foundation

extension IngestService {
    func deviceMemory(adapter: String, device: String, key: String) -> String? {
        try? ingestion.deviceMemory.deviceMemory(adapter: adapter, device: device, key: key)
    }

    func setDeviceMemory(_ value: String, adapter: String, device: String, key: String) throws {
        try ingestion.deviceMemory.setDeviceMemory(value, adapter: adapter, device: device, key: key, now: Date())
    }
}

/// One adapter's ``DeviceMemory`` in the daemon's store.
struct StoreDeviceMemory: DeviceMemory {
    let service: IngestService
    let adapter: String

    func recall(_ key: String, device: String) async -> String? {
        await service.deviceMemory(adapter: adapter, device: device, key: key)
    }

    func remember(_ value: String, for key: String, device: String) async throws {
        try await service.setDeviceMemory(value, adapter: adapter, device: device, key: key)
    }
}
