import BLESimulators
import BLEWire
import BlueZTransport
import BuiltinAdapters
import Foundation
import HealthModel
import IngestRuntime
import Logging
import SQLiteStore
import Synchronization
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's figures, printed as `<name> <value> <unit>` lines on stdout:
///
/// - `daemon.idle_rss_mb`, `daemon.idle_cpu_percent` (and `daemon.idle_pss_mb`,
///   `daemon.idle_wakeups_per_s`): an
///   `ingestd run --no-ble` child process (the `ingestd` binary next to IngestBench) with no
///   devices, read from /proc after it settled: VmRSS, and utime + stime (and the context switches
///   of its threads, i.e. wake-ups) over 10 s.
/// - `daemon.idle_with_sinks_rss_mb`, `daemon.idle_with_sinks_pss_mb`: the same daemon with an
///   HTTP, an MQTT and a PostgreSQL sink configured and nothing to deliver (the sink libraries
///   are opened only when a sink first needs them).
/// - `daemon.rss_100_devices_mb`, `daemon.notify_to_commit_p50_ms` / `_p99_ms`: the daemon's
///   Bluetooth backend in this process over the simulators: a simulated controller reporting 100
///   BTHome thermometers advertising 10 times a second each (every report a new packet, so every
///   one is committed), and a connected simulated heart-rate sensor whose notifications are
///   timed from the moment the simulator writes them to the commit that contains them. The RSS
///   is this whole process's (daemon engine, simulators and load generator together).
///
/// Call with `await daemonBenchmarks()` (`idleOnly`: only the idle figures, `--only daemon-idle`);
/// progress and problems go to stderr.
func daemonBenchmarks(idleOnly: Bool = false) async {
    do {
        try await DaemonBench.run(idleOnly: idleOnly)
    } catch {
        DaemonBench.note("daemon benchmarks failed: \(error)")
    }
}

