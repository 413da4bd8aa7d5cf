import AdapterKit
import ExternalAdapters
import Foundation
import TestSupport
import Testing
import Transport

@Suite("ExternalAdapterStatusSnapshot")
struct ExternalAdapterStatusSnapshotTests {
    @Test("The daemon's publisher keeps the status file current: ok, broken, then restarting after a crash")
    func publisher() throws {
        let directory = try PluginDirectory()
        try directory.install("crashy.py", as: "crashy")
        try directory.install("scale.py", as: "not-executable", mode: 0o644)
        let path = directory.path + "/run/adapters.json"
        let publisher = ExternalAdapterStatusPublisher(path: path)
        let configuration = testConfiguration {
            $0.stateChanged = publisher.stateChanged
        }
        let catalogue = ExternalAdapterCatalogue.load(directories: [directory.path], reservedIDs: [], configuration: configuration)
        publisher.attach(catalogue)

        let first = try #require(ExternalAdapterStatusSnapshot.read(from: path))
        #expect(first.pid == ProcessInfo.processInfo.processIdentifier)
        #expect(first.adapters.map(\.id) == ["crashy", "not-executable"])
        #expect(first.adapters.map(\.state) == ["ok", "broken"])
        #expect(first.adapters[1].reason?.hasPrefix("not executable") == true)

        let adapter = try #require(catalogue.adapters.first)
        let traits = BLEDeviceTraits(address: try #require(BLEAddress(miScaleAddress)), companyIDs: [0xFFFF])
        let session = adapter.makeSession(for: traits, context: AdapterContext(timeZone: TimeZone(identifier: "UTC")!, source: "crashy"))
        var output = AdapterOutput()
        for bpm: UInt8 in 60...62 {
            session.receive(.advertisement(try makeAdvertisement(address: miScaleAddress, manufacturer: (0xFFFF, [bpm]))), into: &output)
        }
        #expect(eventually { ExternalAdapterStatusSnapshot.read(from: path)?.adapters.first?.state == "restarting" })
        let entry = try #require(ExternalAdapterStatusSnapshot.read(from: path)?.adapters.first)
        #expect(entry.reason == "crashed with signal 6 (SIGABRT)")
        #expect(entry.nextAttempt == "2027-01-15T08:00:01Z")
        #expect(entry.failures == 1)
        #expect(entry.records == 3)
        #expect(entry.adapterState == .restarting(nextAttempt: Date(timeIntervalSince1970: 1_800_000_001),
                                                  reason: "crashed with signal 6 (SIGABRT)"))
        session.finish(into: &output)
    }

    @Test("A snapshot whose daemon is gone, or a missing or garbled file, reads as nothing")
    func staleOrMissing() throws {
        let directory = try PluginDirectory()
        let path = directory.path + "/adapters.json"
        #expect(ExternalAdapterStatusSnapshot.read(from: path) == nil)
        try ExternalAdapterStatusSnapshot(pid: 2_147_483_646, written: Date(), adapters: []).write(to: path)
        #expect(ExternalAdapterStatusSnapshot.read(from: path) == nil)
        try directory.write("adapters.json", "{not json", mode: 0o644)
        #expect(ExternalAdapterStatusSnapshot.read(from: path) == nil)
        let current = ExternalAdapterStatusSnapshot(pid: ProcessInfo.processInfo.processIdentifier, written: Date(), adapters: [])
        try current.write(to: path)
        #expect(ExternalAdapterStatusSnapshot.read(from: path) == current)
    }

    @Test("The default path follows XDG_RUNTIME_DIR, else /run for the system service")
    func defaultPath() {
        #expect(ExternalAdapterStatusSnapshot.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
                == "/run/user/1000/ingestd/adapters.json")
        #expect(ExternalAdapterStatusSnapshot.defaultPath(environment: [:]) == "/run/ingestd/adapters.json")
    }
}
