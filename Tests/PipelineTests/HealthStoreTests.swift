import Foundation
import Testing
import HealthModel
import Pipeline
@testable import SQLiteStore

@Suite struct HealthStoreTests {
    @Test func storeFilesAreOwnerOnly() throws {
        let temp = try TemporaryStore()
        try temp.store.grant(source: "scale", types: [.bodyMass])
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        _ = try pipeline.ingest([.sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z"))])
        for suffix in ["", "-wal", "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: temp.path + suffix)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
            #expect(mode == 0o600, "\(suffix.isEmpty ? "database" : suffix) has mode \(String(mode ?? 0, radix: 8))")
        }
    }

    @Test func foreignSQLiteFileIsRefused() throws {
        let temp = try TemporaryStore()
        let path = temp.directory.appendingPathComponent("other.sqlite").path
        let other = try Connection(path: path)
        try other.execute(sql: "CREATE TABLE notes(text TEXT)")
        other.close()
        #expect(throws: StoreOpenError.notAnIngestdStore(path: path)) { try HealthStore(path: path) }
    }

    @Test func textFileIsRefused() throws {
        let temp = try TemporaryStore()
        let path = temp.directory.appendingPathComponent("notes.txt").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreOpenError.self) { try HealthStore(path: path) }
    }

    @Test func storeFromANewerBuildIsRefused() throws {
        let temp = try TemporaryStore()
        let path = temp.directory.appendingPathComponent("newer.sqlite").path
        try HealthStore(path: path).close()
        let connection = try Connection(path: path)
        try connection.execute(sql: "PRAGMA user_version = 99")
        connection.close()
        #expect(throws: StoreOpenError.newerThanThisBuild(path: path, found: 99, supported: HealthStore.migrator.latestVersion)) {
            try HealthStore(path: path)
        }
    }

    @Test func priorityDefaultsToFirstWriterAndCanBeSet() throws {
        let temp = try TemporaryStore()
        try temp.store.grant(source: "phone", types: [], all: true)
        try temp.store.grant(source: "watch", types: [], all: true)
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        _ = try pipeline.ingest([.sample(try sample(.stepCount, 10, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:10:00Z", source: "phone"))])
        _ = try pipeline.ingest([.sample(try sample(.stepCount, 20, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:10:00Z", source: "watch"))])
        #expect(try temp.store.priority(for: .stepCount) == ["phone", "watch"])
        try temp.store.setPriority(type: .stepCount, sources: ["watch"])
        #expect(try temp.store.priority(for: .stepCount) == ["watch", "phone"])
    }

    @Test func profileRoundTrips() throws {
        let temp = try TemporaryStore()
        #expect(try temp.store.profile() == UserProfile())
        let profile = UserProfile(dateOfBirth: CalendarDate(year: 1980, month: 2, day: 29), biologicalSex: .female,
                                  height: Quantity(value: 168, unit: .centimeter))
        try temp.store.setProfile(profile)
        #expect(try temp.store.profile() == profile)
    }

    @Test func sourcesListCountsAndDevices() throws {
        let temp = try TemporaryStore()
        try temp.store.grant(source: "scale", types: [.bodyMass])
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        let device = Device(name: "MIBFS", manufacturer: "Xiaomi", localIdentifier: "C8:47:8C:00:11:22")
        _ = try pipeline.ingest([
            .sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z", device: device)),
            .sample(try sample(.bodyMass, 71, "kg", start: "2026-11-28T08:00:00Z", device: device)),
        ])
        let sources = try temp.store.sources()
        #expect(sources.map(\.name) == ["scale"])
        #expect(sources.first?.sampleCount == 2)
        #expect(sources.first?.devices == [device])
        #expect(try temp.store.samples(type: .bodyMass).map { $0.device } == [device, device])
    }
}
