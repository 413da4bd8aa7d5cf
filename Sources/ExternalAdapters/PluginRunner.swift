import AdapterKit
import ExternalAdapterProtocol
import Foundation
import HealthModel
import Logging
import Synchronization
import Transport

/// Runs an external adapter's process for one device and moves lines in and out of it.
///
/// Threads: a runner thread starts the process (again, after back-off, when it fails), writes
/// the device line and then queued input lines to its stdin (the only place that may block on a
/// plugin that does not read), and waits for it to exit; per run, one thread reads stdout
/// (validating each line) and one reads stderr (into the log). Callers only ever take a lock
/// briefly: `submit` drops the oldest queued line when the queue is full, and `drain` moves out
/// what the stdout reader produced. Only `finish` and `waitForOutput` wait, with a time limit.
final class PluginRunner: @unchecked Sendable {
    let adapterID: String
    let executable: String
    let configuration: ExternalAdapterConfiguration
    let supervisor: PluginSupervisor
    let validator: PluginOutputValidator
    /// The first stdin line of every run.
    let deviceLine: String
    /// The device as logs name it.
    let deviceLabel: String

    /// Guards every `var` below and signals their changes.
    private let condition = NSCondition()
    /// Interrupts a back-off sleep.
    private let wakeUp = WakeUpSignal()

    private var started = false
    private var pendingInput: [String] = []
    private var inputClosed = false
    private var stopRequested = false
    private var pluginDone = false
    private var runnerFinished = false
    private var runs = 0
    private var process: ChildProcess?
    /// The current run's stdout reader saw the end of the stream.
    private var outputEnded = false
    private var consecutiveRejections = 0
    private var killedForRejections = false
    private var lastInputTime: Date?
    private var outRecords: [HealthRecord] = []
    private var outRejections: [AdapterRejection] = []
    private var outSkipped: [String: Int] = [:]

    init(adapter: ExternalAdapter, device: ExternalDevice, timeZone: TimeZone) {
        adapterID = adapter.descriptor.id
        executable = adapter.executable
        configuration = adapter.configuration
        supervisor = adapter.supervisor
        deviceLine = ExternalInputCodec.encodeDeviceLine(device, timeZone: timeZone)
        deviceLabel = device.localIdentifier
        let recordDevice: Device
        switch device {
        case .ble(let traits):
            recordDevice = Device(name: traits.name, localIdentifier: traits.address.description)
        case .usb(let description):
            recordDevice = Device(name: description.product, manufacturer: description.manufacturer,
                                  localIdentifier: device.localIdentifier)
        }
        validator = PluginOutputValidator(adapterID: adapterID, produces: adapter.descriptor.produces, device: recordDevice)
    }

    // MARK: Caller side

