import Foundation
import TestSupport
import Testing

/// The trait the suites that block their threads carry: their bodies, synchronous or not, and
/// the child tasks they start run on threads of their own, never on the cooperative pool.
@Suite(.offCooperativePool) struct OffCooperativePoolTests {
    @Test func aSynchronousBodyRunsOnAThreadOfItsOwn() {
        #expect(ThreadPerJobExecutor.isOnThreadPerJobExecutor, "\(Thread.current)")
    }

    @Test func anAsyncBodyStaysOffThePoolAcrossSuspensionsAndInItsChildTasks() async throws {
        try await Task.sleep(for: .milliseconds(10))
        #expect(ThreadPerJobExecutor.isOnThreadPerJobExecutor)
        let children = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { ThreadPerJobExecutor.isOnThreadPerJobExecutor } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(children == [true, true, true, true])
    }
}

/// Without the trait a test runs on the cooperative pool: the check above can tell the two apart.
@Suite struct CooperativePoolControlTests {
    @Test func withoutTheTraitTheBodyRunsOnThePool() async {
        #expect(!ThreadPerJobExecutor.isOnThreadPerJobExecutor)
    }
}
