import Foundation
import Handover
import HealthModel

/// Reads an Apple Health export on a thread of its own (``BackgroundBatches``) and hands its
/// records over in batches, so that inflating, XML reading and record building overlap with the
/// caller's storing. Each batch's records are handed through `prepare` on the reading thread
/// too (the import takes them through the pipeline's first stages there). At most `depth`
/// batches wait to be taken; `close()` (also when the reader goes away, by
/// ``BackgroundBatches``) stops the reading and waits for its thread.
public final class BackgroundExportReader<Prepared: Sendable>: Sendable {
    /// A batch of records (as `prepare` made them), the (source, type) pairs first seen in it,
    /// and how far into the file reading had come when it was complete.
    public struct Batch: Sendable {
        public var prepared: Prepared
        public var newSourceTypes: [(source: String, type: QuantityType)]
        public var fileOffset: Int
    }

    /// How the reading ended: what it found, and the damage that stopped it (nil: the whole
    /// document was read).
    public struct Outcome: Sendable {
        public var tally: AppleHealthImportTally
        public var damage: AppleHealthImportError?
    }

    private let batches: BackgroundBatches<Batch>
    private let found: FoundTally

    /// Starts reading `source` (from `AppleHealthExportFile.open`) in batches of `batchSize`
    /// records, each handed through `prepare` on the reading thread, at most `depth` of them
    /// waiting.
    public init(source: ByteChunkSource, batchSize: Int, depth: Int = 1,
                prepare: @escaping @Sendable ([HealthRecord]) -> Prepared) {
        let found = FoundTally()
        self.found = found
        let handedSource = HandedOff(source)
        batches = BackgroundBatches(name: "ingestd-import-reader", depth: depth) { put in
            let xml = XMLPullReader(source: handedSource.value)
            let newPairs = NewPairs()
            try withoutActuallyEscaping(put) { put in
                let reader = AppleHealthExportReader(xml: xml) { records in
                    try put(Batch(prepared: prepare(records), newSourceTypes: newPairs.take(), fileOffset: xml.fileOffset))
                }
                reader.batchSize = batchSize
                newPairs.reader = reader
                defer { found.tally = reader.tally }
                try reader.run()
            }
        }
    }

    /// The next batch, waiting for it; nil once the document is read (or the reading stopped):
    /// then `waitForOutcome()` says how it ended.
    public func next() -> Batch? { batches.next() }

    /// What the reading found and how it ended; waits until the reading thread is done.
    public func waitForOutcome() -> Outcome {
        let failure = batches.waitForEnd()
        // The reading thread wrote the tally before it ended, which `waitForEnd` waited for.
        return Outcome(tally: found.tally, damage: failure as? AppleHealthImportError)
    }

    /// Stops the reading (batches not yet taken are dropped) and waits for its thread.
    public func close() { batches.close() }

    /// The tally, written by the reading thread as it ends and read after it ended.
    private final class FoundTally: @unchecked Sendable {
        var tally = AppleHealthImportTally()
    }

    /// The reader's new (source, type) pairs, taken per batch (weak: the reader holds the
    /// closure that holds this).
    private final class NewPairs {
        weak var reader: AppleHealthExportReader?
        func take() -> [(source: String, type: QuantityType)] { reader?.takeNewSourceTypes() ?? [] }
    }
}

extension BackgroundExportReader.Batch where Prepared == [HealthRecord] {
    /// The batch's records, as they were read.
    public var records: [HealthRecord] { prepared }
}

extension BackgroundExportReader where Prepared == [HealthRecord] {
    /// Starts reading `source` in batches of `batchSize` records handed over as they were read.
    public convenience init(source: ByteChunkSource, batchSize: Int, depth: Int = 1) {
        self.init(source: source, batchSize: batchSize, depth: depth) { $0 }
    }
}