/// The parts of ``daemonBenchmarks()``.
enum DaemonBench {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("daemon: \(message)\n".utf8))
    }

    static func figure(_ name: String, _ value: Double, _ unit: String, decimals: Int = 1) {
        FileHandle.standardOutput.write(Data("\(name) \(String(format: "%.\(decimals)f", value)) \(unit)\n".utf8))
    }

    static func run(idleOnly: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestbench-daemon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        if let binary = ingestdBinary() {
            let idle = try IdleDaemon.measure(binary: binary, directory: directory.path)
            figure("daemon.idle_rss_mb", idle.rssMegabytes, "MB")
            figure("daemon.idle_pss_mb", idle.pssMegabytes, "MB")
            figure("daemon.idle_cpu_percent", idle.cpuPercent, "%", decimals: 2)
            figure("daemon.idle_wakeups_per_s", idle.wakeupsPerSecond, "1/s")
            let withSinks = try IdleDaemon.measure(binary: binary, directory: directory.path, sinks: true)
            figure("daemon.idle_with_sinks_rss_mb", withSinks.rssMegabytes, "MB")
            figure("daemon.idle_with_sinks_pss_mb", withSinks.pssMegabytes, "MB")
        } else {
            note("no ingestd binary next to IngestBench; build it too (swift build -c release --product ingestd) for the idle figures")
        }
        if idleOnly { return }

        let load = try await BluetoothLoad.measure(directory: directory.path)
        figure("daemon.rss_100_devices_mb", load.rssMegabytes, "MB")
        figure("daemon.notify_to_commit_p50_ms", load.p50Milliseconds, "ms")
        figure("daemon.notify_to_commit_p99_ms", load.p99Milliseconds, "ms")
    }

    /// `ingestd` in the directory of this executable.
    static func ingestdBinary() -> String? {
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidate = own.deletingLastPathComponent().appendingPathComponent("ingestd").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    /// Reads /proc/PID files.
    enum Proc {
        /// A `Key: value kB` field of /proc/PID/status, in kB.
        static func statusKilobytes(pid: Int32, _ field: String) -> Double? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
                return Double(line.dropFirst(field.count + 1).filter(\.isNumber))
            }
            return nil
        }

        /// A field of /proc/PID/smaps_rollup (e.g. `Pss`), in kB.
        static func rollupKilobytes(pid: Int32, _ field: String) -> Double? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return nil }
            for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
                return Double(line.dropFirst(field.count + 1).filter(\.isNumber))
            }
            return nil
        }

        /// utime + stime of /proc/PID/stat, in clock ticks (fields 14 and 15, counted after the
        /// command name, which may hold spaces).
        static func cpuTicks(pid: Int32) -> Double? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return user + system
        }

        /// Voluntary and involuntary context switches of each thread of the process, by thread id.
        static func contextSwitches(pid: Int32) -> [String: Double] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            var switches: [String: Double] = [:]
            for task in tasks {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
                for line in text.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:")
                    || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    switches[task, default: 0] += Double(line.filter(\.isNumber)) ?? 0
                }
            }
            return switches
        }

        /// Context switches between two readings: threads present at the second, less what they
        /// had at the first (threads that ended in between are not counted).
        static func switchesBetween(_ first: [String: Double], _ second: [String: Double]) -> Double {
            second.reduce(0) { total, entry in total + entry.value - (first[entry.key] ?? 0) }
        }
    }

    /// An idle `ingestd run --no-ble` child.
    enum IdleDaemon {
        struct Figures {
            var rssMegabytes: Double
            /// Proportional set size: shared library pages divided among the processes using them.
            var pssMegabytes: Double
            var cpuPercent: Double
            var wakeupsPerSecond: Double
        }

        /// - Parameter sinks: configure an HTTP, an MQTT and a PostgreSQL sink first (to closed ports, nothing to deliver).
        static func measure(binary: String, directory: String, sinks: Bool = false, settle: Double = 6, window: Double = 10) throws -> Figures {
            let store = directory + (sinks ? "/idle-sinks.sqlite" : "/idle.sqlite")
            if sinks {
                for (name, url) in [("web", "http://127.0.0.1:9/ingest"), ("broker", "mqtt://127.0.0.1:9"),
                                    ("fleet", "postgresql://ingestd@127.0.0.1:9/health")] {
                    let add = Process()
                    add.executableURL = URL(fileURLWithPath: binary)
                    add.arguments = ["sinks", "add", name, url, "--all-types", "--store", store]
                    add.environment = ["HOME": directory, "PATH": "/usr/bin:/bin", "INGESTD_CONFIG": "/dev/null"]
                    add.standardOutput = FileHandle.nullDevice
                    try add.run()
                    add.waitUntilExit()
                    guard add.terminationStatus == 0 else { throw Failure("ingestd sinks add \(name) \(url) failed") }
                }
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["run", "--no-ble", "--store", store]
            process.environment = ["HOME": directory, "PATH": "/usr/bin:/bin", "INGESTD_LOG_LEVEL": "warning", "INGESTD_CONFIG": "/dev/null"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                if process.isRunning {
                    process.terminate()
                    process.waitUntilExit()
                }
            }
            let pid = process.processIdentifier
            // Started once the store exists; then let start-up work (hotplug enumeration) finish.
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: store), Date() < deadline, process.isRunning {
                Thread.sleep(forTimeInterval: 0.05)
            }
            Thread.sleep(forTimeInterval: settle)
            guard process.isRunning else { throw Failure("ingestd run exited with status \(process.terminationStatus)") }
            let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
            let start = Date()
            guard let ticks0 = Proc.cpuTicks(pid: pid) else { throw Failure("cannot read /proc/\(pid)/stat") }
            let switches0 = Proc.contextSwitches(pid: pid)
            Thread.sleep(forTimeInterval: window)
            guard let ticks1 = Proc.cpuTicks(pid: pid), let rss = Proc.statusKilobytes(pid: pid, "VmRSS") else {
                throw Failure("ingestd run ended during the measurement")
            }
            let switches1 = Proc.contextSwitches(pid: pid)
            let elapsed = Date().timeIntervalSince(start)
            let pss = Proc.rollupKilobytes(pid: pid, "Pss") ?? .nan
            return Figures(rssMegabytes: rss / 1024, pssMegabytes: pss / 1024, cpuPercent: (ticks1 - ticks0) / ticksPerSecond / elapsed * 100,
                           wakeupsPerSecond: Proc.switchesBetween(switches0, switches1) / elapsed)
        }
    }

    /// The Bluetooth backend under load, in this process.
    enum BluetoothLoad {
        struct Figures {
            var rssMegabytes: Double
            var p50Milliseconds: Double
            var p99Milliseconds: Double
        }

        static let deviceCount = 100
        static let reportsPerDevicePerSecond = 10
        static let notificationsPerSecond = 20
        static let heartRateSensor = BLEAddress("D0:00:00:00:18:0D")!
        /// The value the sensor sends once subscribed, before the timed ones.
        static let firstHeartRate: UInt8 = 60

        static let heartRateProfile = SimulatedProfile(name: "HR", services: [
            SimulatedProfile.Service(uuid: BLEUUID(0x180D), characteristics: [
                SimulatedProfile.Characteristic(uuid: BLEUUID(0x2A37), properties: 0x10,
                                                updates: [[0x00, firstHeartRate]]),
            ]),
        ])

        static func measure(directory: String, warmup: Duration = .seconds(3), window: Duration = .seconds(15))
            async throws -> Figures {
            let storePath = directory + "/load.sqlite"
            let store = try HealthStore(path: storePath)
            try store.grant(source: "bthome", types: [.ambientTemperature])
            try store.grant(source: "gatt-health", types: [.heartRate])
            store.close()

            let probe = LatencyProbe()
            let logger = Logger(label: "bench", handler: DiscardingLogHandler(), logLevel: .error)
            let service = try IngestService(storePath: storePath, logger: logger) { records, _ in
                probe.committed(records)
            }
            let (hostEnd, controllerEnd) = try SocketPair.make()
            let controller = try SimulatedController(descriptor: controllerEnd)
            await controller.start()
            let sensor = SensorLink()
            let link = BluetoothLink(
                openScanner: { options in
                    HCIScanner(channel: try PacketChannel(adopting: hostEnd), log: options.log, tap: options.tap)
                },
                connect: { address, type, options in
                    let (clientEnd, peripheralEnd) = try SocketPair.make()
                    let injection = dup(peripheralEnd)
                    let peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: heartRateProfile)
                    await peripheral.start()
                    sensor.attach(peripheral, descriptor: injection)
                    let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                            peer: GATTPeer(address: address, addressType: type, connectionHandle: 0x0040),
                                            log: options.log, tap: options.tap)
                    await client.start()
                    return client
                })
            let backend = BluetoothBackend(adapters: BuiltinAdapters.bluetooth, link: link, controllerName: "sim0",
                                           timeZone: TimeZone(identifier: "UTC") ?? .current, onceListen: .seconds(3600))
            let daemon = Task { await backend.run(service: service, logger: logger, once: true) }
            let advertising = Task { await advertise(controller) }

            // Wait for the sensor's subscription (its first value committed), then the warm-up.
            let subscribed = ContinuousClock.now + .seconds(20)
            while !probe.sawFirstValue, ContinuousClock.now < subscribed {
                try await Task.sleep(for: .milliseconds(50))
            }
            guard probe.sawFirstValue, let (descriptor, valueHandle) = sensor.injection else {
                advertising.cancel()
                daemon.cancel()
                throw Failure("the simulated heart-rate sensor was not connected and subscribed within 20 s")
            }
            try await Task.sleep(for: warmup)
            probe.reset()

            // Timed notifications at a steady rate; values 61…250 so each maps back to its send time.
            let clock = ContinuousClock()
            let end = clock.now + window
            var next = clock.now
            var sent = 0
            while clock.now < end {
                let value = UInt8(61 + sent % 190)
                probe.sending(value)
                let pdu: [UInt8] = [0x1B, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8), 0x00, value]
                _ = pdu.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                sent += 1
                next += .milliseconds(1000 / notificationsPerSecond)
                try await clock.sleep(until: next)
            }
            try await Task.sleep(for: .milliseconds(500))
            let rss = Proc.statusKilobytes(pid: getpid(), "VmRSS") ?? .nan
            advertising.cancel()
            daemon.cancel()
            await daemon.value
            await service.close()
            close(descriptor)
            _ = controller

            let latencies = probe.latencies.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000 }
                .sorted()
            if latencies.count < sent {
                note("\(sent - latencies.count) of \(sent) timed notifications were not seen in a commit")
            }
            note("\(probe.advertisingRecords) advertisement samples and \(latencies.count) notifications committed "
                + "in \(probe.commits) commits")
            guard !latencies.isEmpty else { throw Failure("no timed notification was committed") }
            return Figures(rssMegabytes: rss / 1024, p50Milliseconds: percentile(latencies, 0.50),
                           p99Milliseconds: percentile(latencies, 0.99))
        }

        /// Nearest-rank percentile of sorted values.
        static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
            let rank = Int((fraction * Double(sorted.count)).rounded(.up))
            return sorted[max(0, min(sorted.count - 1, rank - 1))]
        }

        /// 100 BTHome thermometers × 10 reports a second (each a new packet id and temperature),
        /// plus the heart-rate sensor's connectable advertisement twice a second.
        static func advertise(_ controller: SimulatedController) async {
            let clock = ContinuousClock()
            let tick = Duration.milliseconds(10)
            let perTick = deviceCount * reportsPerDevicePerSecond / 100
            var next = clock.now
            var counter = 0
            var round = 0
            let sensorData = ADStructure.flags(0x06) + ADStructure.serviceUUIDs16([0x180D])
                + ADStructure.completeLocalName("HRM")
            let sensorReport = AdvertisingReportBuilder.legacy(eventType: 0x00, address: heartRateSensor, data: sensorData)
            while !Task.isCancelled {
                for _ in 0..<perTick {
                    let device = counter % deviceCount
                    let sequence = counter / deviceCount
                    let centidegrees = UInt16(2000 + (sequence * 7 + device) % 500)
                    let payload: [UInt8] = [0x40, 0x00, UInt8(truncatingIfNeeded: sequence), 0x02,
                                            UInt8(centidegrees & 0xFF), UInt8(centidegrees >> 8)]
                    let address = BLEAddress(truncatingIfNeeded: 0xA4C1_3800_0000 + UInt64(device))
                    let data = ADStructure.flags(0x06) + ADStructure.serviceData16(0xFCD2, payload)
                    try? await controller.emit(AdvertisingReportBuilder.legacy(eventType: 0x03, address: address, data: data))
                    counter += 1
                }
                if round % 50 == 0 { try? await controller.emit(sensorReport) }
                round += 1
                next += tick
                do { try await clock.sleep(until: next) } catch { return }
            }
        }
    }
}

