import BLEWire
import Transport

extension HCITraceDecoder {
    /// Processes one capture record, appending the events it produces to `events`.
    /// Records that are not HCI packets are counted in ``TraceStatistics/nonHCIRecords``.
    public mutating func process(_ record: CaptureRecord, into events: inout [TransportEvent]) {
        guard case .hci(let type) = record.content else {
            countNonHCIRecord()
            return
        }
        process(timestamp: record.timestamp, direction: record.direction, type: type, packet: record.bytes,
                controllerIndex: record.controllerIndex, into: &events)
    }

    /// Processes one capture record and returns the events it produces.
    public mutating func process(_ record: CaptureRecord) -> [TransportEvent] {
        var events: [TransportEvent] = []
        process(record, into: &events)
        return events
    }

    /// The events the end of the trace completes (``finish(into:)``).
    public mutating func finish() -> [TransportEvent] {
        var events: [TransportEvent] = []
        finish(into: &events)
        return events
    }
}
