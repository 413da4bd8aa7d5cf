import Foundation
import HealthModel

/// The export formats of `ingestd export`.
public enum ExportFormat: String, Sendable, CaseIterable {
    /// A FHIR R4 transaction Bundle of Observations (`FHIRBundleWriter`).
    case fhir
    /// Comma-separated values (`CSVLongWriter` or `OpenScaleCSVWriter`).
    case csv
    /// ingestd's JSON lines, one record per line (`JSONLinesWriter`).
    case jsonl
}

/// A streaming writer of one export format: a header, one call per record, a footer.
///
/// Each call appends text to `output`; the caller drains `output` to its destination whenever it
/// likes, so nothing but the writer's own bounded state stays in memory between records.
public protocol ExportWriter {
    /// Appends what comes before the first record (a CSV header, the Bundle's opening).
    mutating func writeHeader(to output: inout String)
    /// Appends one record (a sample or a correlation), or counts it as skipped.
    mutating func write(_ record: HealthRecord, to output: inout String)
    /// Appends what comes after the last record (held rows, the Bundle's closing).
    mutating func writeFooter(to output: inout String)
    /// What was written and what was skipped so far.
    var summary: ExportSummary { get }
}

/// The counts of an export: records written, samples skipped per type identifier and why.
public struct ExportSummary: Sendable, Equatable {
    /// Output records written (Observations, CSV rows, JSON lines).
    public var written = 0
    /// Samples left out, per type identifier (or correlation identifier), with the reason.
    public var skipped: [SkipReason: [String: Int]] = [:]

    public init() {}

    /// Why a sample was left out of an export.
    public enum SkipReason: String, Sendable, Hashable, CaseIterable {
        /// FHIR: the type has no LOINC code in `FHIRObservationCodes` (none is invented).
        case noLOINCCode = "no LOINC code"
        /// openScale: the type has no openScale column.
        case noOpenScaleColumn = "no openScale column"
        /// openScale: a reading without a body weight (openScale requires one per row).
        case noWeightInReading = "reading without a weight"
        /// A value that is not a finite number in the export's unit.
        case notANumber = "value not a finite number"
    }

    mutating func skip(_ identifier: String, because reason: SkipReason, count: Int = 1) {
        skipped[reason, default: [:]][identifier, default: 0] += count
    }

    /// The total of skipped samples.
    public var skippedCount: Int { skipped.values.reduce(0) { $0 + $1.values.reduce(0, +) } }

    /// One line per reason, e.g. `skipped 3 samples (no LOINC code): HKQuantityTypeIdentifierFlightsClimbed 3`.
    public var skippedLines: [String] {
        SkipReason.allCases.compactMap { reason in
            guard let counts = skipped[reason], !counts.isEmpty else { return nil }
            let total = counts.values.reduce(0, +)
            let list = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "skipped \(total) sample\(total == 1 ? "" : "s") (\(reason.rawValue)): \(list)"
        }
    }
}

/// ingestd's own JSON lines (DESIGN.md "Command line"): every record, values in canonical units.
public struct JSONLinesWriter: ExportWriter {
    private let encoder = HealthRecordEncoder()
    public private(set) var summary = ExportSummary()

    public init() {}

    public mutating func writeHeader(to output: inout String) {}

    public mutating func write(_ record: HealthRecord, to output: inout String) {
        encoder.append(record, to: &output)
        output += "\n"
        summary.written += 1
    }

    public mutating func writeFooter(to output: inout String) {}
}
