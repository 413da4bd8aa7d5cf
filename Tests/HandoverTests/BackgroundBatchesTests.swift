import Foundation
import Handover
import Testing
import TestSupport

@Suite(.offCooperativePool) struct BackgroundBatchesTests {
    struct Broken: Error, Equatable { var after: Int }

    @Test func batchesArriveInOrderAndTheEndSaysHowItEnded() {
        let batches = BackgroundBatches<[Int]>(name: "test-producer") { put in
            for start in stride(from: 0, to: 100, by: 10) { try put(Array(start..<start + 10)) }
        }
        var seen: [Int] = []
        while let batch = batches.next() { seen += batch }
        #expect(seen == Array(0..<100))
        #expect(batches.waitForEnd() == nil)
        #expect(batches.next() == nil)
    }

    /// A producer that fails hands over everything before the failure; the failure comes after.
    @Test func aFailureComesAfterTheBatchesBeforeIt() {
        let batches = BackgroundBatches<Int>(name: "test-producer") { put in
            for value in 0..<5 { try put(value) }
            throw Broken(after: 5)
        }
        var seen: [Int] = []
        while let value = batches.next() { seen.append(value) }
        #expect(seen == [0, 1, 2, 3, 4])
        #expect(batches.waitForEnd() as? Broken == Broken(after: 5))
    }

    /// At most `depth` batches wait: the producer is held back until one is taken.
    @Test func theProducerWaitsWhileDepthBatchesWait() {
        let handedOver = Counter()
        let batches = BackgroundBatches<Int>(name: "test-producer", depth: 2) { put in
            for value in 0..<10 {
                try put(value)
                handedOver.add()
            }
        }
        // Once two are handed over, give the producer time to run ahead if it could.
        #expect(handedOver.waitFor(2))
        Thread.sleep(forTimeInterval: 0.2)
        #expect(handedOver.value == 2)
        #expect(batches.next() == 0)
        #expect(handedOver.waitFor(3))
        Thread.sleep(forTimeInterval: 0.2)
        #expect(handedOver.value == 3)
        batches.close()
    }

    /// Closing early (or dropping the value) stops a producer that would run forever, and
    /// `close` returns only once its thread ended.
    @Test func closingStopsAnEndlessProducer() {
        let ended = Counter()
        var batches: BackgroundBatches<Int>? = BackgroundBatches(name: "test-producer") { put in
            defer { ended.add() }
            var value = 0
            while true {
                try put(value)
                value += 1
            }
        }
        #expect(batches?.next() == 0)
        batches?.close()
        #expect(ended.value == 1)
        #expect(batches?.next() == nil)
        #expect(batches?.waitForEnd() == nil)  // stopped by close: not a failure
        let dropped = Counter()
        batches = BackgroundBatches(name: "test-producer") { put in
            defer { dropped.add() }
            while true { try put(1) }
        }
        batches = nil
        #expect(dropped.value == 1)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func add() { lock.withLock { count += 1 } }
        /// Whether the count reached `target` within 10 s.
        func waitFor(_ target: Int) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while value < target, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            return value >= target
        }
    }
}
