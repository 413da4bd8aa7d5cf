import AdapterKit
import ExternalAdapterProtocol
import ExternalAdapters
import Foundation
import HealthModel
import Synchronization
import TestSupport
import Testing

/// A plugin directory in a fresh temporary directory, with test scripts installed under the
/// names ingestd looks for.
final class PluginDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        path = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The folder of the Python test plugins.
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Plugins")

    /// Copies `Plugins/<script>` to `ingestd-adapter-<id>` (mode 0755) and returns its path.
    @discardableResult
    func install(_ script: String, as id: String, mode: Int = 0o755) throws -> String {
        let target = (path as NSString).appendingPathComponent(ExternalAdapterProtocol.executableName(for: id))
        let source = Self.scripts.appendingPathComponent(script)
        try ExecutableFile.copy(source.path, to: target, mode: mode_t(mode))
        return target
    }

    /// Writes a file with `contents` and `mode`.
    @discardableResult
    func write(_ name: String, _ contents: String, mode: Int) throws -> String {
        let target = (path as NSString).appendingPathComponent(name)
        try ExecutableFile.write(Array(contents.utf8), to: target, mode: mode_t(mode))
        return target
    }
}

/// A back-off clock that never really sleeps: `sleep(until:)` moves the time forward.
final class ManualClock: SupervisorClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    func now() -> Date { current.withLock { $0 } }

    func sleep(until deadline: Date, wakeUp: WakeUpSignal) {
        current.withLock { $0 = max($0, deadline) }
    }
}

/// Collects the adapters' log entries from any thread.
typealias LogCollector = TestSupport.LogCollector<ExternalAdapterLogEntry>

/// Waits (polling) until `condition` holds or `limit` passes; true when it holds. Used to wait
/// for a plugin process to reach a state, never to measure time.
func eventually(within limit: Duration = .seconds(30), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// A test configuration: instant back-off, logs collected, the test's environment.
func testConfiguration(clock: ManualClock = ManualClock(), log: LogCollector = LogCollector(),
                       environment: [String: String] = [:],
                       change: (inout ExternalAdapterConfiguration) -> Void = { _ in }) -> ExternalAdapterConfiguration {
    var configuration = ExternalAdapterConfiguration(clock: clock, finishTimeout: .seconds(30), log: log.handler)
    configuration.describeTimeout = .seconds(30) // a python start-up on a loaded machine; not a test of timeouts
    configuration.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    change(&configuration)
    return configuration
}

/// Describes the installed plugin and builds its adapter.
func loadAdapter(_ path: String, id: String, configuration: ExternalAdapterConfiguration) throws -> ExternalAdapter {
    let describer = PluginDescriber(timeout: .seconds(30), environment: configuration.environment)
    let description = try describer.describePlugin(executable: path, expectedID: id).get()
    return ExternalAdapter(description: description, executable: path, configuration: configuration)
}

/// Mi Smart Scale test vector (from the xiaomi-ble project's tests): 86.55 kg, stabilized, at
/// 2021-04-11 16:19:01 on the scale's clock.
let miScaleStableFrame = "22 9e 43 e5 07 04 0b 10 13 01"
let miScaleAddress = "50:FB:19:1B:B5:DC"

/// The quantity samples in an output, in order.
func samples(_ output: AdapterOutput) -> [QuantitySample] { output.records.flatMap(\.samples) }

/// Rejections counted by reason.
func rejectionCounts(_ output: AdapterOutput) -> [String: Int] {
    output.rejections.reduce(into: [:]) { $0[$1.reason, default: 0] += 1 }
}

/// A sample with a fixed uuid, to compare samples made in different processes.
func withoutUUID(_ sample: QuantitySample) -> QuantitySample {
    var copy = sample
    copy.uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    return copy
}
