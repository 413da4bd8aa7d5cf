import AdapterKit
import ExternalAdapterProtocol
import Foundation
import Logging
import Transport

/// One line of an external adapter's logging, for the daemon's logger.
public struct ExternalAdapterLogEntry: Sendable, Hashable, CustomStringConvertible {
    /// Where the line came from.
    public enum Origin: String, Sendable, Hashable {
        /// A `{"log":…}` line on the plugin's stdout.
        case plugin
        /// A line the plugin wrote to stderr.
        case stderr
        /// The daemon's own note about the plugin (started, crashed, killed, restarting).
        case supervisor
    }

    public var adapterID: String
    /// The device the process serves (BLE address or USB location), when there is one.
    public var device: String?
    public var level: Logger.Level
    public var message: String
    public var origin: Origin

    public init(adapterID: String, device: String?, level: Logger.Level, message: String, origin: Origin) {
        self.adapterID = adapterID
        self.device = device
        self.level = level
        self.message = message
        self.origin = origin
    }

    public var description: String {
        let prefix = device.map { "\(adapterID) [\($0)]" } ?? adapterID
        return origin == .stderr ? "\(prefix) stderr: \(message)" : "\(prefix): \(message)"
    }
}

/// How external adapters are run: time limits, restart back-off, buffer sizes, the environment
/// plugins get and where their log lines go. The defaults are the protocol's (5 s describe,
/// 64 KiB lines, kill after 1,000 rejected lines in a row, back-off 1 s to 5 min).
public struct ExternalAdapterConfiguration: Sendable {
    public var restartPolicy: RestartPolicy
    /// The back-off clock; tests pass one that does not really sleep.
    public var clock: any SupervisorClock
    /// How long `--describe` may take.
    public var describeTimeout: Duration
    /// The default for `describeTimeout`: a hung plugin is reported after this long, and a Python
    /// plugin's cold start on a small or busy machine (seen past 5 s) still gets described.
    public static let defaultDescribeTimeout: Duration = .seconds(15)
    /// How long `finish` waits for a plugin to deliver its last records and exit.
    public var finishTimeout: Duration
    /// How long a plugin may take to exit after `{"done":true}` or the end of its stdin.
    public var exitGracePeriod: Duration
    /// The longest stdout line accepted.
    public var maximumLineLength: Int
    /// After this many rejected lines in a row the plugin is killed.
    public var consecutiveRejectionLimit: Int
    /// Advertisements waiting for a slow plugin; beyond this the oldest are dropped.
    public var inputQueueCapacity: Int
    /// Records and rejections waiting for the daemon; beyond this the plugin's stdout is not read.
    public var outputQueueCapacity: Int
    /// Log lines (`{"log":…}` and stderr, each) logged per process run; later ones are counted, not logged.
    public var logLinesPerRun: Int
    /// The environment plugin processes get (`INGESTD_ADAPTER_PROTOCOL` is added).
    public var environment: [String: String]
    /// Protocol-2 requests a plugin may make per second on average (a token bucket refilled at
    /// this rate) and in one burst; beyond, requests are refused as `rate-limited`.
    public var requestsPerSecond: Double
    public var requestBurst: Int
    /// Requests of one plugin waiting for their answer; beyond, `too-many-requests`.
    public var maximumPendingRequests: Int
    /// Notifications and indications waiting for a conversation's plugin; beyond, dropped and counted.
    public var maximumQueuedValues: Int
    /// Receives plugin log lines, stderr lines and supervisor notes.
    public var log: @Sendable (ExternalAdapterLogEntry) -> Void
    /// Called with the adapter id after a plugin process ended or failed to start, when its
    /// state may have changed (the daemon writes an `ExternalAdapterStatusSnapshot` here).
    public var stateChanged: @Sendable (String) -> Void

