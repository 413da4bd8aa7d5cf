import ExternalAdapterProtocol
import ExternalAdapters
import FuzzSupport
import HealthModel

/// libFuzzer target for the external-plugin output path: bytes as a plugin's stdout, cut into
/// lines by `LineSplitter` (64 KiB limit) and each line classified by `PluginOutputValidator`.
/// Nothing may crash; an accepted record must carry the plugin's id as its source, only declared
/// types, finite values, and units that fit its types; an accepted protocol-2 request must keep
/// to the size limits.
private let validator = PluginOutputValidator(
    adapterID: "fuzz-plugin",
    produces: [QuantityType.stepCount, .heartRate, .bodyMass, .bloodPressureSystolic, .bloodPressureDiastolic],
    device: Device(name: "Fuzz", localIdentifier: "AA:BB:CC:DD:EE:FF"), protocolVersion: 2)

func fuzzPluginOutput(_ bytes: [UInt8]) {
    var splitter = LineSplitter(maximumLength: 64 * 1024)
    func check(_ piece: LineSplitter.Piece) {
        guard case .line(let line) = piece else { return }
        let result = validator.validate(line)
        if case .request(let request) = result {
            if case .write(_, let value, _) = request.operation {
                precondition(value.count <= PluginRequestCodec.maximumWriteLength, "a write of \(value.count) bytes accepted")
            }
            if case .text(let id) = request.id { precondition(!id.isEmpty && id.count <= PluginRequestCodec.maximumIDLength) }
        }
        guard case .record(let record) = result else { return }
        for sample in record.samples {
            precondition(sample.source == "fuzz-plugin", "source \(sample.source) was not forced to the plugin's id")
            precondition(validator.produces.contains(sample.type), "undeclared type \(sample.type.identifier) accepted")
            precondition(sample.quantity.value.isFinite, "non-finite value accepted")
            precondition(sample.quantity.unit.isCompatible(with: sample.type.canonicalUnit),
                         "unit \(sample.quantity.unit) accepted for \(sample.type.identifier)")
        }
    }
    splitter.append(bytes, emit: check)
    if let last = splitter.finish() { check(last) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzPluginOutput)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzPluginOutput) }
}
#endif
