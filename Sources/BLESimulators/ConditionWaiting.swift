/// The conditions tests wait on, each with the continuation to resume when it holds or when its
/// time runs out.
struct ConditionWaiters {
    private var waiters: [Int: (check: () -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var nextID = 0

    /// Registers a waiter; the returned id expires it.
    mutating func add(_ check: @escaping () -> Bool, _ continuation: CheckedContinuation<Bool, Never>) -> Int {
        nextID += 1
        waiters[nextID] = (check, continuation)
        return nextID
    }

    /// The waiter's time ran out: it resumes with false (nothing happens if it already resumed).
    mutating func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: false)
    }

    /// Resumes, with true, every waiter whose condition now holds.
    mutating func resumeSatisfied() {
        for (id, waiter) in waiters where waiter.check() {
            waiters[id] = nil
            waiter.continuation.resume(returning: true)
        }
    }
}

/// A simulator whose tests wait, bounded in time, for something to have happened to it.
protocol ConditionWaiting: Actor {
    var waiters: ConditionWaiters { get set }
}

extension ConditionWaiting {
    /// Returns when `condition` holds (checked now and after each ``resumeSatisfiedWaiters()``);
    /// throws ``SimulatorTimeout`` after `limit`.
    func waitUntil(_ what: String, within limit: Duration, _ condition: @escaping () -> Bool)
        async throws(SimulatorTimeout)
    {
        if condition() { return }
        let happened = await withCheckedContinuation { continuation in
            let id = waiters.add(condition, continuation)
            Task {
                try? await Task.sleep(for: limit)
                self.expireWaiter(id)
            }
        }
        guard happened else { throw SimulatorTimeout(waitingFor: what, after: limit) }
    }

    func expireWaiter(_ id: Int) {
        waiters.expire(id)
    }

    /// Call after every change a waiter may be waiting for.
    func resumeSatisfiedWaiters() {
        waiters.resumeSatisfied()
    }
}
