import Foundation
import Testing

/// The daemon (`ingestd run --no-usb --no-ble`) delivers to its sinks after commits, re-reads
/// them on SIGHUP and announces delivered batches to `ingestd watch`.
@Suite(.serialized, .offCooperativePool) struct DaemonDeliveryTests {
    @Test func daemonDeliversAfterCommitsAndPicksUpNewSinksOnSIGHUP() throws {
        let directory = try TemporaryDirectory("daemon-sinks")
        let fixture = try StoreFixture(directory: directory)
        let first = try fixture.addSteps(120)
        let receiver = try HTTPReceiver(plan: [], directory: directory)
        let add = try IngestdBinary.run(["sinks", "add", "server", receiver.url, "--types", "stepCount", "--batch-size", "50",
                                         "--store", fixture.path])
        #expect(add.status == 0)

        let binary = try #require(IngestdBinary.url).path
        let daemon = unmaskedProcess(binary, ["run", "--no-usb", "--no-ble", "--store", fixture.path])
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try daemon.run()
        defer {
            if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
            daemon.waitUntilExit()
        }
        let lower = { (uuids: [UUID]) in Set(uuids.map { $0.uuidString.lowercased() }) }
        #expect(waitFor(60) { Set(receiver.acceptedUUIDs()).isSuperset(of: lower(first)) })

        // A commit while it runs is delivered shortly after.
        let later = try fixture.addSteps(30, start: Date(timeIntervalSince1970: 1_790_000_000))
        #expect(waitFor(60) { Set(receiver.acceptedUUIDs()).isSuperset(of: lower(later)) })
        #expect(receiver.acceptedUUIDs().count == 150)

        // `watch` shows what the receiver acknowledged.
        let watch = try IngestdBinary.run(["watch", "--since", "0", "--count", "1", "--store", fixture.path])
        #expect(watch.stdout.hasPrefix(#"{"delivered":{"sink":"server","type":"HKQuantityTypeIdentifierStepCount","count":50,"anchor":"#))

        // A sink added while the daemon runs starts on SIGHUP.
        let second = try HTTPReceiver(plan: [], directory: directory)
        #expect(try IngestdBinary.run(["sinks", "add", "second", second.url, "--all-types", "--store", fixture.path]).status == 0)
        kill(daemon.processIdentifier, SIGHUP)
        #expect(waitFor(60) { second.acceptedUUIDs().count == 150 })
        #expect(Set(second.acceptedUUIDs()) == lower(first + later))

        kill(daemon.processIdentifier, SIGTERM)
        #expect(waitFor(60) { !daemon.isRunning })
        #expect(daemon.terminationStatus == 0)
    }
}