/// Drops every log record.
struct DiscardingLogHandler: LogHandler {
    func log(_ record: LogRecord) {}
}

/// The connected simulated sensor: kept alive, with a second descriptor of its socket end on
/// which the benchmark writes notifications itself, at the times it chooses.
final class SensorLink: Sendable {
    private let state = Mutex<(peripheral: SimulatedPeripheral?, descriptor: Int32?, valueHandle: UInt16?)>((nil, nil, nil))

    func attach(_ peripheral: SimulatedPeripheral, descriptor: Int32) {
        state.withLock { $0 = (peripheral, descriptor, peripheral.valueHandle(of: BLEUUID(0x2A37))) }
    }

    /// The descriptor and the Heart Rate Measurement value handle, once connected.
    var injection: (Int32, UInt16)? {
        state.withLock { state in
            guard let descriptor = state.descriptor, let handle = state.valueHandle else { return nil }
            return (descriptor, handle)
        }
    }
}

/// Pairs each timed heart-rate value with the commit that contains it.
final class LatencyProbe: Sendable {
    private struct State {
        var sentAt: [UInt8: ContinuousClock.Instant] = [:]
        var latencies: [Duration] = []
        var sawFirstValue = false
        var commits = 0
        var advertisingRecords = 0
    }

    private let state = Mutex(State())

    /// Called just before the simulator writes `value`.
    func sending(_ value: UInt8) {
        let now = ContinuousClock.now
        state.withLock { $0.sentAt[value] = now }
    }

    /// Called by the service right after a batch committed.
    func committed(_ records: [HealthRecord]) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.commits += 1
            for case .sample(let sample) in records {
                guard sample.type == .heartRate else {
                    state.advertisingRecords += 1
                    continue
                }
                let value = UInt8(clamping: Int(sample.quantity.value.rounded()))
                if value == DaemonBench.BluetoothLoad.firstHeartRate { state.sawFirstValue = true }
                if let sent = state.sentAt.removeValue(forKey: value) { state.latencies.append(now - sent) }
            }
        }
    }

    /// Forgets counts from the warm-up.
    func reset() {
        state.withLock { state in
            state.latencies = []
            state.commits = 0
            state.advertisingRecords = 0
        }
    }

    var sawFirstValue: Bool { state.withLock { $0.sawFirstValue } }
    var latencies: [Duration] { state.withLock { $0.latencies } }
    var commits: Int { state.withLock { $0.commits } }
    var advertisingRecords: Int { state.withLock { $0.advertisingRecords } }
}
