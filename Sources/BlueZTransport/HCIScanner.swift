import BLEWire
import Foundation
import Transport

/// How an ``HCIScanner`` scans.
public struct HCIScannerConfiguration: Hashable, Sendable {
    /// Which family of scan commands to use.
    public enum CommandSet: Hashable, Sendable {
        /// Extended commands when LE Read Local Supported Features reports LE Extended
        /// Advertising (bit 12), legacy ones otherwise or when the extended ones are unknown.
        /// A controller rejects legacy scan commands once extended ones were used (and the
        /// kernel uses extended ones on such controllers), so following the features matters.
        case automatic
        /// LE Set Scan Parameters / LE Set Scan Enable only.
        case legacy
        /// LE Set Extended Scan Parameters / Enable only.
        case extended
    }

    /// Scan type (passive by default; active for advertisers that put data in scan responses),
    /// interval, window, own address type, filter policy.
    public var parameters: LEScanParameters
    public var commandSet: CommandSet
    /// Reset the controller and set its event masks before scanning. Only for a controller this
    /// process owns exclusively (HCI user channel); never on a controller bluetoothd manages.
    public var initializesController: Bool
    /// No advertising report for this long while scanning counts as a silent controller and the
    /// scan is restarted; nil disables the watchdog.
    public var silencePeriod: Duration?
    /// How long to wait for Command Complete / Command Status.
    public var commandTimeout: Duration
    /// The controller's name in log messages (`hci0`).
    public var controllerName: String

    /// Defaults: passive scanning with BlueZ's passive-scan timing, command set chosen by the
    /// controller's features, no controller initialisation, a 60 s silence period, a 2 s command
    /// timeout (the kernel's own HCI command timeout).
    public init(parameters: LEScanParameters = LEScanParameters(), commandSet: CommandSet = .automatic,
                initializesController: Bool = false, silencePeriod: Duration? = .seconds(60),
                commandTimeout: Duration = .seconds(2), controllerName: String = "hci0") {
        self.parameters = parameters
        self.commandSet = commandSet
        self.initializesController = initializesController
        self.silencePeriod = silencePeriod
        self.commandTimeout = commandTimeout
        self.controllerName = controllerName
    }
}

/// Where an ``HCIScanner`` stands.
public enum HCIScannerState: Hashable, Sendable {
    /// Created, ``HCIScanner/start()`` not called yet.
    case idle
    /// Sending the start-up commands.
    case starting
    /// Our scan is enabled on the controller.
    case scanning
    /// Another host stack on the controller (usually bluetoothd) is scanning and refused ours
    /// with Command Disallowed; the scanner listens to the reports that scan produces and tries
    /// to scan itself when they stop.
    case sharing
    /// The scanner was stopped or its descriptor ended; no more events.
    case stopped(PacketChannelEnd)
}

/// Why a scanner command failed.
public enum HCIScannerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The controller answered the command with a non-success status.
    case commandFailed(HCIOpcode, HCIStatus)
    /// No Command Complete or Command Status arrived in time.
    case commandTimedOut(HCIOpcode, after: Duration)
    /// The Command Complete for the command carried no status byte.
    case malformedReply(HCIOpcode, returnParameters: [UInt8])
    /// Writing the command failed.
    case channel(PacketChannelError)
    /// The descriptor ended (controller removed, socket closed) before the reply.
    case ended(PacketChannelEnd)
    /// ``HCIScanner/start()`` was called twice, or after ``HCIScanner/stop()``.
    case alreadyStarted

    public var description: String {
        switch self {
        case .commandFailed(let opcode, let status): "\(opcode) failed: \(status)"
        case .commandTimedOut(let opcode, let after): "no reply to \(opcode) within \(after)"
        case .malformedReply(let opcode, let parameters):
            "malformed Command Complete for \(opcode): return parameters [\(parameters.hexString)]"
        case .channel(let error): "cannot send the HCI command: \(error)"
        case .ended(let end): "the HCI socket ended: \(end)"
        case .alreadyStarted: "the scanner was already started (or stopped)"
        }
    }
}

/// Counters of what a scanner saw and did.
public struct HCIScannerStatistics: Hashable, Sendable {
    /// Advertisements yielded (legacy reports, extended reports, scan responses).
    public var advertisements = 0
    /// Events that could not be parsed, and advertising reports cut short.
    public var malformedEvents = 0
    /// Silent periods noticed by the watchdog (one per incident, however many restarts).
    public var silenceIncidents = 0
    /// Scan restarts made by the watchdog.
    public var watchdogRestarts = 0
    /// Scan commands refused with Command Disallowed (another host stack scanning).
    public var commandsDisallowed = 0

    public init() {}
}

