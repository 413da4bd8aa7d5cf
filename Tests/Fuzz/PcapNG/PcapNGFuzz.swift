import CaptureFormats
import FuzzSupport

/// libFuzzer target for `PcapNGReader`: any bytes as a pcapng file. Records must come out in
/// file order, inside the input; every record then goes through `HCITraceDecoder`.
func fuzzPcapNG(_ bytes: [UInt8]) {
    guard let reader = try? PcapNGReader(bytes: bytes) else { return }
    readCapture(reader, inputCount: bytes.count)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzPcapNG)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzPcapNG) }
}
#endif
