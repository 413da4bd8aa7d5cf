import Foundation
import FuzzSupport
import HealthModel

/// libFuzzer target for `HealthRecordDecoder` (ingestd's JSON lines, untrusted input to
/// `ingestd replay` and external adapters). Each line of the input is decoded; a record that
/// decodes must print (`HealthRecordEncoder`) a line that decodes to a record printing the same.
func fuzzHealthRecords(_ bytes: [UInt8]) {
    let decoder = HealthRecordDecoder(defaultSource: "fuzz")
    let encoder = HealthRecordEncoder()
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        guard let record = try? decoder.decodeLine(Data(line)) else { continue }
        let printed = encoder.encode(record)
        let again: HealthRecord
        do {
            again = try decoder.decodeLine(printed)
        } catch {
            preconditionFailure("printed record does not decode (\(error)): \(printed)")
        }
        precondition(encoder.encode(again) == printed, "record changed on a round trip: \(printed)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzHealthRecords)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzHealthRecords) }
}
#endif
