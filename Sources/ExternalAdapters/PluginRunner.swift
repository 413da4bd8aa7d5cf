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
///
/// Each lock guards one thing, and each wait reads only the state of its own lock:
/// - the input queue (lines, its end, stop and `done`, which end feeding): the feeder waits on it;
/// - the output queue (records, rejections, skips, the runner's end): callers wait on it for
///   output, the stdout reader for room;
/// - the process slot (the current process): taken to kill it, never waited on;
/// - the request budget (protocol 2's token bucket and unanswered requests).
/// A stop is recorded in the input queue and releases the output queue; a run's count of
/// rejected lines in a row belongs to its stdout reader alone. No lock is taken inside another.
final class PluginRunner: Sendable {
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

    /// The plugin's stdin: queued lines and what ends them. The feeder waits on it for a line; a
    /// stop or `done` is recorded here because it ends the feeding and every further run.
    private struct InputQueue {
        var lines: [String] = []
        /// No more lines are taken; the feeder writes what is queued and then ends the input.
        var closed = false
        /// `stop()` was called: the feeder stops at once and no run starts again.
        var stopRequested = false
        /// The plugin printed `{"done":true}`: likewise.
        var pluginDone = false
        /// The current run's stdout reader saw the end of the stream: this run's feeder stops.
        var outputEnded = false
        /// Runs started so far.
        var runs = 0
        /// The time of the last advertisement taken (what a rejected line is reported at).
        var lastInputTime: Date?

        /// Whether another run is wanted: not stopped, not done, and input left to deliver (or the
        /// input has not ended yet). The first run always happens unless stopped.
        var wantsRun: Bool {
            if stopRequested || pluginDone { return false }
            if closed && lines.isEmpty && runs > 0 { return false }
            return true
        }

        /// The skip reason of a line offered now; nil when it is taken.
        var refusal: String? {
            if pluginDone { return "plugin-done" }
            if stopRequested || closed { return "plugin-stopped" }
            return nil
        }

        /// Queues `line`, dropping the oldest one when `capacity` lines wait; true when one was dropped.
        mutating func append(_ line: String, capacity: Int) -> Bool {
            var dropped = false
            if lines.count >= capacity {
                lines.removeFirst()
                dropped = true
            }
            lines.append(line)
            return dropped
        }
    }

    /// What the plugin produced and nobody drained yet. Callers wait on it for output or the end
    /// of the runner; the stdout reader waits on it for room.
    private struct OutputQueue {
        var records: [HealthRecord] = []
        var rejections: [AdapterRejection] = []
        var skipped: [String: Int] = [:]
        /// Whether `.output` was signalled and not drained since.
        var signalled = false
        /// The runner has ended: the process exited and will not be started again.
        var runnerFinished = false
        /// `stop()` was called: the reader no longer waits for room.
        var released = false

        var hasOutput: Bool { !records.isEmpty || !rejections.isEmpty || !skipped.isEmpty }

        /// Whether the reader must wait before it adds a record or a rejection.
        func isFull(capacity: Int) -> Bool { records.count + rejections.count >= capacity && !released }

        /// Moves out what the plugin produced so far.
        mutating func drain(into output: inout AdapterOutput) {
            signalled = false
            guard hasOutput else { return }
            output.records += records
            output.rejections += rejections
            for (reason, count) in skipped { output.skipped[reason, default: 0] += count }
            records.removeAll(keepingCapacity: true)
            rejections.removeAll(keepingCapacity: true)
            skipped.removeAll(keepingCapacity: true)
        }
    }

    /// The current run's process; nobody waits on it.
    private struct ProcessSlot {
        /// The runner thread was started.
        var started = false
        var process: ChildProcess?
        /// The current run was killed for too many rejected lines in a row (set by its stdout
        /// reader, read by the runner thread once the readers have ended).
        var killedForRejections = false
    }

    /// The admission of protocol-2 requests: a token bucket and the unanswered ones.
    private struct RequestBudget {
        /// Requests handed to the listener and not answered yet.
        var pending = 0
        var tokens: Double
        var tokensUpdated = ContinuousClock.now
    }

    /// What one run's stdout reader keeps to itself (no lock: one thread).
    private struct OutputReading {
        var logLines: LogLineBudget
        var consecutiveRejections = 0
        /// This reader killed the process for rejected lines; it handles no more lines.
        var killed = false
    }

