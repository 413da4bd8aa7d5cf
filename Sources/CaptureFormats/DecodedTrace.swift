import BLEWire
import Transport

/// Everything one capture file yields: its transport events and what was counted on the way.
/// Holds all events in memory; for large files feed ``HCITraceDecoder`` record by record instead.
public struct DecodedTrace: Sendable {
    /// The events in capture order.
    public var events: [TransportEvent]
    /// The decoder's counters.
    public var statistics: TraceStatistics
    /// The reader's warnings (e.g. a truncated final record).
    public var warnings: [CaptureWarning]
    /// Records the reader passed over, by reason.
    public var skipped: [CaptureSkipReason: Int]

    /// Reads every record of `reader` through a fresh ``HCITraceDecoder``.
    public init(reading reader: any CaptureReader) throws(CaptureError) {
        var decoder = HCITraceDecoder()
        var events: [TransportEvent] = []
        while let record = try reader.next() {
            decoder.process(record, into: &events)
        }
        decoder.finish(into: &events)
        self.events = events
        self.statistics = decoder.statistics
        self.warnings = reader.warnings
        self.skipped = reader.skipped
    }

    /// Opens a capture file (any supported format) and decodes it.
    public init(path: String) throws(CaptureError) {
        try self.init(reading: CaptureFile.open(path: path))
    }
}
