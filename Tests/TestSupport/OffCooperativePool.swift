import Foundation
import Testing

/// A task executor that runs every job it is given on a new thread of its own, so work that
/// blocks its thread (a synchronous test waiting for a child process, a semaphore, a sleep)
/// never holds one of Swift concurrency's cooperative threads. There are only as many of those
/// as cores (two on the CI machines), and the tests run in parallel: two blocked suites would
/// otherwise stall every async test, and the ones that measure silence or listen for a fixed
/// time fail. A thread per job (not a serial queue) so a job that blocks until another job of
/// the same test has run cannot deadlock.
public final class ThreadPerJobExecutor: TaskExecutor {
    /// The name of the threads (Linux keeps 15 bytes of a thread's name).
    public static let threadName = "test-off-pool"
    private static let markerKey = "ingestd.ThreadPerJobExecutor"

    /// The one executor the trait uses; it holds no state.
    public static let shared = ThreadPerJobExecutor()

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread {
            Thread.current.threadDictionary[Self.markerKey] = true
            job.runSynchronously(on: executor)
        }
        thread.name = Self.threadName
        thread.start()
    }

    /// Whether the calling code runs on one of this executor's threads.
    public static var isOnThreadPerJobExecutor: Bool { Thread.current.threadDictionary[markerKey] as? Bool == true }
}

/// Runs a suite's tests (or one test) with ``ThreadPerJobExecutor`` as their task executor, off
/// the cooperative pool. For suites whose tests block their thread: synchronous tests that run
/// processes (`IngestdProcess.runBlocking`, umockdev, brokers, validators) or sleep.
public struct OffCooperativePoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OffCooperativePoolTrait {
    /// The suite's (or test's) bodies run on threads of their own, not on the cooperative pool:
    /// for tests that block their thread. See ``ThreadPerJobExecutor``.
    public static var offCooperativePool: Self { OffCooperativePoolTrait() }
}
