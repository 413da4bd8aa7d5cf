import AdapterKit
import BLEWire
import BuiltinAdapters
import CaptureFormats
import Foundation
import FuzzSupport
import Transport

/// libFuzzer target for `HCITraceDecoder`, with every event routed on through the built-in
/// adapters as `ingestd decode` does.
///
/// Input: byte 0 picks the time zone, then packets, each `type · flags · length (LE16) · bytes`;
/// type 1-5 is the H4 indicator (others are passed as they are), flags bit 0 the direction
/// (received when set), bit 1 "direction unknown", bits 2-7 the controller index, and the gap to
/// the previous packet in milliseconds is `flags` squared.
func fuzzHCITrace(_ bytes: [UInt8]) {
    var input = FuzzBytes(bytes)
    let zone = fuzzTimeZone(input.byte())
    guard let router = try? AdapterRouter(adapters: BuiltinAdapters.bluetooth, timeZone: zone) else {
        preconditionFailure("the registry cannot make a router")
    }
    var decoder = HCITraceDecoder()
    var events: [TransportEvent] = []
    var output = AdapterOutput()
    var timestamp: Int64 = 1_736_931_600_000_000
    var packets = 0
    while !input.isAtEnd {
        let type = HCIPacketType(rawValue: input.byte())
        let flags = input.byte()
        let packet = input.take(Int(input.uint16()))
        let direction: CaptureDirection? = flags & 0x02 != 0 ? nil : (flags & 0x01 != 0 ? .received : .sent)
        timestamp += Int64(flags) * Int64(flags) * 1000
        events.removeAll(keepingCapacity: true)
        decoder.process(timestamp: timestamp, direction: direction, type: type, packet: packet,
                        controllerIndex: UInt16(flags >> 2), into: &events)
        packets += 1
        for event in events { router.route(event, into: &output) }
    }
    router.finish(into: &output)
    precondition(decoder.statistics.records == packets)
    checkRecords(output)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzHCITrace)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzHCITrace) }
}
#endif
