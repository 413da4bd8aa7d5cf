import FuzzSupport
import HealthModel

/// libFuzzer target for the HKUnit parser (`Unit(from:)`). A unit that parses must print a
/// canonical string that parses back to an equal unit, and convert to itself unchanged.
func fuzzUnits(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let unit = try? Unit(from: text) else { return }
    let printed = unit.unitString
    let again: Unit
    do {
        again = try Unit(from: printed)
    } catch {
        preconditionFailure("\"\(text)\" printed as \"\(printed)\", which does not parse: \(error)")
    }
    precondition(again == unit, "\"\(text)\" printed as \"\(printed)\", which parses to \(again.unitString)")
    if let same = try? unit.convert(42, to: again) {
        precondition(same == 42, "\(printed) to itself turned 42 into \(same)")
    }
    _ = unit.dimension
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzUnits)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzUnits) }
}
#endif