    /// Lines for the plugin; the feeder's condition.
    private let inputQueue = ConditionGuarded(InputQueue())
    /// The plugin's output; the condition of callers waiting for it and of the reader waiting for room.
    private let outputQueue = ConditionGuarded(OutputQueue())
    private let slot = Mutex(ProcessSlot())
    private let requests: Mutex<RequestBudget>
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
        requests = Mutex(RequestBudget(tokens: Double(adapter.configuration.requestBurst)))
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
        let first = slot.withLock { slot in
            defer { slot.started = true }
            return !slot.started
        }
        guard first else { return }
        let thread = Thread { [self] in runLoop() }
        thread.name = "ingestd-adapter-\(adapterID) runner"
        thread.start()
    }

    /// What became of a line offered to the input queue.
    private enum Offer {
        case queued, dropped, refused(String)
    }

    /// Queues one stdin line; never blocks. When the queue is full the oldest line is dropped.
    func submit(_ line: String, time: Date) {
        let capacity = configuration.inputQueueCapacity
        let offer = inputQueue.withLock { queue -> Offer in
            if let refusal = queue.refusal { return .refused(refusal) }
            queue.lastInputTime = time
            return queue.append(line, capacity: capacity) ? .dropped : .queued
        }
        switch offer {
        case .queued:
            break
        case .dropped:
            outputQueue.withLock { $0.skipped["advertisement-dropped", default: 0] += 1 }
            supervisor.countDroppedAdvertisement()
        case .refused(let reason):
            outputQueue.withLock { $0.skipped[reason, default: 0] += 1 }
        }
    }

    /// Queues a protocol-2 line (an answer, a notification, `connected`, `committed`); never
    /// blocks. When the plugin does not read and the queue is full, the oldest line is dropped
    /// and counted (`input-dropped`).
    func submitControl(_ line: String) {
        let capacity = configuration.inputQueueCapacity
        let offer = inputQueue.withLock { queue -> Offer in
            if let refusal = queue.refusal { return .refused(refusal) }
            return queue.append(line, capacity: capacity) ? .dropped : .queued
        }
        if case .dropped = offer {
            outputQueue.withLock { $0.skipped["input-dropped", default: 0] += 1 }
        }
    }

    /// Ends the plugin's input (once the queued lines are written) without waiting.
    func closeInput() {
        inputQueue.withLock { $0.closed = true }
        wakeUp.fire()
    }

    /// A request handed to the listener was answered (or failed).
    func requestAnswered() {
        requests.withLock { $0.pending = max(0, $0.pending - 1) }
    }

    /// Whether the plugin printed `{"done":true}`.
    var isDone: Bool { inputQueue.withLock { $0.pluginDone } }

    /// Whether the runner has ended (the process exited and will not be started again).
    var hasFinished: Bool { outputQueue.withLock { $0.runnerFinished } }

    /// Moves out what the plugin produced so far.
    func drain(into output: inout AdapterOutput) {
        outputQueue.withLock { $0.drain(into: &output) }  // a reader waiting for room wakes
    }

    /// Waits up to `timeout` for output or the end of the runner; drains; true once the runner ended.
    func waitForOutput(timeout: Duration, into output: inout AdapterOutput) -> Bool {
        let deadline = Date().addingTimeInterval(ChildProcess.seconds(timeout))
        return outputQueue.wait(until: deadline, while: { !$0.hasOutput && !$0.runnerFinished }) { queue, _ in
            queue.drain(into: &output)
            return queue.runnerFinished
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
        inputQueue.withLock { $0.closed = true }
        let started = slot.withLock { $0.started }
        wakeUp.fire()

        var deadline = Date().addingTimeInterval(ChildProcess.seconds(configuration.finishTimeout))
        /// Drains under the lock; flushes without it. The plugin's time to finish does not count
        /// the time the caller spends committing (the plugin waits on back-pressure then). After a
        /// flush it drains again: the reader may have filled the queue meanwhile.
        func drainAndFlush() throws {
            while true {
                outputQueue.withLock { $0.drain(into: &output) }
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
                if Date() >= until() { return outputQueue.withLock { $0.runnerFinished } }
                let (finished, waited) = outputQueue.wait(until: until(), while: { !$0.hasOutput && !$0.runnerFinished }) {
                    queue, waited in (queue.runnerFinished, waited)
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

        let undelivered = inputQueue.withLock { queue in
            defer { queue.lines.removeAll() }
            return queue.lines.count
        }
        if undelivered > 0 { output.skipped["advertisement-undelivered", default: 0] += undelivered }
    }

    /// Kills the process and ends the runner; nothing more is delivered.
    ///
    /// The stop is recorded before the process is looked up, and `startProcess` stores a new
    /// process before it looks for a stop: whichever comes second sees the other and kills it.
    func stop() {
        inputQueue.withLock { $0.stopRequested = true }  // the feeder stops; no run starts again
        outputQueue.withLock { $0.released = true }  // a reader waiting for room goes on (and stops)
        let current = slot.withLock { $0.process }
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
                inputQueue.withLock { $0.outputEnded = true }
                stopReading.set()
                readers.wait()
            }
            let outcome = outcome(exit: exit ?? .signalled(SIGKILL), inputEnded: inputEnded, overstayed: overstayed)
            let delay = supervisor.processEnded(startedAt: startedAt, outcome: outcome)
            configuration.stateChanged(adapterID)
            slot.withLock { $0.process = nil }
            switch outcome {
            case .finished, .stopped:
                note(.debug, "process ended (\(exit ?? .signalled(SIGKILL)))")
                return endRunner()
            case .failed(let reason):
                if isConversation {
                    note(.warning, "\(reason); the connection ends (the next one waits \(Self.format(delay)))")
                    return endRunner()
                }
                let again = inputQueue.withLock { $0.wantsRun }
                note(.warning, again ? "\(reason); restarting in \(Self.format(delay))" : reason)
            }
        }
        endRunner()
    }

    private func endRunner() {
        outputQueue.withLock { $0.runnerFinished = true }
        listener?(.finished)
    }

    /// Waits out the back-off and starts the next process; nil when no run is wanted any more.
    private func startProcess() -> ChildProcess? {
        while true {
            guard inputQueue.withLock({ $0.wantsRun }) else { return nil }
            if let next = supervisor.nextPermittedStart, supervisor.clock.now() < next {
                supervisor.clock.sleep(until: next, wakeUp: wakeUp)
                continue
            }
            inputQueue.withLock { $0.runs += 1 }
            do {
                let child = try ChildProcess.spawn(executable: executable, arguments: ["--run"],
                                                   environment: configuration.pluginEnvironment(protocolVersion: protocolVersion))
                // Stored before the stop is looked for (see `stop()`).
                slot.withLock { slot in
                    slot.process = child
                    slot.killedForRejections = false
                }
                let stopped = inputQueue.withLock { queue -> Bool in
                    queue.outputEnded = false
                    return queue.stopRequested
                }
                if stopped {
                    slot.withLock { $0.process = nil }
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
            let next: Next = inputQueue.wait(until: nil, while: {
                $0.lines.isEmpty && !$0.closed && !$0.stopRequested && !$0.pluginDone && !$0.outputEnded
            }) { queue, _ in
                if queue.stopRequested || queue.pluginDone || queue.outputEnded { return .stopped }
                if queue.lines.isEmpty { return .ended }  // closed with nothing left to send
                return .write(queue.lines.removeFirst())
            }
            switch next {
            case .stopped: return false
            case .ended: return true
            case .write(let line): guard child.writeInput(Array((line + "\n").utf8)) else { return false }
            }
        }
    }

    private func outcome(exit: ProcessExit, inputEnded: Bool, overstayed: Bool) -> PluginRunOutcome {
        let killed = slot.withLock { $0.killedForRejections }
        let (stopped, done) = inputQueue.withLock { ($0.stopRequested, $0.pluginDone) }
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
        var reading = OutputReading(logLines: LogLineBudget(limit: configuration.logLinesPerRun))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        reading: while !stop.isSet {
            switch DescriptorReader.read(child.outputDescriptor, into: buffer, timeout: .seconds(1)) {
            case .data(let count):
                splitter.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { piece in handle(piece, from: child, reading: &reading) }
            case .timedOut:
                continue
            case .endOfFile, .failed:
                break reading
            }
        }
        if let last = splitter.finish() { handle(last, from: child, reading: &reading) }
        if reading.logLines.unlogged > 0 { note(.warning, "\(reading.logLines.unlogged) further log lines not logged") }
        inputQueue.withLock { $0.outputEnded = true }
    }

    private func handle(_ piece: LineSplitter.Piece, from child: ChildProcess, reading: inout OutputReading) {
        if reading.killed || inputQueue.withLock({ $0.stopRequested }) { return }
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
            reading.consecutiveRejections = 0
            enqueue { $0.records.append(record) }
            signalOutput()
        case .log(let level, let message):
            reading.consecutiveRejections = 0
            if reading.logLines.take() {
                configuration.log(ExternalAdapterLogEntry(adapterID: adapterID, device: deviceLabel, level: level,
                                                          message: String(message.prefix(4096)), origin: .plugin))
            }
        case .done:
            reading.consecutiveRejections = 0
            inputQueue.withLock { $0.pluginDone = true }
            listener?(.done)
        case .request(let request):
            if let refusal = admit(request) {
                reject(refusal, child: child, reading: &reading)
            } else {
                listener?(.request(request))
            }
        case .rejected(let rejection):
            reject(rejection, child: child, reading: &reading)
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
        return requests.withLock { budget -> PluginLineRejection? in
            let now = ContinuousClock.now
            let elapsed = ChildProcess.seconds(now - budget.tokensUpdated)
            budget.tokensUpdated = now
            budget.tokens = min(Double(configuration.requestBurst), budget.tokens + elapsed * configuration.requestsPerSecond)
            guard budget.tokens >= 1 else {
                return PluginLineRejection(.rateLimited, "\(request.operation.name) \(request.id): over \(configuration.requestsPerSecond) requests a second",
                                           requestID: request.id)
            }
            guard budget.pending < configuration.maximumPendingRequests else {
                return PluginLineRejection(.tooManyRequests, "\(request.operation.name) \(request.id): \(budget.pending) requests are unanswered",
                                           requestID: request.id)
            }
            // An admitted request does not end a run of rejected lines: a plugin that floods gets a
            // few requests through and is still killed after the limit of refusals.
            budget.tokens -= 1
            budget.pending += 1
            return nil
        }
    }

    /// Tells the listener once that output waits, until it is drained.
    private func signalOutput() {
        guard let listener else { return }
        let first = outputQueue.withLock { queue in
            defer { queue.signalled = true }
            return !queue.signalled
        }
        if first { listener(.output) }
    }

    /// Counts a rejected line (killing the plugin after too many in a row) and answers a refused
    /// request under its id.
    private func reject(_ rejection: PluginLineRejection, child: ChildProcess, reading: inout OutputReading) {
        if let id = rejection.requestID, protocolVersion >= 2 {
            submitControl(ExternalConversationLine.failed(id: id, PluginRequestFailure(error: rejection.reason.rawValue,
                                                                                       message: rejection.detail)))
        }
        supervisor.countRejection(rejection.reason)
        let rejected = AdapterRejection(adapter: adapterID, reason: rejection.reason.rawValue,
                                        detail: "\(deviceLabel): \(rejection.detail)", time: lastInputTimeOrNow())
        enqueue { $0.rejections.append(rejected) }
        signalOutput()
        reading.consecutiveRejections += 1
        guard reading.consecutiveRejections >= configuration.consecutiveRejectionLimit, !reading.killed else { return }
        reading.killed = true
        slot.withLock { $0.killedForRejections = true }
        supervisor.countRejectionKill()
        note(.error, "killed: \(configuration.consecutiveRejectionLimit) rejected output lines in a row (last: \(rejection))")
        child.kill()
    }

    /// Runs `change` under the output queue's lock once it has room (or the runner is stopping).
    private func enqueue(_ change: (inout OutputQueue) -> Void) {
        let capacity = configuration.outputQueueCapacity
        outputQueue.wait(until: nil, while: { $0.isFull(capacity: capacity) }) { queue, _ in change(&queue) }
    }

    private func lastInputTimeOrNow() -> Date {
        inputQueue.withLock { $0.lastInputTime } ?? supervisor.clock.now()
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
