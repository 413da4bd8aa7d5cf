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
    /// The protocol version the plugin speaks.
    let protocolVersion: Int
    /// A conversation's runner: requests are taken (and handed to `listener`), and the process
    /// runs once (a failure ends the conversation; the back-off applies to the next connection).
    let isConversation: Bool
    /// Told of requests, new output, `done` and the runner's end (from the runner's threads).
    let listener: (@Sendable (PluginRunnerEvent) -> Void)?
    /// The BLE address requests may name, for a conversation.
    let deviceAddress: BLEAddress?
    let executable: String
    let configuration: ExternalAdapterConfiguration
    let supervisor: PluginSupervisor
    let validator: PluginOutputValidator
    /// The first stdin line of every run.
    let deviceLine: String
    /// The device as logs name it.
    let deviceLabel: String

    /// What the runner's threads and its callers share, behind the one condition that guards it.
    private struct State {
        var started = false
        var pendingInput: [String] = []
        var inputClosed = false
        var stopRequested = false
        var pluginDone = false
        var runnerFinished = false
        var runs = 0
        var process: ChildProcess?
        /// The current run's stdout reader saw the end of the stream.
        var outputEnded = false
        var consecutiveRejections = 0
        var killedForRejections = false
        var lastInputTime: Date?
        var outRecords: [HealthRecord] = []
        var outRejections: [AdapterRejection] = []
        var outSkipped: [String: Int] = [:]
        /// Requests handed to the listener and not answered yet.
        var pendingRequests = 0
        /// The request token bucket.
        var requestTokens: Double
        var requestTokensUpdated = ContinuousClock.now
        /// Whether `.output` was signalled and not drained since.
        var outputSignalled = false

        var hasOutput: Bool { !outRecords.isEmpty || !outRejections.isEmpty || !outSkipped.isEmpty }

        /// Whether another run is wanted: not stopped, not done, and input left to deliver (or the
        /// input has not ended yet). The first run always happens unless stopped.
        var wantsRun: Bool {
            if stopRequested || pluginDone { return false }
            if inputClosed && pendingInput.isEmpty && runs > 0 { return false }
            return true
        }

        /// Moves out what the plugin produced so far.
        mutating func drain(into output: inout AdapterOutput) {
            outputSignalled = false
            guard hasOutput else { return }
            output.records += outRecords
            output.rejections += outRejections
            for (reason, count) in outSkipped { output.skipped[reason, default: 0] += count }
            outRecords.removeAll(keepingCapacity: true)
            outRejections.removeAll(keepingCapacity: true)
            outSkipped.removeAll(keepingCapacity: true)
        }
    }

    /// The shared state; reachable only under its lock.
    private let state: ConditionGuarded<State>
    /// Interrupts a back-off sleep.
    private let wakeUp = WakeUpSignal()

    init(adapter: ExternalAdapter, device: ExternalDevice, timeZone: TimeZone, conversation: Bool = false,
         listener: (@Sendable (PluginRunnerEvent) -> Void)? = nil) {
        adapterID = adapter.descriptor.id
        protocolVersion = adapter.protocolVersion
        isConversation = conversation
        self.listener = listener
        if case .ble(let traits) = device { deviceAddress = traits.address } else { deviceAddress = nil }
        executable = adapter.executable
        configuration = adapter.configuration
        supervisor = adapter.supervisor
        state = ConditionGuarded(State(requestTokens: Double(adapter.configuration.requestBurst)))
        deviceLine = ExternalInputCodec.encodeDeviceLine(device, timeZone: timeZone, protocolVersion: adapter.protocolVersion)
        deviceLabel = device.localIdentifier
        let recordDevice: Device
        switch device {
        case .ble(let traits):
            recordDevice = Device(name: traits.name, localIdentifier: traits.address.description)
        case .usb(let description):
            recordDevice = Device(name: description.product, manufacturer: description.manufacturer,
                                  localIdentifier: device.localIdentifier)
        }
        validator = PluginOutputValidator(adapterID: adapterID, produces: adapter.descriptor.produces, device: recordDevice,
                                          protocolVersion: adapter.protocolVersion)
    }

    // MARK: Caller side

    /// Starts the runner thread (once).
    func start() {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        let thread = Thread { [self] in runLoop() }
        thread.name = "ingestd-adapter-\(adapterID) runner"
        thread.start()
    }

    /// Queues one stdin line; never blocks. When the queue is full the oldest line is dropped.
    func submit(_ line: String, time: Date) {
        let capacity = configuration.inputQueueCapacity
        let dropped = state.withLock { state -> Bool in
            guard !state.pluginDone, !state.stopRequested, !state.inputClosed else {
                state.outSkipped[state.pluginDone ? "plugin-done" : "plugin-stopped", default: 0] += 1
                return false
            }
            var dropped = false
            if state.pendingInput.count >= capacity {
                state.pendingInput.removeFirst()
                state.outSkipped["advertisement-dropped", default: 0] += 1
                dropped = true
            }
            state.pendingInput.append(line)
            state.lastInputTime = time
            return dropped
        }
        if dropped { supervisor.countDroppedAdvertisement() }
    }

    /// Queues a protocol-2 line (an answer, a notification, `connected`, `committed`); never
    /// blocks. When the plugin does not read and the queue is full, the oldest line is dropped
    /// and counted (`input-dropped`).
    func submitControl(_ line: String) {
        let capacity = configuration.inputQueueCapacity
        state.withLock { state in
            guard !state.pluginDone, !state.stopRequested, !state.inputClosed else { return }
            if state.pendingInput.count >= capacity {
                state.pendingInput.removeFirst()
                state.outSkipped["input-dropped", default: 0] += 1
            }
            state.pendingInput.append(line)
        }
    }

    /// Ends the plugin's input (once the queued lines are written) without waiting.
    func closeInput() {
        state.withLock { $0.inputClosed = true }
        wakeUp.fire()
    }

    /// A request handed to the listener was answered (or failed).
    func requestAnswered() {
        state.withLock { $0.pendingRequests = max(0, $0.pendingRequests - 1) }
    }

    /// Whether the plugin printed `{"done":true}`.
    var isDone: Bool { state.withLock { $0.pluginDone } }

    /// Whether the runner has ended (the process exited and will not be started again).
    var hasFinished: Bool { state.withLock { $0.runnerFinished } }

    /// Moves out what the plugin produced so far.
    func drain(into output: inout AdapterOutput) {
        state.withLock { $0.drain(into: &output) }  // a reader waiting for room wakes
    }

    /// Waits up to `timeout` for output or the end of the runner; drains; true once the runner ended.
    func waitForOutput(timeout: Duration, into output: inout AdapterOutput) -> Bool {
        let deadline = Date().addingTimeInterval(ChildProcess.seconds(timeout))
        return state.wait(until: deadline, while: { !$0.hasOutput && !$0.runnerFinished }) { state, _ in
            state.drain(into: &output)
            return state.runnerFinished
        }
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
        let started = state.withLock { state -> Bool in
            state.inputClosed = true
            return state.started
        }
        wakeUp.fire()

        var deadline = Date().addingTimeInterval(ChildProcess.seconds(configuration.finishTimeout))
        /// Drains under the lock; flushes without it. The plugin's time to finish does not count
        /// the time the caller spends committing (the plugin waits on back-pressure then). After a
        /// flush it drains again: the reader may have filled the queue meanwhile.
        func drainAndFlush() throws {
            while true {
                state.withLock { $0.drain(into: &output) }
                guard output.records.count >= limit else { return }
                let flushStarted = Date()
                do {
                    try flush(output)
                } catch {
                    stop()
                    throw error
                }
                output = AdapterOutput()
                deadline += Date().timeIntervalSince(flushStarted)
            }
        }
        /// Drains and flushes until the runner ends or `until` passes (a plugin that keeps printing
        /// does not hold it past that); true when it ended.
        func drainUntilFinished(until: () -> Date) throws -> Bool {
            while true {
                try drainAndFlush()
                if Date() >= until() { return state.withLock { $0.runnerFinished } }
                let (finished, waited) = state.wait(until: until(), while: { !$0.hasOutput && !$0.runnerFinished }) {
                    state, waited in (state.runnerFinished, waited)
                }
                if finished { return true }
                if !waited { return false }
            }
        }

        let finishedInTime = try !started || drainUntilFinished { deadline }
        try drainAndFlush()

        if !finishedInTime {
            note(.warning, "did not finish within \(Self.format(configuration.finishTimeout)) after its input ended; stopped")
            stop()
            let lastDeadline = Date().addingTimeInterval(2)
            _ = try drainUntilFinished { lastDeadline }
            try drainAndFlush()
        }

        let undelivered = state.withLock { state in
            defer { state.pendingInput.removeAll() }
            return state.pendingInput.count
        }
        if undelivered > 0 { output.skipped["advertisement-undelivered", default: 0] += undelivered }
    }

    /// Kills the process and ends the runner; nothing more is delivered.
    func stop() {
        let current = state.withLock { state in
            state.stopRequested = true
            return state.process
        }
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
                state.withLock { $0.outputEnded = true }
                stopReading.set()
                readers.wait()
            }
            let outcome = outcome(exit: exit ?? .signalled(SIGKILL), inputEnded: inputEnded, overstayed: overstayed)
            let delay = supervisor.processEnded(startedAt: startedAt, outcome: outcome)
            configuration.stateChanged(adapterID)
            state.withLock { $0.process = nil }
            switch outcome {
            case .finished, .stopped:
                note(.debug, "process ended (\(exit ?? .signalled(SIGKILL)))")
                return endRunner()
            case .failed(let reason):
                if isConversation {
                    note(.warning, "\(reason); the connection ends (the next one waits \(Self.format(delay)))")
                    return endRunner()
                }
                let again = state.withLock { $0.wantsRun }
                note(.warning, again ? "\(reason); restarting in \(Self.format(delay))" : reason)
            }
        }
        endRunner()
    }

    private func endRunner() {
        state.withLock { $0.runnerFinished = true }
        listener?(.finished)
    }

    /// Waits out the back-off and starts the next process; nil when no run is wanted any more.
    private func startProcess() -> ChildProcess? {
        while true {
            guard state.withLock({ $0.wantsRun }) else { return nil }
            if let next = supervisor.nextPermittedStart, supervisor.clock.now() < next {
                supervisor.clock.sleep(until: next, wakeUp: wakeUp)
                continue
            }
            state.withLock { $0.runs += 1 }
            do {
                let child = try ChildProcess.spawn(executable: executable, arguments: ["--run"],
                                                   environment: configuration.pluginEnvironment(protocolVersion: protocolVersion))
                let stopped = state.withLock { state -> Bool in
                    guard !state.stopRequested else { return true }
                    state.process = child
                    state.outputEnded = false
                    state.consecutiveRejections = 0
                    state.killedForRejections = false
                    return false
                }
                if stopped {
                    child.kill()
                    _ = child.waitForExit()
                    return nil
                }
                return child
            } catch {
                let delay = supervisor.spawnFailed(error.description)
                configuration.stateChanged(adapterID)
                if isConversation {
                    note(.error, "\(error.description)")
                    return nil
                }
                note(.error, "\(error.description); retrying in \(Self.format(delay))")
            }
        }
    }

    /// Writes the device line and then queued lines until the input ends (true), or the plugin
    /// stops reading for good, prints done, or is stopped (false).
    private func feed(_ child: ChildProcess) -> Bool {
        guard child.writeInput(Array((deviceLine + "\n").utf8)) else { return false }
        /// What the feeder does next.
        enum Next { case write(String), ended, stopped }
        while true {
            let next: Next = state.wait(until: nil, while: {
                $0.pendingInput.isEmpty && !$0.inputClosed && !$0.stopRequested && !$0.pluginDone && !$0.outputEnded
            }) { state, _ in
                if state.stopRequested || state.pluginDone || state.outputEnded { return .stopped }
                if state.pendingInput.isEmpty { return .ended }  // inputClosed with nothing left to send
                return .write(state.pendingInput.removeFirst())
            }
            switch next {
            case .stopped: return false
            case .ended: return true
            case .write(let line): guard child.writeInput(Array((line + "\n").utf8)) else { return false }
            }
        }
    }

    private func outcome(exit: ProcessExit, inputEnded: Bool, overstayed: Bool) -> PluginRunOutcome {
        let (killed, stopped, done) = state.withLock { ($0.killedForRejections, $0.stopRequested, $0.pluginDone) }
        if killed {
            return .failed(reason: "killed after \(configuration.consecutiveRejectionLimit) rejected lines in a row")
        }
        if stopped { return .stopped }
        if done { return .finished }
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
        state.withLock { $0.outputEnded = true }
    }

    private func handle(_ piece: LineSplitter.Piece, from child: ChildProcess, logLines: inout LogLineBudget) {
        if state.withLock({ $0.killedForRejections || $0.stopRequested }) { return }
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
            enqueue { state in
                state.consecutiveRejections = 0
                state.outRecords.append(record)
            }
            signalOutput()
        case .log(let level, let message):
            state.withLock { $0.consecutiveRejections = 0 }
            if logLines.take() {
                configuration.log(ExternalAdapterLogEntry(adapterID: adapterID, device: deviceLabel, level: level,
                                                          message: String(message.prefix(4096)), origin: .plugin))
            }
        case .done:
            state.withLock { state in
                state.consecutiveRejections = 0
                state.pluginDone = true
            }
            listener?(.done)
        case .request(let request):
            if let refusal = admit(request) {
                reject(refusal, child: child)
            } else {
                listener?(.request(request))
            }
        case .rejected(let rejection):
            reject(rejection, child: child)
        }
    }

    /// Checks a request against the connection, the device, the rate and the pending limit;
    /// nil when it may go to the device (it is then pending until `requestAnswered`).
    private func admit(_ request: PluginRequest) -> PluginLineRejection? {
        guard isConversation, listener != nil else {
            return PluginLineRejection(.notConnected, "\(request.operation.name) \(request.id): this plugin holds no connection",
                                       requestID: request.id)
        }
        if let named = request.address, named != deviceAddress {
            return PluginLineRejection(.notYourDevice, "\(request.operation.name) \(request.id) names \(named), not the connected "
                                       + (deviceAddress.map { "\($0)" } ?? "device"), requestID: request.id)
        }
        let configuration = configuration
        return state.withLock { state -> PluginLineRejection? in
            let now = ContinuousClock.now
            let elapsed = ChildProcess.seconds(now - state.requestTokensUpdated)
            state.requestTokensUpdated = now
            state.requestTokens = min(Double(configuration.requestBurst),
                                      state.requestTokens + elapsed * configuration.requestsPerSecond)
            guard state.requestTokens >= 1 else {
                return PluginLineRejection(.rateLimited, "\(request.operation.name) \(request.id): over \(configuration.requestsPerSecond) requests a second",
                                           requestID: request.id)
            }
            guard state.pendingRequests < configuration.maximumPendingRequests else {
                return PluginLineRejection(.tooManyRequests, "\(request.operation.name) \(request.id): \(state.pendingRequests) requests are unanswered",
                                           requestID: request.id)
            }
            // An admitted request does not end a run of rejected lines: a plugin that floods gets a
            // few requests through and is still killed after the limit of refusals.
            state.requestTokens -= 1
            state.pendingRequests += 1
            return nil
        }
    }

    /// Tells the listener once that output waits, until it is drained.
    private func signalOutput() {
        guard let listener else { return }
        let first = state.withLock { state in
            defer { state.outputSignalled = true }
            return !state.outputSignalled
        }
        if first { listener(.output) }
    }

    /// Counts a rejected line (killing the plugin after too many in a row) and answers a refused
    /// request under its id.
    private func reject(_ rejection: PluginLineRejection, child: ChildProcess) {
        if let id = rejection.requestID, protocolVersion >= 2 {
            submitControl(ExternalConversationLine.failed(id: id, PluginRequestFailure(error: rejection.reason.rawValue,
                                                                                       message: rejection.detail)))
        }
        supervisor.countRejection(rejection.reason)
        let time = lastInputTimeOrNow()
        var kill = false
        let rejected = AdapterRejection(adapter: adapterID, reason: rejection.reason.rawValue,
                                        detail: "\(deviceLabel): \(rejection.detail)", time: time)
        let limit = configuration.consecutiveRejectionLimit
        enqueue { state in
            state.consecutiveRejections += 1
            state.outRejections.append(rejected)
            if state.consecutiveRejections >= limit && !state.killedForRejections {
                state.killedForRejections = true
                kill = true
            }
        }
        signalOutput()
        if kill {
            supervisor.countRejectionKill()
            note(.error, "killed: \(configuration.consecutiveRejectionLimit) rejected output lines in a row (last: \(rejection))")
            child.kill()
        }
    }

    /// Runs `change` under the lock once there is room in the output queue (or the runner is stopping).
    private func enqueue(_ change: (inout State) -> Void) {
        let capacity = configuration.outputQueueCapacity
        state.wait(until: nil, while: { $0.outRecords.count + $0.outRejections.count >= capacity && !$0.stopRequested }) {
            state, _ in change(&state)
        }
    }

    private func lastInputTimeOrNow() -> Date {
        state.withLock { $0.lastInputTime } ?? supervisor.clock.now()
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

/// One condition and the state it guards: the state is reachable only inside ``withLock(_:)`` and
/// ``wait(until:while:then:)``, so nothing reads or writes it without the lock, and every change
/// wakes the waiters (each waits for its own predicate, so a wake-up for another is harmless).
final class ConditionGuarded<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    /// Runs `body` on the state under the lock, then wakes every waiter.
    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits while `blocked` holds (until `deadline` at the latest, without one for ever), then runs
    /// `body` under the same lock, told whether the wait ended before the deadline; then wakes every waiter.
    @discardableResult
    func wait<T>(until deadline: Date?, while blocked: (State) -> Bool, then body: (inout State, _ inTime: Bool) -> T) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        var inTime = true
        while blocked(state) {
            if let deadline {
                if !condition.wait(until: deadline) {
                    inTime = !blocked(state)
                    break
                }
            } else {
                condition.wait()
            }
        }
        return body(&state, inTime)
    }
}

/// What a runner tells a conversation, from its threads.
enum PluginRunnerEvent: Sendable {
    /// A well-formed, admitted request; answer it and call `requestAnswered()`.
    case request(PluginRequest)
    /// Records or rejections wait to be drained.
    case output
    /// The plugin printed `{"done":true}`.
    case done
    /// The runner ended: the process exited and will not be started again.
    case finished
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