    public init(
        restartPolicy: RestartPolicy = RestartPolicy(),
        clock: any SupervisorClock = SystemSupervisorClock(),
        describeTimeout: Duration = Self.defaultDescribeTimeout,
        finishTimeout: Duration = .seconds(10),
        exitGracePeriod: Duration = .seconds(5),
        maximumLineLength: Int = ExternalAdapterProtocol.maximumLineLength,
        consecutiveRejectionLimit: Int = 1000,
        inputQueueCapacity: Int = 256,
        outputQueueCapacity: Int = 4096,
        logLinesPerRun: Int = 1000,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        requestsPerSecond: Double = 50,
        requestBurst: Int = 100,
        maximumPendingRequests: Int = 16,
        maximumQueuedValues: Int = 256,
        log: @escaping @Sendable (ExternalAdapterLogEntry) -> Void = { _ in },
        stateChanged: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.restartPolicy = restartPolicy
        self.clock = clock
        self.describeTimeout = describeTimeout
        self.finishTimeout = finishTimeout
        self.exitGracePeriod = exitGracePeriod
        self.maximumLineLength = maximumLineLength
        self.consecutiveRejectionLimit = consecutiveRejectionLimit
        self.inputQueueCapacity = inputQueueCapacity
        self.outputQueueCapacity = outputQueueCapacity
        self.logLinesPerRun = logLinesPerRun
        self.environment = environment
        self.requestsPerSecond = requestsPerSecond
        self.requestBurst = requestBurst
        self.maximumPendingRequests = maximumPendingRequests
        self.maximumQueuedValues = maximumQueuedValues
        self.log = log
        self.stateChanged = stateChanged
    }

    /// The environment a plugin process speaking `protocolVersion` gets.
    func pluginEnvironment(protocolVersion: Int) -> [String: String] {
        var environment = environment
        environment["INGESTD_ADAPTER_PROTOCOL"] = String(protocolVersion)
        return environment
    }
}

/// An adapter whose decoding runs in a plugin process (`ingestd-adapter-<id> --run`), one process
/// per device, restarted with back-off when it fails. It plugs into `AdapterRouter` like a
/// built-in adapter (BLE advertisements) and runs USB devices through `USBAdapter`. A protocol-2
/// plugin that asked to connect (`"connect":true`) holds conversations with its connected
/// devices instead (``PluginConversation``), one process per connection.
///
/// Everything the plugin prints is untrusted: see `PluginOutputValidator`. Authorization and
/// writing stay in the pipeline, so a type the user did not grant is denied there.
public final class ExternalAdapter: ConversingAdapter, USBAdapter, Sendable {
    public let descriptor: AdapterDescriptor
    /// The plugin executable.
    public let executable: String
    public let configuration: ExternalAdapterConfiguration
    /// Restart state and counters, shared by the adapter's sessions.
    public let supervisor: PluginSupervisor
    /// The protocol version the plugin speaks (its `--describe` said).
    public let protocolVersion: Int
    /// Whether the plugin holds conversations with connected devices (protocol 2, `"connect":true`).
    public let connects: Bool

    public init(descriptor: AdapterDescriptor, executable: String, configuration: ExternalAdapterConfiguration = ExternalAdapterConfiguration(),
                protocolVersion: Int = 1, connects: Bool = false) {
        self.descriptor = descriptor
        self.executable = executable
        self.configuration = configuration
        self.protocolVersion = protocolVersion
        self.connects = connects && protocolVersion >= 2
        self.supervisor = PluginSupervisor(adapterID: descriptor.id, policy: configuration.restartPolicy,
                                           clock: configuration.clock)
    }

    /// An adapter for a plugin as `--describe` described it.
    public convenience init(description: ExternalPluginDescription, executable: String,
                            configuration: ExternalAdapterConfiguration = ExternalAdapterConfiguration()) {
        self.init(descriptor: description.descriptor, executable: executable, configuration: configuration,
                  protocolVersion: description.protocolVersion, connects: description.connects)
    }

    /// `.ok` or `.restarting(…)`.
    public var state: ExternalAdapterState { supervisor.state }

    /// False while the plugin waits in restart back-off: a device goes to the next adapter.
    public var isAvailable: Bool { if case .ok = state { true } else { false } }

    /// Only a protocol-2 plugin that asked to connect talks to connected devices.
    public var conversesWithConnectedDevices: Bool { connects }

    /// A session running the plugin for one BLE device; the process starts now. A connecting
    /// plugin's process runs per connection instead: its advertisement session only counts.
    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        if connects { return ConnectingPluginAdvertisementSession() }
        return ExternalAdapterSession(adapter: self, device: .ble(device), timeZone: context.timeZone)
    }

    /// The plugin's conversation with one connected device (its process starts when it runs).
    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        PluginConversation(adapter: self, device: device, timeZone: context.timeZone)
    }

    /// A session running the plugin for one USB device (the plugin opens the device itself).
    public func makeSession(for device: USBDeviceDescription, context: AdapterContext,
                            options: [String: String]) -> any USBAdapterSession {
        ExternalUSBSession(adapter: self, device: device, timeZone: context.timeZone)
    }

    func makeRunner(for device: ExternalDevice, timeZone: TimeZone, conversation: Bool = false,
                    listener: (@Sendable (PluginRunnerEvent) -> Void)? = nil) -> PluginRunner {
        PluginRunner(adapter: self, device: device, timeZone: timeZone, conversation: conversation, listener: listener)
    }
}

