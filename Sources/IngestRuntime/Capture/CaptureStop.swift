import Foundation
import Synchronization

/// Ends a capture early: Ctrl-C, SIGTERM, or a test that has seen enough.
public final class CaptureStop: Sendable {
    private struct State {
        var stopped = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// Asks the capture to end; idempotent.
    public init() {}

    public func stop() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Returns when ``stop()`` was called or `duration` has passed, whichever is first.
    public func wait(atMost duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.waitForStop() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForStop() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    // The cancellation flag is set before the handler runs, so checking it under the
                    // lock closes the window between the handler and this registration.
                    if state.stopped || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
