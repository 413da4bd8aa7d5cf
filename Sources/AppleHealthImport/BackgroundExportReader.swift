import Foundation
import HealthModel

/// Reads an Apple Health export on a thread of its own and hands its records over in batches,
/// so that inflating, XML reading and record building overlap with the caller's storing (on
/// two cores an import takes about as long as the slower of the two halves, not their sum).
///
/// At most `depth` batches wait to be taken: memory stays bounded whatever the export's size,
/// and a slow store holds the reader back. `close()` (also run on deinit) stops the reader
/// and waits for its thread.
public final class BackgroundExportReader: @unchecked Sendable {
    // Unchecked: `ready`, `stopped`, `outcome` are guarded by `condition`; the
    // reader and its source are made here and then used by the reading thread alone.

    /// A batch of records, the (source, type) pairs first seen in it, and how far into the file
    /// reading had come when it was complete.
    public struct Batch: Sendable {
        public var records: [HealthRecord]
        public var newSourceTypes: [(source: String, type: QuantityType)]
        public var fileOffset: Int
    }

    /// How the reading ended: what it found, and the damage that stopped it (nil: the whole
    /// document was read).
    public struct Outcome: Sendable {
        public var tally: AppleHealthImportTally
        public var damage: AppleHealthImportError?
    }

    private let condition = NSCondition()
    private var ready: [Batch] = []
    private var stopped = false
    /// Set by the reading thread as it ends: the reading is over.
    private var outcome: Outcome?
    private let depth: Int
    private let reader: AppleHealthExportReader
    private let xml: XMLPullReader

    /// Starts reading `source` (from `AppleHealthExportFile.open`) in batches of `batchSize`
    /// records, at most `depth` of them waiting.
    public init(source: ByteChunkSource, batchSize: Int, depth: Int = 1) {
        self.depth = max(1, depth)
        let xml = XMLPullReader(source: source)
        self.xml = xml
        let handOver = HandOver()
        reader = AppleHealthExportReader(xml: xml) { records in
            guard let target = handOver.target else { return }
            try target.put(Batch(records: records, newSourceTypes: target.reader.takeNewSourceTypes(), fileOffset: xml.fileOffset))
        }
        reader.batchSize = batchSize
        handOver.target = self
        let thread = Thread { [self] in read() }
        thread.name = "ingestd-import-reader"
        thread.start()
    }

    deinit { close() }

    /// The next batch, waiting for it; nil once the document is read (or the reading stopped):
    /// then `waitForOutcome()` says how it ended.
    public func next() -> Batch? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty, outcome == nil { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let batch = ready.removeFirst()
        condition.broadcast()
        return batch
    }

    /// What the reading found and how it ended; waits until the reading thread is done.
    public func waitForOutcome() -> Outcome {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil { condition.wait() }
        return outcome ?? Outcome(tally: AppleHealthImportTally(), damage: nil)
    }

    /// Stops the reading (batches not yet taken are dropped) and waits for its thread.
    public func close() {
        condition.lock()
        stopped = true
        ready.removeAll()
        condition.broadcast()
        while outcome == nil { condition.wait() }
        condition.unlock()
    }

    private struct Stopped: Error {}

    /// The reading thread's hand-over: waits while `depth` batches are waiting.
    private func put(_ batch: Batch) throws {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= depth, !stopped { condition.wait() }
        guard !stopped else { throw Stopped() }
        ready.append(batch)
        condition.broadcast()
    }

    private func read() {
        var damage: AppleHealthImportError?
        do {
            try reader.run()
        } catch let error as AppleHealthImportError {
            damage = error
        } catch {
            // Stopped by `close()`: nothing more to say.
        }
        let result = Outcome(tally: reader.tally, damage: damage)
        condition.lock()
        outcome = result
        condition.broadcast()
        condition.unlock()
    }

    /// Breaks the cycle reader → closure → self: the closure holds this box, the box holds self weakly.
    private final class HandOver: @unchecked Sendable {
        weak var target: BackgroundExportReader?
    }
}
