import Foundation
import SQLiteStore
import Testing

/// What adapters remember per device (schema 3): kept per adapter, device and key, replaced on
/// update, there after the store is reopened.
struct DeviceMemoryTests {
    @Test func valuesAreKeptPerAdapterDeviceAndKeyAcrossReopening() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("health.sqlite")
        do {
            let store = try HealthStore(path: path)
            defer { store.close() }
            #expect(try store.deviceMemory(adapter: "gatt-health", device: "AA:BB", key: "glucose-last-sequence") == nil)
            try store.setDeviceMemory("20", adapter: "gatt-health", device: "AA:BB", key: "glucose-last-sequence")
            try store.setDeviceMemory("50", adapter: "gatt-health", device: "AA:BB", key: "glucose-last-sequence")
            try store.setDeviceMemory("7", adapter: "gatt-health", device: "CC:DD", key: "glucose-last-sequence")
        }
        let reopened = try HealthStore(path: path)
        defer { reopened.close() }
        #expect(try reopened.deviceMemory(adapter: "gatt-health", device: "AA:BB", key: "glucose-last-sequence") == "50")
        #expect(try reopened.deviceMemory(adapter: "gatt-health", device: "CC:DD", key: "glucose-last-sequence") == "7")
        #expect(try reopened.deviceMemory(adapter: "other", device: "AA:BB", key: "glucose-last-sequence") == nil)
    }
}
