import Foundation
import HealthModel
import Synchronization

/// A flag a sleeping thread can be woken by (a session finishing or being stopped).
public final class WakeUpSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var generation = 0

    public init() {}

    /// Wakes every thread sleeping on this signal now.
    public func fire() {
        condition.lock()
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Sleeps until `deadline` (wall clock) or until ``fire()``; true when woken by `fire`.
    @discardableResult
    public func wait(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let start = generation
        while generation == start {
            if !condition.wait(until: deadline) { return generation != start }
        }
        return true
    }
}

/// The time source of restart back-off. The system clock sleeps for real; tests pass a clock
/// that advances instantly so that back-off sequences run in no time and can be checked exactly.
public protocol SupervisorClock: Sendable {
    /// The current time.
    func now() -> Date
    /// Blocks the calling thread until `deadline` or until `wakeUp` fires.
    func sleep(until deadline: Date, wakeUp: WakeUpSignal)
}

/// The real clock.
public struct SystemSupervisorClock: SupervisorClock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(until deadline: Date, wakeUp: WakeUpSignal) { wakeUp.wait(until: deadline) }
}

/// When a plugin that failed may start again: exponential back-off from `initialDelay`,
/// doubling per consecutive failure up to `maximumDelay`. A run that lasted `stableRunDuration`
/// or ended with `{"done":true}` resets the count.
public struct RestartPolicy: Sendable, Hashable {
    public var initialDelay: TimeInterval
    public var maximumDelay: TimeInterval
    public var multiplier: Double
    public var stableRunDuration: TimeInterval

    /// 1 s, 2 s, 4 s … 5 min; a run of a minute counts as healthy.
    public init(initialDelay: TimeInterval = 1, maximumDelay: TimeInterval = 300, multiplier: Double = 2,
                stableRunDuration: TimeInterval = 60) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.stableRunDuration = stableRunDuration
    }

    /// The wait after `failures` consecutive failures (1 → `initialDelay`).
    public func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        var delay = initialDelay
        for _ in 1..<failures {
            delay *= multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}

/// How one run of a plugin process ended.
public enum PluginRunOutcome: Sendable, Hashable {
    /// It printed `{"done":true}`, or exited with status 0 after its stdin was closed.
    case finished
    /// The daemon stopped it (shutdown, or a session finishing past its time limit).
    case stopped
    /// It crashed, exited on its own, or was killed for its output; restarted after back-off.
    case failed(reason: String)
}

/// What `ingestd adapters` shows for an external adapter.
public enum ExternalAdapterState: Sendable, Hashable, CustomStringConvertible {
    /// Described correctly; running or ready to run.
    case ok
    /// Not used: the reason says why (`--describe` timed out, bad descriptor, not executable…).
    case broken(reason: String)
    /// Its process failed; the next start is not before `nextAttempt`.
    case restarting(nextAttempt: Date, reason: String)

    public var description: String {
        switch self {
        case .ok: "ok"
        case .broken(let reason): "broken: \(reason)"
        case .restarting(let next, let reason): "restarting: next attempt \(ISO8601DateTime.string(from: next)) (\(reason))"
        }
    }
}

/// Counters of one external adapter since the daemon started.
public struct ExternalAdapterStatistics: Sendable, Hashable {
    /// Processes started.
    public var starts = 0
    /// Runs that failed (crash, unexpected exit, killed for rejected lines).
    public var failures = 0
    /// Runs killed after too many rejected lines in a row.
    public var rejectionKills = 0
    /// Records accepted from the plugin's output.
    public var records = 0
    /// Rejected output lines per reason.
    public var rejections: [PluginRejectionReason: Int] = [:]
    /// Advertisements dropped because the plugin did not read its stdin fast enough.
    public var droppedAdvertisements = 0

    public init() {}

    /// All rejected lines.
    public var rejectedLines: Int { rejections.values.reduce(0, +) }
}

/// The restart bookkeeping of one external adapter, shared by all its sessions: consecutive
/// failures, when the next process may start, the state for `ingestd adapters`, and counters.
public final class PluginSupervisor: Sendable {
    public let adapterID: String
    public let policy: RestartPolicy
    public let clock: any SupervisorClock

    private struct State {
        var consecutiveFailures = 0
        var nextPermittedStart: Date?
        var lastFailure: String?
        var statistics = ExternalAdapterStatistics()
        var delays: [TimeInterval] = []
    }
    private let locked = Mutex(State())

    public init(adapterID: String, policy: RestartPolicy = RestartPolicy(), clock: any SupervisorClock = SystemSupervisorClock()) {
        self.adapterID = adapterID
        self.policy = policy
        self.clock = clock
    }

    /// The earliest time a process may start; nil for now.
    public var nextPermittedStart: Date? { locked.withLock { $0.nextPermittedStart } }

    /// `.ok`, or `.restarting` while a back-off is pending.
    public var state: ExternalAdapterState {
        let now = clock.now()
        return locked.withLock { state in
            guard let next = state.nextPermittedStart, state.consecutiveFailures > 0 else { return .ok }
            return .restarting(nextAttempt: max(next, now), reason: state.lastFailure ?? "failed")
        }
    }

    public var statistics: ExternalAdapterStatistics { locked.withLock { $0.statistics } }

    /// The back-off delays chosen so far, in order (for tests and diagnostics).
    public var chosenDelays: [TimeInterval] { locked.withLock { $0.delays } }

    /// Notes a process start and returns the start time.
    func processStarted() -> Date {
        locked.withLock { $0.statistics.starts += 1 }
        return clock.now()
    }

    /// Notes how a run that started at `start` ended; returns the back-off delay chosen (0 when
    /// the run was not a failure).
    @discardableResult
    func processEnded(startedAt start: Date, outcome: PluginRunOutcome) -> TimeInterval {
        let now = clock.now()
        return locked.withLock { state -> TimeInterval in
            let stable = now.timeIntervalSince(start) >= policy.stableRunDuration
            switch outcome {
            case .finished, .stopped:
                if stable || outcome == .finished {
                    state.consecutiveFailures = 0
                    state.nextPermittedStart = nil
                }
                return 0
            case .failed(let reason):
                state.statistics.failures += 1
                state.consecutiveFailures = stable ? 1 : state.consecutiveFailures + 1
                let delay = policy.delay(afterFailures: state.consecutiveFailures)
                state.nextPermittedStart = now.addingTimeInterval(delay)
                state.lastFailure = reason
                state.delays.append(delay)
                return delay
            }
        }
    }

    /// Notes a start that failed before the process ran (the executable vanished).
    @discardableResult
    func spawnFailed(_ reason: String) -> TimeInterval {
        processEnded(startedAt: clock.now(), outcome: .failed(reason: reason))
    }

    func countRecord() { locked.withLock { $0.statistics.records += 1 } }
    func countRejection(_ reason: PluginRejectionReason) { locked.withLock { $0.statistics.rejections[reason, default: 0] += 1 } }
    func countRejectionKill() { locked.withLock { $0.statistics.rejectionKills += 1 } }
    func countDroppedAdvertisement() { locked.withLock { $0.statistics.droppedAdvertisements += 1 } }
}

