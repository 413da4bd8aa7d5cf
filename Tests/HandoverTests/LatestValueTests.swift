import Foundation
import Handover
import Testing
import TestSupport

/// `LatestValue`: what one thread published last is what another reads, never a value it did
/// not publish, while both run at once.
@Suite(.offCooperativePool) struct LatestValueTests {
    @Test func aReaderSeesOnlyPublishedValuesInTheOrderTheyWerePublished() {
        // Pairs whose halves are written together: a torn read would show halves that differ.
        let latest = LatestValue<[Int]>([0, 0])
        let batches = BackgroundBatches<[Int]>(name: "test-publisher") { put in
            for value in 1...20_000 { latest.publish([value, value]) }
            try put([])
        }
        var seen = 0
        var reads = 0
        while !batches.hasEnded || reads == 0 {
            let value = latest.value
            #expect(value[0] == value[1], "a published pair, whole")
            #expect(value[0] >= seen, "never an older value after a newer one")
            seen = value[0]
            reads += 1
        }
        _ = batches.next()
        #expect(batches.waitForEnd() == nil)
        #expect(latest.value == [20_000, 20_000])
    }
}
