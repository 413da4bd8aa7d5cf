import CaptureFormats
import FuzzSupport

/// libFuzzer target for `PcapReader`: any bytes as a classic pcap file. Records must come out in
/// file order, inside the input; every record then goes through `HCITraceDecoder`.
func fuzzPcap(_ bytes: [UInt8]) {
    guard let reader = try? PcapReader(bytes: bytes) else { return }
    readCapture(reader, inputCount: bytes.count)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzPcap)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzPcap) }
}
#endif
