import AdapterKit
import Foundation
import HealthModel

/// What every record an adapter emits must satisfy: start <= end, finite values, and a JSON
/// line (as `ingestd decode --json` prints it) that `HealthRecordDecoder` reads back to a record
/// printing the same line (what `ingestd replay` reads must be what `decode` wrote).
public func checkRecords(_ output: AdapterOutput) {
    let encoder = HealthRecordEncoder()
    let decoder = HealthRecordDecoder(defaultSource: "fuzz")
    for record in output.records {
        for sample in record.samples {
            precondition(sample.start <= sample.end, "sample ends before it starts: \(encoder.encode(sample))")
            precondition(sample.quantity.value.isFinite, "non-finite value: \(encoder.encode(sample))")
        }
        let line = encoder.encode(record)
        let decoded: HealthRecord
        do {
            decoded = try decoder.decodeLine(line)
        } catch {
            preconditionFailure("decode printed a line replay cannot read (\(error)): \(line)")
        }
        precondition(encoder.encode(decoded) == line, "line changed on a round trip: \(line)")
    }
    for rejection in output.rejections {
        precondition(!rejection.reason.isEmpty && !rejection.detail.isEmpty, "rejection without a reason: \(rejection)")
    }
}

/// A few zones with awkward offsets (DST, +13:00, half hours); `selector` picks one.
public func fuzzTimeZone(_ selector: UInt8) -> TimeZone {
    let names = ["UTC", "Europe/Berlin", "America/St_Johns", "Pacific/Kiritimati", "Australia/Lord_Howe"]
    return TimeZone(identifier: names[Int(selector) % names.count]) ?? TimeZone(secondsFromGMT: 0) ?? .current
}
