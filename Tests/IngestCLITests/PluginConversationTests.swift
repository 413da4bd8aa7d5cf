import AdapterKit
import BLESimulators
import BLEWire
import BlueZTransport
import BuiltinAdapters
import ExternalAdapters
import Foundation
import HealthModel
import Logging
import SQLiteStore
import Synchronization
import TestSupport
import Testing
import Transport
@testable import IngestRuntime

/// Protocol-2 plugins (the Python examples in `Plugins/ExternalExamples/`) holding conversations
/// through the daemon with simulated devices over socketpairs, and replayed from a capture of
/// such a conversation.
@Suite(.serialized) struct PluginConversationTests {
    static let scaleAddress = BLEAddress("C0:FF:EE:00:FF:B0")!
    static let bandAddress = BLEAddress("F9:E5:10:60:E8:60")!
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Plugins/ExternalExamples")

    /// Three weighings of an evening (2025-11-30, UTC).
    static let readings: [SimulatedVendorScale.Reading] = [
        .init(sequence: 1, centikilograms: 7_245, time: 1_764_486_000),
        .init(sequence: 2, centikilograms: 7_310, time: 1_764_489_600),
        .init(sequence: 3, centikilograms: 7_198, time: 1_764_493_200),
    ]

    /// Plugin log lines (the plugin's own, its stderr and the supervisor's notes).
    final class PluginLog: Sendable {
        private let entries = Mutex<[ExternalAdapterLogEntry]>([])
        func add(_ entry: ExternalAdapterLogEntry) { entries.withLock { $0.append(entry) } }
        var messages: [String] { entries.withLock { $0.map(\.description) } }
    }

    /// A simulated device the controller advertises and the connect closure serves.
    struct Device {
        var address: BLEAddress
        var name: String
        var services: [UInt16]
        var profile: SimulatedProfile
        var responder: any SimulatedResponder
    }

    /// How long a plugin's `--describe` may take here: longer than the daemon's default
    /// (`ExternalAdapterConfiguration.defaultDescribeTimeout`), for a Python start-up on a machine
    /// loaded by the parallel suites.
    static let describeLimit: Duration = .seconds(60)

    /// Copies an example plugin into `directory` as `ingestd-adapter-<id>` and describes it.
    static func install(_ file: String, id: String, in directory: URL, log: PluginLog) throws -> ExternalAdapter {
        let target = directory.appendingPathComponent("ingestd-adapter-\(id)")
        try ExecutableFile.copy(examples.appendingPathComponent(file).path, to: target.path)
        let configuration = ExternalAdapterConfiguration(finishTimeout: .seconds(5), log: { log.add($0) })
        let description = try PluginDescriber(timeout: Self.describeLimit).describePlugin(executable: target.path, expectedID: id).get()
        #expect(description.protocolVersion == 2 && description.connects)
        return ExternalAdapter(description: description, executable: target.path, configuration: configuration)
    }