/// The advertisement session of a plugin that holds conversations: its advertisements are
/// not sent anywhere (the process runs per connection), only counted.
final class ConnectingPluginAdvertisementSession: BLEAdapterSession {
    func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        output.skip("advertisement-of-connecting-plugin")
    }
}

/// The session of an external adapter for one BLE device: forwards the device's advertisements
/// to the plugin process and hands out what it printed, validated.
///
/// `receive` never blocks: advertisements wait in a bounded queue (the oldest dropped and
/// counted under `advertisement-dropped` when the plugin falls behind) and the records the
/// plugin has printed so far are handed out with each call. `finish` ends the plugin's stdin and
/// waits (at most `finishTimeout`) for its last records, so a replayed capture decodes the same
/// every time.
public final class ExternalAdapterSession: BLEAdapterSession {
    let runner: PluginRunner

    init(adapter: ExternalAdapter, device: ExternalDevice, timeZone: TimeZone) {
        runner = adapter.makeRunner(for: device, timeZone: timeZone)
        runner.start()
    }

    deinit { runner.stop() }

    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        if case .advertisement(let advertisement) = event {
            runner.submit(ExternalInputCodec.encodeAdvertisementLine(advertisement), time: advertisement.time)
        } else {
            // Protocol 1 carries advertisements only.
            output.skip("not-an-advertisement")
        }
        runner.drain(into: &output)
    }

    public func finish(into output: inout AdapterOutput) {
        runner.finish(into: &output)
    }

    public func finish(into output: inout AdapterOutput, flushingAt limit: Int, flush: (AdapterOutput) throws -> Void) throws {
        try runner.finish(into: &output, flushingAt: limit, flush: flush)
    }

    /// Hands out what the plugin printed since the last call, without waiting (for live loops
    /// that want records from a device that has stopped advertising; `AdapterRouter.poll`).
    public func poll(into output: inout AdapterOutput) {
        runner.drain(into: &output)
    }

    /// Waits up to `timeout` for output, then hands out whatever there is.
    public func waitForOutput(timeout: Duration, into output: inout AdapterOutput) {
        _ = runner.waitForOutput(timeout: timeout, into: &output)
    }

    /// Stops the plugin process now (shutdown); nothing more is delivered.
    public func stop() { runner.stop() }
}

/// The session of an external adapter for one USB device. The plugin opens the device itself
/// (with libusb, pyusb, …), so the handle given to `run` is not used for I/O: the caller should
/// not claim the device's interfaces for an external adapter.
public final class ExternalUSBSession: USBAdapterSession {
    let runner: PluginRunner

    init(adapter: ExternalAdapter, device: USBDeviceDescription, timeZone: TimeZone) {
        runner = adapter.makeRunner(for: .usb(device), timeZone: timeZone)
    }

    deinit { runner.stop() }

    public func run(_ device: any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        try run(deliver: deliver, shouldStop: shouldStop)
    }

    /// The plugin opens the device itself: `open` is not called.
    public func run(opening open: () throws -> any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        try run(deliver: deliver, shouldStop: shouldStop)
    }

    /// Runs the plugin (restarting it with back-off when it fails) until it prints
    /// `{"done":true}` or `shouldStop` returns true; each batch of its output goes to `deliver`.
    /// A protocol-2 plugin is told after each commit which of its records were committed
    /// (`committed`), so it erases the device's memory only after that.
    public func run(deliver: (AdapterOutput) throws -> DeliveryReceipt, shouldStop: () -> Bool) throws {
        runner.start()
        while true {
            var output = AdapterOutput()
            let ended = runner.waitForOutput(timeout: .milliseconds(200), into: &output)
            if !output.isEmpty {
                do {
                    let receipt = try deliver(output)
                    if runner.protocolVersion >= 2 && !output.records.isEmpty {
                        for line in ExternalConversationLine.committed(uuids: output.records.map(\.recordUUID), receipt: receipt) {
                            runner.submitControl(line)
                        }
                    }
                } catch {
                    runner.stop()
                    throw error
                }
            }
            if ended { return }
            if shouldStop() {
                var last = AdapterOutput()
                try runner.finish(into: &last, flushingAt: runner.configuration.outputQueueCapacity,
                                  flush: { _ = try deliver($0) })
                if !last.isEmpty { _ = try deliver(last) }
                return
            }
        }
    }
}

extension AdapterOutput {
    /// Nothing in it.
    var isEmpty: Bool { records.isEmpty && rejections.isEmpty && skipped.isEmpty }
}
