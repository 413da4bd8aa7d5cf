import BLEWire
import CaptureFormats
import Transport

/// Reads every record of a capture (an error ends it), checks that records come in file order
/// and lie inside the input, and decodes the HCI packets.
public func readCapture(_ reader: any CaptureReader, inputCount: Int) {
    var decoder = HCITraceDecoder()
    var events: [TransportEvent] = []
    var previousOffset = -1
    var count = 0
    while true {
        let record: CaptureRecord?
        do {
            record = try reader.next()
        } catch {
            return
        }
        guard let record else { break }
        precondition(record.fileOffset > previousOffset, "records out of file order at \(record.fileOffset)")
        precondition(record.fileOffset < inputCount && record.bytes.count <= inputCount, "record beyond the input")
        previousOffset = record.fileOffset
        count += 1
        decoder.process(record, into: &events)
        events.removeAll(keepingCapacity: true)
    }
    precondition(decoder.statistics.records + decoder.statistics.nonHCIRecords == count)
}