    /// Runs the daemon with `adapters` until `done` holds (see `runDaemonUntil`: a loaded machine
    /// gets the time it needs), against a controller advertising `devices` as connectable; each
    /// connection gets a peripheral serving the device.
    func runDaemon(store: String, adapters: [any BLEAdapter], devices: [Device],
                   log: RecordingLogHandler = RecordingLogHandler(),
                   until done: @escaping @Sendable () -> Bool) async throws {
        let (hostEnd, controllerEnd) = try SocketPair.make()
        var reports: [[UInt8]] = []
        for device in devices {
            var data = ADStructure.flags(0x06) + ADStructure.completeLocalName(device.name)
            if !device.services.isEmpty { data += ADStructure.serviceUUIDs16(device.services) }
            let report = AdvertisingReportBuilder.legacy(eventType: 0x00, address: device.address, data: data)
            reports += [report, report]
        }
        let controller = try SimulatedController(descriptor: controllerEnd,
                                                 script: SimulatedController.Script(reportBatches: [reports]))
        await controller.start()
        let link = BluetoothLink(
            openScanner: { options in HCIScanner(channel: try PacketChannel(adopting: hostEnd), log: options.log) },
            connect: { address, type, options in
                guard let device = devices.first(where: { $0.address == address }) else {
                    throw BluetoothUnavailable.noController(index: 1)  // no simulated device at this address
                }
                let (clientEnd, peripheralEnd) = try SocketPair.make()
                let peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: device.profile,
                                                         responder: device.responder)
                await peripheral.start()
                let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                        peer: GATTPeer(address: address, addressType: type, connectionHandle: 0x0040),
                                        configuration: GATTClientConfiguration(requestTimeout: .seconds(30)), log: options.log)
                await client.start()
                return client
            })
        let backend = BluetoothBackend(adapters: adapters, link: link, controllerName: "sim0",
                                       timeZone: TimeZone(identifier: "Europe/Berlin")!, onceListen: .seconds(60))
        try await runDaemonUntil(store: store, backend: backend, logger: Logger(label: "test", handler: log), until: done)
    }

    static func storedBodyMasses(_ store: String, source: String) -> Int {
        (try? HealthStore(path: store)).map { health in
            defer { health.close() }
            return (try? health.samples(type: .bodyMass, source: source).count) ?? 0
        } ?? 0
    }

    func bodyMasses(_ store: String, source: String) throws -> [Double] {
        let health = try HealthStore(path: store)
        defer { health.close() }
        return try health.samples(type: .bodyMass, source: source).map(\.quantity.value).sorted()
    }

    /// The write-then-notify plugin: it subscribes, writes "send stored readings", turns each
    /// notified weighing into a sample and disconnects; the store has the three weighings.
    @Test func aPluginReadsAVendorScaleByWriteThenNotify() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "acme-scale", "bodyMass"])
        let pluginLog = PluginLog()
        let adapter = try Self.install("acme-scale.py", id: "acme-scale", in: scenario.directory, log: pluginLog)
        let scale = SimulatedVendorScale(readings: Self.readings)
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, adapters: [adapter] + BuiltinAdapters.bluetooth, devices: [
            Device(address: Self.scaleAddress, name: "ACME-SCALE", services: [0xFFB0], profile: SimulatedVendorScale.profile,
                   responder: scale),
        ], log: log, until: { [store = scenario.store] in Self.storedBodyMasses(store, source: "acme-scale") == 3 })
        #expect(scale.commands == [[0xA5, 0x01]], "\(pluginLog.messages) \(log.records.map(\.message))")
        #expect(try bodyMasses(scenario.store, source: "acme-scale") == [71.98, 72.45, 73.1])
        #expect(scale.readings.count == 3, "this plugin never erases")
        let health = try HealthStore(path: scenario.store)
        defer { health.close() }
        let first = try #require(try health.samples(type: .bodyMass).first { $0.quantity.value == 72.45 })
        #expect(first.start == Date(timeIntervalSince1970: 1_764_486_000))
        #expect(first.device?.localIdentifier == Self.scaleAddress.description)
        #expect(first.metadata.syncIdentifier == "acme/\(Self.scaleAddress)/1/1764486000")
    }

    /// The erasing plugin erases the scale's memory only once `committed` said every weighing is
    /// stored: when the erase command arrives, the store already holds all three.
    @Test func aPluginErasesTheDeviceOnlyAfterTheCommit() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "acme-erasing-scale", "bodyMass"])
        let pluginLog = PluginLog()
        let adapter = try Self.install("acme-erasing-scale.py", id: "acme-erasing-scale", in: scenario.directory, log: pluginLog)
        let storedAtErase = Mutex<[Int]>([])
        let store = scenario.store
        let scale = SimulatedVendorScale(readings: Self.readings, onErase: {
            let count = (try? HealthStore(path: store)).map { health in
                defer { health.close() }
                return (try? health.samples(type: .bodyMass).count) ?? -1
            } ?? -1
            storedAtErase.withLock { $0.append(count) }
        })
        try await runDaemon(store: scenario.store, adapters: [adapter], devices: [
            Device(address: Self.scaleAddress, name: "ACME-SCALE", services: [0xFFB0], profile: SimulatedVendorScale.profile,
                   responder: scale),
        ], until: { scale.erasures == 1 && pluginLog.messages.contains { $0.contains("memory erased after the commit") } })
        #expect(scale.commands == [[0xA5, 0x01], [0xA5, 0x02]], "\(pluginLog.messages)")
        #expect(storedAtErase.withLock { $0 } == [3], "the erase came after the commit of all three")
        #expect(scale.erasures == 1 && scale.readings.isEmpty)
        #expect(try bodyMasses(scenario.store, source: "acme-erasing-scale") == [71.98, 72.45, 73.1])
        #expect(pluginLog.messages.contains { $0.contains("memory erased after the commit") }, "\(pluginLog.messages)")
    }

    /// Without a grant the weighings wait in the pending area: `committed` says the device may
    /// not forget them, and the plugin keeps the scale's memory.
    @Test func aPluginKeepsTheDevicesMemoryWhileItsSamplesOnlyWait() async throws {
        let scenario = try Scenario()
        let pluginLog = PluginLog()
        let adapter = try Self.install("acme-erasing-scale.py", id: "acme-erasing-scale", in: scenario.directory, log: pluginLog)
        let scale = SimulatedVendorScale(readings: Self.readings)
        try await runDaemon(store: scenario.store, adapters: [adapter], devices: [
            Device(address: Self.scaleAddress, name: "ACME-SCALE", services: [0xFFB0], profile: SimulatedVendorScale.profile,
                   responder: scale),
        ], until: { pluginLog.messages.contains { $0.contains("memory kept") } })
        #expect(scale.commands == [[0xA5, 0x01]], "no erase: \(pluginLog.messages)")
        #expect(scale.readings.count == 3)
        #expect(pluginLog.messages.contains { $0.contains("memory kept") }, "\(pluginLog.messages)")
        #expect(try bodyMasses(scenario.store, source: "acme-erasing-scale") == [])
        let pending = await scenario.run(["auth", "pending", "--json"])
        #expect(pending.stdout.joined().contains("acme-erasing-scale"), "\(pending.stdout)")
    }

    /// A plugin flooding its device with 20,000 requests: a bounded number reaches the device,
    /// the rest are refused and counted, the plugin is killed after 1,000 refusals in a row; the
    /// daemon and a DS-D6 band served at the same time by a built-in adapter are unharmed.
    @Test func aFloodingPluginIsContained() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "dsd6-band", "stepCount"])
        let pluginLog = PluginLog()
        let adapter = try Self.install("request-flood.py", id: "request-flood", in: scenario.directory, log: pluginLog)
        let scale = SimulatedVendorScale(readings: Self.readings)
        let band = SimulatedDSD6Band(steps: 4321)
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, adapters: [adapter] + BuiltinAdapters.bluetooth, devices: [
            Device(address: Self.scaleAddress, name: "ACME-SCALE", services: [0xFFB0], profile: SimulatedVendorScale.profile,
                   responder: scale),
            Device(address: Self.bandAddress, name: "DS-D6", services: [], profile: SimulatedDSD6Band.profile, responder: band),
        ], log: log, until: {
            pluginLog.messages.contains { $0.contains("killed: 1000 rejected output lines in a row") }
                && band.commands.contains { $0.hasPrefix("AT+DT") }
        })
        let reached = scale.commands.count
        #expect(reached > 0 && reached <= 400, "requests that reached the device: \(reached)")
        #expect(pluginLog.messages.contains { $0.contains("killed: 1000 rejected output lines in a row") }, "\(pluginLog.messages.suffix(5))")
        #expect((adapter.supervisor.statistics.rejections[.rateLimited] ?? 0) + (adapter.supervisor.statistics.rejections[.tooManyRequests] ?? 0) >= 1000)
        let health = try HealthStore(path: scenario.store)
        defer { health.close() }
        #expect(try health.samples(type: .stepCount).map(\.quantity.value) == [4321], "the band next to the flood")
    }

    /// The built `ingestd-adapter-dsd6-band` (the DS-D6 adapter wrapped by
    /// `ExternalAdapterMain.run(conversing:)`) linked into `directory` and described.
    static func installSwiftBandPlugin(in directory: URL, log: PluginLog) throws -> ExternalAdapter {
        var candidates: [URL] = []
        if let url = Bundle.main.executableURL { candidates.append(url.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        let built = try #require(candidates.map { $0.appendingPathComponent("ingestd-adapter-dsd6-band").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }, "ingestd-adapter-dsd6-band is not built")
        let target = directory.appendingPathComponent("ingestd-adapter-dsd6-band")
        // A link, not a copy: copying the large binary holds a writing descriptor for a while,
        // and a process another test starts meanwhile can inherit it, so that starting the copy
        // fails with ETXTBSY for as long as that process lives (seen once in CI).
        try FileManager.default.createSymbolicLink(atPath: target.path, withDestinationPath: built)
        let configuration = ExternalAdapterConfiguration(finishTimeout: .seconds(5), log: { log.add($0) })
        let description = try PluginDescriber(timeout: Self.describeLimit).describePlugin(executable: target.path, expectedID: "dsd6-band").get()
        #expect(description.protocolVersion == 2 && description.connects)
        return ExternalAdapter(description: description, executable: target.path, configuration: configuration)
    }

    /// A Swift conversing adapter as a protocol-2 plugin: the DS-D6 band's conversation runs in
    /// the plugin process, each step a request through the daemon. The band gets the commands
    /// the built-in adapter sends, in the same order, the clock last (after `committed`), and the
    /// store the same step count, device and sync identifier.
    @Test func aSwiftConversingAdapterRunsAsAProtocol2Plugin() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "dsd6-band", "stepCount"])
        let pluginLog = PluginLog()
        let adapter = try Self.installSwiftBandPlugin(in: scenario.directory, log: pluginLog)
        let band = SimulatedDSD6Band(steps: 4321)
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, adapters: [adapter], devices: [
            Device(address: Self.bandAddress, name: "DS-D6", services: [], profile: SimulatedDSD6Band.profile, responder: band),
        ], log: log, until: { band.commands.contains { $0.hasPrefix("AT+DT=") } })
        #expect(Array(band.commands.prefix(3)) == ["AT+TOPACE=0", "AT+TIMEZONE", "AT+SN"],
                "\(band.commands) \(pluginLog.messages) \(log.records.map(\.message))")
        let clock = try #require(band.commands.last)
        #expect(clock.hasPrefix("AT+DT=") && clock.count == 20, "\(clock)")
        let health = try HealthStore(path: scenario.store)
        defer { health.close() }
        let samples = try health.samples(type: .stepCount, source: "dsd6-band")
        #expect(samples.map(\.quantity.value) == [4321], "\(pluginLog.messages)")
        #expect(samples.first?.metadata.syncIdentifier?.hasPrefix("dsd6/567890123456/") == true)
        #expect(samples.first?.device?.localIdentifier == Self.bandAddress.description)
        #expect(adapter.supervisor.statistics.failures == 0, "\(pluginLog.messages)")
        #expect(adapter.supervisor.statistics.rejections.isEmpty, "\(adapter.supervisor.statistics.rejections)")
    }

    /// Replay drives the Swift plugin's conversation from the real DS-D6 logs as it drives the
    /// built-in adapter's: the same step counts, days and sync identifiers.
    @Test func theSwiftBandPluginReplaysTheRealBandLogsAsTheBuiltInDoes() async throws {
        let scenario = try Scenario()
        let adapter = try Self.installSwiftBandPlugin(in: scenario.directory, log: PluginLog())
        let captures = Self.examples.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/AdapterTests/Captures/dsd6-band")
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        for name in ["real-first-sync.btsnoop", "real-repeated-syncs.btsnoop"] {
            let path = captures.appendingPathComponent(name).path
            func steps(_ adapters: [any BLEAdapter]) async throws -> [String] {
                var records: [HealthRecord] = []
                _ = try await CaptureReplay(adapters: adapters, forcedAdapterID: nil, timeZone: zone).run(path: path) {
                    records += $0
                }
                return records.flatMap(\.samples).map {
                    "\($0.start) \($0.quantity) \($0.metadata.syncIdentifier ?? "") \($0.source)"
                }
            }
            let builtIn = try await steps(BuiltinAdapters.bluetooth)
            #expect(!builtIn.isEmpty)
            #expect(try await steps([adapter]) == builtIn, "\(name)")
        }
    }

    /// Runs `adapter` live against the simulated ACME scale, recording the connection to btsnoop
    /// at `path`; the records it delivered.
    static func recordConversation(of adapter: ExternalAdapter, to path: String, zone: TimeZone) async throws -> [HealthRecord] {
        let recorded = try await RecordedSimulatedConnection(path: path, peer: scaleAddress, profile: SimulatedVendorScale.profile,
                                                             responder: SimulatedVendorScale(readings: readings))
        let conversation = adapter.makeConversation(for: BLEDeviceTraits(address: scaleAddress),
                                                    context: AdapterContext(timeZone: zone, source: "acme-scale"))
        var live: [HealthRecord] = []
        try await conversation.run(over: recorded.link) { output in
            live += output.records
            return DeliveryReceipt(stored: output.records.count, held: 0)
        }
        try await recorded.close()
        return live
    }

    /// A live plugin conversation recorded to btsnoop, then replayed: the replay runs the same
    /// plugin against the capture (its writes matched, the captured notifications answering)
    /// and gives the same samples.
    @Test func aRecordedPluginConversationReplaysToTheSameSamples() async throws {
        let scenario = try Scenario()
        let pluginLog = PluginLog()
        let adapter = try Self.install("acme-scale.py", id: "acme-scale", in: scenario.directory, log: pluginLog)
        let path = scenario.directory.appendingPathComponent("acme.btsnoop").path
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))

        let live = try await Self.recordConversation(of: adapter, to: path, zone: zone)
        #expect(live.count == 3, "\(pluginLog.messages)")

        let replay = CaptureReplay(adapters: [adapter], forcedAdapterID: nil, timeZone: zone)
        var replayed: [HealthRecord] = []
        let summary = try await replay.run(path: path) { replayed += $0 }
        #expect(summary.conversations.map(\.adapter) == ["acme-scale"])
        #expect(summary.conversations.first?.writesNotInCapture == 0, "\(summary.conversations)")
        #expect(summary.conversations.first?.failure == nil, "\(summary.conversations)")
        func key(_ records: [HealthRecord]) -> [String] {
            records.flatMap(\.samples).map { "\($0.start.timeIntervalSince1970) \($0.quantity.value) \($0.metadata.syncIdentifier ?? "")" }
        }
        #expect(key(replayed) == key(live), "\(pluginLog.messages)")

        // The same through `ingestd decode`, which finds the plugin in --plugins.
        let decoded = await scenario.run(["decode", path, "--plugins", scenario.directory.path, "--json"], withStore: false)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout.count == 3 && decoded.stdout.allSatisfy { $0.contains("\"source\":\"acme-scale\"") },
                "\(decoded.stdout) \(decoded.stderr)")
        #expect(decoded.stdout.contains { $0.contains("\"value\":72.45") && $0.contains("2025-11-30T07:00:00Z") }, "\(decoded.stdout)")
    }

    /// A plugin that claims the captured connection and stays silent (never a request, never
    /// reads its stdin, never exits): the replay tells it `disconnected` after the start
    /// allowance, kills it after `finishTimeout` and finishes within seconds (it took the
    /// conversation's idle timeout, 600 s, per connection).
    @Test(.timeLimit(.minutes(2))) func aSilentPluginDoesNotHoldTheReplay() async throws {
        let scenario = try Scenario()
        let pluginLog = PluginLog()
        let recorder = try Self.install("acme-scale.py", id: "acme-scale", in: scenario.directory, log: pluginLog)
        let path = scenario.directory.appendingPathComponent("acme.btsnoop").path
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        _ = try await Self.recordConversation(of: recorder, to: path, zone: zone)

        let plugins = scenario.directory.appendingPathComponent("silent")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let silentSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ExternalAdaptersTests/Plugins/silent-claim.py")
        let target = plugins.appendingPathComponent("ingestd-adapter-silent-claim")
        try ExecutableFile.copy(silentSource.path, to: target.path)
        let description = try PluginDescriber(timeout: Self.describeLimit).describePlugin(executable: target.path, expectedID: "silent-claim").get()
        let silent = ExternalAdapter(description: description, executable: target.path,
                                     configuration: ExternalAdapterConfiguration(finishTimeout: .seconds(2), log: { pluginLog.add($0) }))

        let began = ContinuousClock.now
        var replayed: [HealthRecord] = []
        let summary = try await CaptureReplay(adapters: [silent], forcedAdapterID: nil, timeZone: zone)
            .run(path: path) { replayed += $0 }
        let took = ContinuousClock.now - began
        #expect(summary.conversations.map(\.adapter) == ["silent-claim"], "\(summary.conversations)")
        #expect(replayed.isEmpty)
        #expect(took < .seconds(30), "the replay took \(took)")

        // `ingestd decode` with the plugin found in --plugins (the default finish time, 10 s).
        let decodeBegan = ContinuousClock.now
        let decoded = await scenario.run(["decode", path, "--plugins", plugins.path, "--json"], withStore: false)
        let decodeTook = ContinuousClock.now - decodeBegan
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout.isEmpty, "\(decoded.stdout)")
        #expect(decodeTook < .seconds(40), "decode took \(decodeTook)")
    }
}
