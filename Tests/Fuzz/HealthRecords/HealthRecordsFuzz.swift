import Foundation
import FuzzSupport
import HealthModel

/// libFuzzer target for `HealthRecordDecoder` (ingestd's JSON lines, untrusted input to
/// `ingestd replay` and external adapters). Each line of the input is decoded both ways (the
/// one-pass path of `decodeLine` and the reference through the JSON tree), which must give the
/// same record or the same error; a record that decodes must print (`HealthRecordEncoder`) a
/// line that decodes to a record printing the same.
let fixedUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))

func fuzzHealthRecords(_ bytes: [UInt8]) {
    let decoder = HealthRecordDecoder(defaultSource: "fuzz", makeUUID: { fixedUUID })
    let encoder = HealthRecordEncoder()
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        let (fast, reference) = Array(line).withUnsafeBufferPointer { bytes in
            (Result { () throws(RecordDecodingError) in try decoder.decodeLine(bytes) },
             Result { () throws(RecordDecodingError) in try decoder.decodeLineThroughTree(bytes) })
        }
        precondition(fast == reference, "one-pass and tree decoding differ on: \(String(decoding: line, as: UTF8.self))")
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
