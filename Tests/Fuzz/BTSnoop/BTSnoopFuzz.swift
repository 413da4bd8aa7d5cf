import CaptureFormats
import FuzzSupport

/// libFuzzer target for `BTSnoopReader`: any bytes as a btsnoop file. Records must come out in
/// file order, inside the input; every record then goes through `HCITraceDecoder`.
func fuzzBTSnoop(_ bytes: [UInt8]) {
    guard let reader = try? BTSnoopReader(bytes: bytes) else { return }
    readCapture(reader, inputCount: bytes.count)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzBTSnoop)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzBTSnoop) }
}
#endif