    /// Starts the runner thread (once).
    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        let thread = Thread { [self] in runLoop() }
        thread.name = "ingestd-adapter-\(adapterID) runner"
        thread.start()
    }

    /// Queues one stdin line; never blocks. When the queue is full the oldest line is dropped.
    func submit(_ line: String, time: Date) {
        condition.lock()
        defer { condition.unlock() }
        guard !pluginDone, !stopRequested, !inputClosed else {
            outSkipped[pluginDone ? "plugin-done" : "plugin-stopped", default: 0] += 1
            return
        }
        if pendingInput.count >= configuration.inputQueueCapacity {
            pendingInput.removeFirst()
            outSkipped["advertisement-dropped", default: 0] += 1
            supervisor.countDroppedAdvertisement()
        }
        pendingInput.append(line)
        lastInputTime = time
        condition.broadcast()
    }

    /// Moves out what the plugin produced so far.
    func drain(into output: inout AdapterOutput) {
        condition.lock()
        defer { condition.unlock() }
        drainLocked(into: &output)
    }

    private func drainLocked(into output: inout AdapterOutput) {
        guard !outRecords.isEmpty || !outRejections.isEmpty || !outSkipped.isEmpty else { return }
        output.records += outRecords
        output.rejections += outRejections
        for (reason, count) in outSkipped { output.skipped[reason, default: 0] += count }
        outRecords.removeAll(keepingCapacity: true)
        outRejections.removeAll(keepingCapacity: true)
        outSkipped.removeAll(keepingCapacity: true)
        condition.broadcast()  // a reader may wait for room
    }

    /// Waits up to `timeout` for output or the end of the runner; drains; true once the runner ended.
    func waitForOutput(timeout: Duration, into output: inout AdapterOutput) -> Bool {
        let deadline = Date().addingTimeInterval(ChildProcess.seconds(timeout))
        condition.lock()
        defer { condition.unlock() }
        while outRecords.isEmpty && outRejections.isEmpty && outSkipped.isEmpty && !runnerFinished {
            if !condition.wait(until: deadline) { break }
        }
        drainLocked(into: &output)
        return runnerFinished
    }

    /// Ends the plugin's input and waits (at most `finishTimeout`) for its last output and exit,
    /// draining as it goes; a plugin still running then is killed. Everything it printed ends up
    /// in `output` (use `finish(into:flushingAt:flush:)` to bound what is held).
    func finish(into output: inout AdapterOutput) {
        // A flush that never runs cannot throw.
        try? finish(into: &output, flushingAt: Int.max, flush: { _ in })
    }

    /// `finish(into:)`, handing `output` to `flush` (and going on with an empty one) whenever it
    /// holds `limit` records or more: with the output queue's back-pressure on the plugin, a
    /// plugin flooding samples at its end is held to about `limit + outputQueueCapacity` records.
    /// An error from `flush` stops the plugin and is rethrown.
    func finish(into output: inout AdapterOutput, flushingAt limit: Int, flush: (AdapterOutput) throws -> Void) throws {
        condition.lock()
        inputClosed = true
        condition.broadcast()
        condition.unlock()
        wakeUp.fire()

        var deadline = Date().addingTimeInterval(ChildProcess.seconds(configuration.finishTimeout))
        /// Drains with the lock held; flushes without it. The plugin's time to finish does not
        /// count the time the caller spends committing (the plugin waits on back-pressure then).
        /// After a flush it drains again before returning: the reader may have filled the queue
        /// while the lock was free, and its wake-ups went to nobody then, so waiting without
        /// draining would leave both sides waiting until the deadline.
        func drainAndFlushLocked() throws {
            while true {
                drainLocked(into: &output)
                guard output.records.count >= limit else { return }
                condition.unlock()
                let flushStarted = Date()
                do {
                    try flush(output)
                } catch {
                    stop()  // takes the lock itself
                    condition.lock()
                    throw error
                }
                condition.lock()
                output = AdapterOutput()
                deadline += Date().timeIntervalSince(flushStarted)
            }
        }

        condition.lock()
        defer { condition.unlock() }
        while started && !runnerFinished {
            try drainAndFlushLocked()
            if runnerFinished { break }
            if !condition.wait(until: deadline) { break }
        }
        let finishedInTime = runnerFinished || !started
        try drainAndFlushLocked()

        if !finishedInTime {
            condition.unlock()
            note(.warning, "did not finish within \(Self.format(configuration.finishTimeout)) after its input ended; stopped")
            stop()
            condition.lock()
            let lastDeadline = Date().addingTimeInterval(2)
            while !runnerFinished {
                try drainAndFlushLocked()
                if runnerFinished { break }
                if !condition.wait(until: lastDeadline) { break }
            }
            try drainAndFlushLocked()
        }

        if !pendingInput.isEmpty {
            output.skipped["advertisement-undelivered", default: 0] += pendingInput.count
            pendingInput.removeAll()
        }
    }

    /// Kills the process and ends the runner; nothing more is delivered.
    func stop() {
        condition.lock()
        stopRequested = true
        let current = process
        condition.broadcast()
        condition.unlock()
        current?.kill()
        wakeUp.fire()
    }

    // MARK: Runner thread

    private func runLoop() {
        while let child = startProcess() {
            let startedAt = supervisor.processStarted()
            let readers = DispatchGroup()
            let stopReading = StopFlag()
            startReader(name: "stdout", group: readers) { [self] in readOutput(of: child, stop: stopReading) }
            startReader(name: "stderr", group: readers) { [self] in readErrors(of: child, stop: stopReading) }

            let inputEnded = feed(child)
            child.closeInput()
            var exit = child.waitForExit(deadline: .now + configuration.exitGracePeriod)
            var overstayed = false
            if exit == nil {
                overstayed = true
                child.kill()
                exit = child.waitForExit()
            }
            if readers.wait(timeout: .now() + 2) == .timedOut {
                // A descendant that left the process group holds the pipes open: stop reading.
                condition.lock()
                outputEnded = true
                condition.unlock()
                stopReading.set()
                readers.wait()
            }
            let outcome = outcome(exit: exit ?? .signalled(SIGKILL), inputEnded: inputEnded, overstayed: overstayed)
            let delay = supervisor.processEnded(startedAt: startedAt, outcome: outcome)
            configuration.stateChanged(adapterID)
            condition.lock()
            process = nil
            condition.unlock()
            switch outcome {
            case .finished, .stopped:
                note(.debug, "process ended (\(exit ?? .signalled(SIGKILL)))")
                return endRunner()
            case .failed(let reason):
                condition.lock()
                let again = wantsRunLocked()
                condition.unlock()
                note(.warning, again ? "\(reason); restarting in \(Self.format(delay))" : reason)
            }
        }
        endRunner()
    }

    private func endRunner() {
        condition.lock()
        runnerFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether another run is wanted: not stopped, not done, and input left to deliver (or the
    /// input has not ended yet). The first run always happens unless stopped.
    private func wantsRunLocked() -> Bool {
        if stopRequested || pluginDone { return false }
        if inputClosed && pendingInput.isEmpty && runs > 0 { return false }
        return true
    }

    /// Waits out the back-off and starts the next process; nil when no run is wanted any more.
    private func startProcess() -> ChildProcess? {
        while true {
            condition.lock()
            let wanted = wantsRunLocked()
            condition.unlock()
            guard wanted else { return nil }
            if let next = supervisor.nextPermittedStart, supervisor.clock.now() < next {
                supervisor.clock.sleep(until: next, wakeUp: wakeUp)
                continue
            }
            condition.lock()
            runs += 1
            condition.unlock()
            do {
                let child = try ChildProcess.spawn(executable: executable, arguments: ["--run"],
                                                   environment: configuration.pluginEnvironment)
                condition.lock()
                if stopRequested {
                    condition.unlock()
                    child.kill()
                    _ = child.waitForExit()
                    return nil
                }
                process = child
                outputEnded = false
                consecutiveRejections = 0
                killedForRejections = false
                condition.unlock()
                return child
            } catch {
                let delay = supervisor.spawnFailed(error.description)
                configuration.stateChanged(adapterID)
                note(.error, "\(error.description); retrying in \(Self.format(delay))")
            }
        }
    }

    /// Writes the device line and then queued lines until the input ends (true), or the plugin
    /// stops reading for good, prints done, or is stopped (false).
    private func feed(_ child: ChildProcess) -> Bool {
        guard child.writeInput(Array((deviceLine + "\n").utf8)) else { return false }
        while true {
            condition.lock()
            while pendingInput.isEmpty && !inputClosed && !stopRequested && !pluginDone && !outputEnded {
                condition.wait()
            }
            if stopRequested || pluginDone || outputEnded {
                condition.unlock()
                return false
            }
            if pendingInput.isEmpty {
                // inputClosed with nothing left to send.
                condition.unlock()
                return true
            }
            let line = pendingInput.removeFirst()
            condition.unlock()
            guard child.writeInput(Array((line + "\n").utf8)) else { return false }
        }
    }

    private func outcome(exit: ProcessExit, inputEnded: Bool, overstayed: Bool) -> PluginRunOutcome {
        condition.lock()
        defer { condition.unlock() }
        if killedForRejections {
            return .failed(reason: "killed after \(configuration.consecutiveRejectionLimit) rejected lines in a row")
        }
        if stopRequested { return .stopped }
        if pluginDone { return .finished }
        if overstayed {
            return .failed(reason: "did not exit within \(Self.format(configuration.exitGracePeriod)) after its input ended; killed")
        }
        if inputEnded && exit.isSuccess { return .finished }
        if exit.isSuccess { return .failed(reason: "exited with status 0 before its input ended and without {\"done\":true}") }
        return .failed(reason: exit.description)
    }

    // MARK: Reader threads

    private func startReader(name: String, group: DispatchGroup, body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = "ingestd-adapter-\(adapterID) \(name)"
        thread.start()
    }

    private func readOutput(of child: ChildProcess, stop: StopFlag) {
        var splitter = LineSplitter(maximumLength: configuration.maximumLineLength)
        var logLines = LogLineBudget(limit: configuration.logLinesPerRun)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        reading: while !stop.isSet {
            switch DescriptorReader.read(child.outputDescriptor, into: buffer, timeout: .seconds(1)) {
            case .data(let count):
                splitter.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { piece in handle(piece, from: child, logLines: &logLines) }
            case .timedOut:
                continue
            case .endOfFile, .failed:
                break reading
            }
        }
        if let last = splitter.finish() { handle(last, from: child, logLines: &logLines) }
        if logLines.unlogged > 0 { note(.warning, "\(logLines.unlogged) further log lines not logged") }
        condition.lock()
        outputEnded = true
        condition.broadcast()
        condition.unlock()
    }

    private func handle(_ piece: LineSplitter.Piece, from child: ChildProcess, logLines: inout LogLineBudget) {
        condition.lock()
        let ignore = killedForRejections || stopRequested
        condition.unlock()
        if ignore { return }
        let line: PluginLine
        switch piece {
        case .line(let bytes):
            line = validator.validate(bytes)
        case .overlong(let length):
            line = .rejected(PluginLineRejection(.lineTooLong, "a line of \(length) bytes (the limit is \(configuration.maximumLineLength))"))
        case .unterminated(let bytes):
            line = .rejected(PluginLineRejection(.unterminatedLine, "output ended inside a line (\(bytes.count) bytes without a newline)"))
        }
        switch line {
        case .record(let record):
            supervisor.countRecord()
            enqueue { runner in
                runner.consecutiveRejections = 0
                runner.outRecords.append(record)
            }
        case .log(let level, let message):
            condition.lock()
            consecutiveRejections = 0
            condition.unlock()
            if logLines.take() {
                configuration.log(ExternalAdapterLogEntry(adapterID: adapterID, device: deviceLabel, level: level,
                                                          message: String(message.prefix(4096)), origin: .plugin))
            }
        case .done:
            condition.lock()
            consecutiveRejections = 0
            pluginDone = true
            condition.broadcast()
            condition.unlock()
        case .rejected(let rejection):
            supervisor.countRejection(rejection.reason)
            let time = lastInputTimeOrNow()
            var kill = false
            enqueue { runner in
                runner.consecutiveRejections += 1
                runner.outRejections.append(AdapterRejection(adapter: runner.adapterID, reason: rejection.reason.rawValue,
                                                             detail: "\(runner.deviceLabel): \(rejection.detail)", time: time))
                if runner.consecutiveRejections >= runner.configuration.consecutiveRejectionLimit && !runner.killedForRejections {
                    runner.killedForRejections = true
                    kill = true
                }
            }
            if kill {
                supervisor.countRejectionKill()
                note(.error, "killed: \(configuration.consecutiveRejectionLimit) rejected output lines in a row (last: \(rejection))")
                child.kill()
            }
        }
    }

    /// Runs `change` under the lock once there is room in the output queue (or the runner is stopping).
    private func enqueue(_ change: (PluginRunner) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        while outRecords.count + outRejections.count >= configuration.outputQueueCapacity && !stopRequested {
            condition.wait()
        }
        change(self)
        condition.broadcast()
    }

    private func lastInputTimeOrNow() -> Date {
        condition.lock()
        defer { condition.unlock() }
        return lastInputTime ?? supervisor.clock.now()
    }

    private func readErrors(of child: ChildProcess, stop: StopFlag) {
        var splitter = LineSplitter(maximumLength: 4096)
        var budget = LogLineBudget(limit: configuration.logLinesPerRun)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        func emit(_ piece: LineSplitter.Piece) {
            let text: String
            switch piece {
            case .line(let bytes), .unterminated(let bytes): text = String(decoding: bytes, as: UTF8.self)
            case .overlong(let length): text = "(a stderr line of \(length) bytes, not logged)"
            }
            guard budget.take() else { return }
            configuration.log(ExternalAdapterLogEntry(adapterID: adapterID, device: deviceLabel, level: .info,
                                                      message: text, origin: .stderr))
        }
        reading: while !stop.isSet {
            switch DescriptorReader.read(child.errorDescriptor, into: buffer, timeout: .seconds(1)) {
            case .data(let count):
                splitter.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { emit($0) }
            case .timedOut:
                continue
            case .endOfFile, .failed:
                break reading
            }
        }
        if let last = splitter.finish() { emit(last) }
        if budget.unlogged > 0 {
            note(.warning, "\(budget.unlogged) further stderr lines not logged")
        }
    }

    private func note(_ level: Logger.Level, _ message: String) {
        configuration.log(ExternalAdapterLogEntry(adapterID: adapterID, device: deviceLabel, level: level,
                                                  message: message, origin: .supervisor))
    }

    private static func format(_ duration: Duration) -> String { format(ChildProcess.seconds(duration)) }

    private static func format(_ seconds: TimeInterval) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : seconds.truncatingRemainder(dividingBy: 1) == 0 ? "\(Int(seconds)) s" : String(format: "%.1f s", seconds)
    }
}

/// A one-way flag shared between threads.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// How many more lines of one kind a process run may put into the daemon's log.
struct LogLineBudget {
    let limit: Int
    private(set) var logged = 0
    private(set) var unlogged = 0

    init(limit: Int) { self.limit = limit }

    /// True when the line may be logged; otherwise it is counted.
    mutating func take() -> Bool {
        if logged < limit {
            logged += 1
            return true
        }
        unlogged += 1
        return false
    }
}