/// An LE scanning engine over a packet file descriptor speaking H4-framed HCI: a raw or user
/// channel HCI socket for real (see ``HCISocket``), a socketpair to a simulated controller in
/// tests.
///
/// ``start()`` sets the scan parameters and enables scanning with duplicate filtering off (so
/// repeated broadcasts of changing sensor values all arrive), using the legacy or the extended
/// commands. Advertising reports become ``TransportEvent/advertisement(_:)`` values on
/// ``events``. A Command Disallowed answer (bluetoothd is scanning on the same controller) is
/// explained once in the log and the scanner shares that scan (state ``HCIScannerState/sharing``)
/// instead of failing. A watchdog restarts the scan when no report arrives for
/// ``HCIScannerConfiguration/silencePeriod``, logging once per silent incident.
///
/// Call ``stop()`` when done: it disables the scan, closes the descriptor and finishes
/// ``events``.
public actor HCIScanner {
    /// Advertisements as they arrive; finishes when the scanner stops or the descriptor ends.
    public nonisolated let events: AsyncStream<TransportEvent>
    /// The scanner's state.
    public private(set) var state: HCIScannerState = .idle
    /// What the scanner saw and did so far.
    public private(set) var statistics = HCIScannerStatistics()
    /// True when the extended scan commands are in use.
    public private(set) var usesExtendedCommands = false

    private struct PendingCommand {
        var token: Int
        var opcode: HCIOpcode
        var continuation: CheckedContinuation<Result<CommandReply, HCIScannerError>, Never>
        var timeout: Task<Void, Never>?
    }

    private struct CommandReply {
        var status: HCIStatus
        /// Return parameters after the status byte (Command Complete only).
        var returnParameters: [UInt8]
    }

    private let channel: PacketChannel
    private let configuration: HCIScannerConfiguration
    private let log: BlueZLogSink
    private let now: @Sendable () -> Date
    private let tap: PacketTap?
    private let eventContinuation: AsyncStream<TransportEvent>.Continuation
    private let clock = ContinuousClock()
    /// The capture decoder turns advertising reports into advertisements, exactly as on replay.
    private var decoder = HCITraceDecoder()
    private var pending: PendingCommand?
    private var commandInProgress = false
    private var commandWaiters: [CheckedContinuation<Void, Never>] = []
    private var nextToken = 0
    private var lastActivity: ContinuousClock.Instant
    private var silenceIncidentOpen = false
    private var busyExplained = false
    private var readerTask: Task<Void, Never>?
    private var watchdogTask: Task<Void, Never>?

    /// Creates a scanner over `channel`; nothing is sent before ``start()``.
    /// - Parameters:
    ///   - log: receives the scanner's log records.
    ///   - now: the clock stamped on advertisements.
    ///   - tap: sees every H4 packet sent and received (indicator byte included).
    public init(channel: PacketChannel, configuration: HCIScannerConfiguration = HCIScannerConfiguration(),
                log: @escaping BlueZLogSink = { _ in }, now: @escaping @Sendable () -> Date = { Date() },
                tap: PacketTap? = nil) {
        self.channel = channel
        self.configuration = configuration
        self.log = log
        self.now = now
        self.tap = tap
        (events, eventContinuation) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        lastActivity = clock.now
    }

    /// Starts scanning: optional controller initialisation, the choice of command set, scan
    /// parameters and scan enable, then the watchdog. Returns once the scan runs or is shared
    /// with another host stack; throws (and stops the scanner) when the controller fails a
    /// command for another reason or does not answer.
    public func start() async throws(HCIScannerError) {
        guard state == .idle else { throw .alreadyStarted }
        state = .starting
        let channel = self.channel
        readerTask = Task {
            for await event in channel.events { self.receive(event) }
        }
        do {
            try await prepareController()
            try await enableScanning()
        } catch {
            await stop()
            throw error
        }
        if let period = configuration.silencePeriod {
            watchdogTask = Task { await self.watch(period: period) }
        }
    }

    /// Disables our scan (if it is ours), closes the descriptor and finishes ``events``.
    public func stop() async {
        if case .stopped = state { return }
        watchdogTask?.cancel()
        watchdogTask = nil
        if state == .scanning {
            _ = try? await send(enableCommand(false))
        }
        channel.close()
        if let readerTask {
            await readerTask.value
        } else {
            finish(.closedLocally)
        }
    }

    // MARK: - Start-up

    private func prepareController() async throws(HCIScannerError) {
        if configuration.initializesController {
            try await sendExpectingSuccess(.reset)
            // Default mask plus bit 61, LE Meta event.
            try await sendExpectingSuccess(.setEventMask(0x2000_1FFF_FFFF_FFFF))
        }
        switch configuration.commandSet {
        case .legacy:
            usesExtendedCommands = false
        case .extended:
            usesExtendedCommands = true
        case .automatic:
            let reply = try await send(.leReadLocalSupportedFeatures)
            let features = reply.returnParameters
            usesExtendedCommands = reply.status == .success && features.count >= 2 && features[1] & 0x10 != 0
        }
        if configuration.initializesController {
            // Connection complete, advertising report, connection update, remote features,
            // LTK request; plus extended advertising report (bit 12) when used.
            try await sendExpectingSuccess(.leSetEventMask(usesExtendedCommands ? 0x101F : 0x001F))
        }
    }

    /// Scan parameters then scan enable; Command Disallowed on either means another host
    /// scans, and the scanner shares that scan.
    private func enableScanning() async throws(HCIScannerError) {
        let parameters = usesExtendedCommands
            ? HCICommand.leSetExtendedScanParameters(configuration.parameters)
            : HCICommand.leSetScanParameters(configuration.parameters)
        let parameterReply = try await send(parameters)
        if parameterReply.status == .unknownCommand && usesExtendedCommands && configuration.commandSet == .automatic {
            log(BlueZLogRecord(
                level: .info, kind: "scan-legacy-fallback",
                message: "\(configuration.controllerName) does not know \(parameters.opcode) although it "
                    + "reports LE Extended Advertising; scanning with the legacy commands"))
            usesExtendedCommands = false
            return try await enableScanning()
        }
        if parameterReply.status == .commandDisallowed {
            enterSharing(refused: parameters.opcode)
            return
        }
        guard parameterReply.status == .success else { throw .commandFailed(parameters.opcode, parameterReply.status) }

        let enable = enableCommand(true)
        let enableReply = try await send(enable)
        if enableReply.status == .commandDisallowed {
            enterSharing(refused: enable.opcode)
            return
        }
        guard enableReply.status == .success else { throw .commandFailed(enable.opcode, enableReply.status) }
        if state == .sharing {
            log(BlueZLogRecord(
                level: .info, kind: "scan-own",
                message: "\(configuration.controllerName): the other host's scan ended; scanning on our own again"))
        }
        state = .scanning
        busyExplained = false
        lastActivity = clock.now
    }

    private func enableCommand(_ enable: Bool) -> HCICommand {
        usesExtendedCommands
            ? .leSetExtendedScanEnable(enable, filterDuplicates: false)
            : .leSetScanEnable(enable, filterDuplicates: false)
    }

    private func enterSharing(refused opcode: HCIOpcode) {
        statistics.commandsDisallowed += 1
        state = .sharing
        lastActivity = clock.now
        guard !busyExplained else { return }
        busyExplained = true
        log(BlueZLogRecord(
            level: .notice, kind: "scan-busy",
            message: "\(configuration.controllerName) refused \(opcode) with Command Disallowed (0x0C): another "
                + "host stack on this controller, usually bluetoothd (a discovery or its background scan), is "
                + "scanning. Not an error: ingestd keeps receiving the advertising reports of that scan and starts "
                + "its own scan when they stop; meanwhile bluetoothd's scan type and duplicate filtering apply, so "
                + "repeated broadcasts and scan responses may be missing. For exclusive scanning use the HCI user "
                + "channel mode on a controller bluetoothd does not use."))
    }

    // MARK: - Watchdog

    private func watch(period: Duration) async {
        let checkInterval = period / 4
        while !Task.isCancelled {
            try? await Task.sleep(for: checkInterval)
            if Task.isCancelled { return }
            guard state == .scanning || state == .sharing else {
                if case .stopped = state { return }
                continue
            }
            if clock.now - lastActivity >= period { await restartAfterSilence(period: period) }
        }
    }

    private func restartAfterSilence(period: Duration) async {
        statistics.watchdogRestarts += 1
        lastActivity = clock.now
        if !silenceIncidentOpen {
            silenceIncidentOpen = true
            statistics.silenceIncidents += 1
            let what = state == .sharing ? "while sharing another host's scan" : "while scanning"
            log(BlueZLogRecord(
                level: .warning, kind: "scan-silence",
                message: "no advertising reports from \(configuration.controllerName) for \(period) \(what); "
                    + "restarting the scan (further restarts are not logged until reports arrive again)"))
        }
        if state == .scanning {
            _ = try? await send(enableCommand(false))
        }
        do {
            try await enableScanning()
        } catch {
            log(BlueZLogRecord(level: .debug, kind: "scan-restart-failed",
                               message: "\(configuration.controllerName): scan restart failed: \(error)"))
        }
    }

    // MARK: - Commands

    private func sendExpectingSuccess(_ command: HCICommand) async throws(HCIScannerError) {
        let reply = try await send(command)
        guard reply.status == .success else { throw .commandFailed(command.opcode, reply.status) }
    }

    /// Sends one command and waits for its Command Complete or Command Status; one command at a time.
    private func send(_ command: HCICommand) async throws(HCIScannerError) -> CommandReply {
        if commandInProgress {
            await withCheckedContinuation { commandWaiters.append($0) }
        }
        commandInProgress = true
        defer {
            if commandWaiters.isEmpty {
                commandInProgress = false
            } else {
                commandWaiters.removeFirst().resume()
            }
        }
        if case .stopped(let end) = state { throw .ended(end) }
        nextToken += 1
        let token = nextToken
        let timeout = configuration.commandTimeout
        let result = await withCheckedContinuation { continuation in
            do throws(PacketChannelError) {
                try channel.send(command.packet)
                tap?(.sent, command.packet)
            } catch {
                continuation.resume(returning: Result<CommandReply, HCIScannerError>.failure(.channel(error)))
                return
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { self.commandTimedOut(token: token) }
            }
            pending = PendingCommand(token: token, opcode: command.opcode, continuation: continuation, timeout: timer)
        }
        return try result.get()
    }

    private func commandTimedOut(token: Int) {
        guard let pending, pending.token == token else { return }
        self.pending = nil
        pending.continuation.resume(returning: .failure(.commandTimedOut(pending.opcode, after: configuration.commandTimeout)))
    }

    private func resolve(_ opcode: HCIOpcode, with result: Result<CommandReply, HCIScannerError>) {
        guard let pending, pending.opcode == opcode else { return }
        self.pending = nil
        pending.timeout?.cancel()
        pending.continuation.resume(returning: result)
    }

    // MARK: - Incoming packets

    private func receive(_ event: PacketChannelEvent) {
        switch event {
        case .packet(let bytes):
            receive(packet: bytes)
        case .end(let end):
            finish(end)
        }
    }

    private func receive(packet: [UInt8]) {
        tap?(.received, packet)
        let event: HCIEvent
        do {
            event = try HCIEvent(packet: packet)
        } catch {
            statistics.malformedEvents += 1
            return
        }
        switch event {
        case .commandComplete(let opcode, let parameters):
            guard let status = parameters.first else {
                resolve(opcode, with: .failure(.malformedReply(opcode, returnParameters: parameters)))
                return
            }
            resolve(opcode, with: .success(CommandReply(status: HCIStatus(rawValue: status),
                                                        returnParameters: Array(parameters.dropFirst()))))
        case .commandStatus(let opcode, let status):
            resolve(opcode, with: .success(CommandReply(status: status, returnParameters: [])))
        case .leMeta(let subevent, let parameters):
            guard subevent == HCIEventBuilder.leAdvertisingReportSubevent
                || subevent == HCIEventBuilder.leExtendedAdvertisingReportSubevent else { return }
            let advertisements = decodeReports(subevent: subevent, parameters: parameters)
            guard !advertisements.isEmpty else { return }
            lastActivity = clock.now
            if silenceIncidentOpen {
                silenceIncidentOpen = false
                log(BlueZLogRecord(level: .debug, kind: "scan-resumed",
                                   message: "\(configuration.controllerName): advertising reports arrive again"))
            }
            for advertisement in advertisements {
                statistics.advertisements += 1
                eventContinuation.yield(.advertisement(advertisement))
            }
        case .hardwareError(let code):
            log(BlueZLogRecord(level: .warning, kind: "controller-hardware-error",
                               message: "\(configuration.controllerName) reported Hardware Error 0x\(String(code, radix: 16))"))
        case .other:
            break
        }
    }

    /// Advertising reports of one LE Meta event (parsed once, by ``HCIEvent``), through the capture
    /// decoder; reports it could not use are counted in ``statistics``.
    private func decodeReports(subevent: UInt8, parameters: [UInt8]) -> [BLEAdvertisement] {
        let malformedBefore = decoder.statistics.malformedTotal
        var decoded: [TransportEvent] = []
        let microseconds = Int64((now().timeIntervalSince1970 * 1_000_000).rounded())
        decoder.processLEMeta(subevent: subevent, parameters: parameters, timestamp: microseconds, into: &decoded)
        statistics.malformedEvents += decoder.statistics.malformedTotal - malformedBefore
        return decoded.compactMap { if case .advertisement(let advertisement) = $0 { advertisement } else { nil } }
    }

    private func finish(_ end: PacketChannelEnd) {
        let wasRunning = state == .scanning || state == .sharing
        state = .stopped(end)
        watchdogTask?.cancel()
        watchdogTask = nil
        if let pending {
            self.pending = nil
            pending.timeout?.cancel()
            pending.continuation.resume(returning: .failure(.ended(end)))
        }
        if end != .closedLocally && wasRunning {
            log(BlueZLogRecord(level: .warning, kind: "controller-gone",
                               message: "the HCI socket of \(configuration.controllerName) ended (\(end)); "
                                   + "scanning stopped"))
        }
        eventContinuation.finish()
    }
}
