import Foundation
import HealthModel

/// One CSV cell: a number written as it is, or text, which a spreadsheet must never take for
/// a formula.
enum CSVCell: ExpressibleByStringLiteral {
    /// A number ingestd formatted itself (`-3.5` stays a number).
    case number(String)
    /// Anything else: names, sources, devices, units, times.
    case text(String)

    init(stringLiteral value: String) { self = .text(value) }
}

/// RFC 4180 fields: a field with a comma, a quote, CR or LF is quoted, quotes doubled. A text
/// cell that a spreadsheet would run as a formula (OWASP's CSV injection list: it starts with
/// `=`, `+`, `-`, `@`, a tab or a CR) is neutralised as OWASP recommends: prefixed with a
/// single quote and quoted, so it is read as text (`'=HYPERLINK(…)`).
enum CSVField {
    /// The first characters that make a spreadsheet evaluate a cell.
    static let formulaStarts: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]

    static func append(_ cell: CSVCell, to text: inout String) {
        switch cell {
        case .number(let number):
            appendQuotedIfNeeded(number, to: &text)
        case .text(let field):
            // "\r\n" is one Character in Swift: look at the first scalar.
            if let first = field.unicodeScalars.first, formulaStarts.contains(Character(first)) {
                text += "\"'" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            } else {
                appendQuotedIfNeeded(field, to: &text)
            }
        }
    }

    private static func appendQuotedIfNeeded(_ field: String, to text: inout String) {
        if field.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) {
            text += "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        } else {
            text += field
        }
    }

    static func appendRow(_ fields: [CSVCell], to text: inout String) {
        for (position, field) in fields.enumerated() {
            if position > 0 { text += "," }
            append(field, to: &text)
        }
        text += "\r\n"
    }

    static func appendHeader(_ columns: [String], to text: inout String) {
        appendRow(columns.map(CSVCell.text), to: &text)
    }
}

/// The long CSV layout: one row per sample, values in the type's canonical unit; the members of
/// a correlation are rows of their own that name the correlation's type and uuid. Times are UTC,
/// or ISO 8601 with the offset of `timeZone` when one is given (`export --tz`).
public struct CSVLongWriter: ExportWriter {
    /// The header row's column names, in order.
    public static let columns = [
        "uuid", "type", "value", "unit", "start", "end", "source",
        "device_name", "device_manufacturer", "device_model", "device_local_identifier",
        "correlation_type", "correlation_uuid",
    ]

    public private(set) var summary = ExportSummary()
    /// The zone times are printed in, to the whole second with its offset; nil for UTC with the
    /// fraction of the second.
    private let timeZone: TimeZone?

    /// A writer printing times in UTC, or in `timeZone` with its offset.
    public init(timeZone: TimeZone? = nil) {
        self.timeZone = timeZone
    }

    private func time(_ date: Date) -> String {
        guard let timeZone else { return ISO8601DateTime.string(from: date) }
        return ISO8601DateTime.string(from: date, wholeSecondsIn: timeZone)
    }

    public mutating func writeHeader(to output: inout String) {
        CSVField.appendHeader(Self.columns, to: &output)
    }

    public mutating func write(_ record: HealthRecord, to output: inout String) {
        switch record {
        case .sample(let sample):
            write(sample, correlation: nil, to: &output)
        case .correlation(let correlation):
            for member in correlation.objects { write(member, correlation: correlation, to: &output) }
        }
    }

    public mutating func writeFooter(to output: inout String) {}

    private mutating func write(_ sample: QuantitySample, correlation: Correlation?, to output: inout String) {
        let device = sample.device ?? correlation?.device
        CSVField.appendRow([
            .text(UUIDText.string(sample.uuid)), .text(sample.type.identifier), .number(JSONNumber.format(sample.quantity.value)),
            .text(sample.quantity.unit.unitString), .text(time(sample.start)),
            .text(time(sample.end)), .text(sample.source),
            .text(device?.name ?? ""), .text(device?.manufacturer ?? ""), .text(device?.model ?? ""),
            .text(device?.localIdentifier ?? ""),
            .text(correlation?.type.identifier ?? ""), .text(correlation.map { UUIDText.string($0.uuid) } ?? ""),
        ], to: &output)
        summary.written += 1
    }
}

/// openScale's CSV import layout for body measurements: one row per weighing (the samples of one
/// source that share a start time), columns named as openScale's own CSV export names them
/// (`dateTime` as `dd.MM.yyyy HH:mm` in the chosen zone, `weight` kg, `fat` %, `lbm` kg,
/// `waist` cm, `comment`). openScale needs a weight in every row: a reading without one is
/// skipped and counted, as are types without an openScale column.
public struct OpenScaleCSVWriter: ExportWriter {
    /// The header row's column names, in order.
    public static let columns = ["dateTime", "weight", "fat", "water", "muscle", "lbm", "bone", "visceralFat", "waist", "comment"]
    /// Readings held at one start time at most (one per source); more are written early.
    static let maximumOpenReadings = 64

    private struct Reading {
        var start: Date
        var source: String
        var values: [String: Double] = [:]
        var types: [String: String] = [:]
    }

    /// Column → (type, HKUnit to write in, factor).
    private static let columnsByType: [String: (column: String, unit: HealthModel.Unit, factor: Double)] = {
        func unit(_ text: String) -> HealthModel.Unit { (try? HealthModel.Unit(from: text)) ?? .count }
        return [
            QuantityType.bodyMass.identifier: ("weight", unit("kg"), 1),
            QuantityType.bodyFatPercentage.identifier: ("fat", unit("%"), 100),
            QuantityType.leanBodyMass.identifier: ("lbm", unit("kg"), 1),
            QuantityType.waistCircumference.identifier: ("waist", unit("cm"), 1),
            QuantityType.bodyWaterPercentage.identifier: ("water", unit("%"), 100),
            // Kilograms here; openScale's muscle is a percentage of the reading's weight (`flush`).
            QuantityType.skeletalMuscleMass.identifier: ("muscle", unit("kg"), 1),
            QuantityType.boneMass.identifier: ("bone", unit("kg"), 1),
            QuantityType.visceralFatRating.identifier: ("visceralFat", unit("count"), 1),
        ]
    }()

    public private(set) var summary = ExportSummary()
    /// The zone of the `dateTime` column's local times.
    private let timeZone: TimeZone
    private var open: [Reading] = []

    /// A writer whose `dateTime` column is local time in `timeZone`.
    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// `dd.MM.yyyy HH:mm` of `date` in `zone`, as a `DateFormatter` with that pattern (POSIX
    /// locale, Gregorian calendar) writes it, for years 1583 to 9999 (before, the proleptic
    /// Gregorian calendar, where Foundation's is the Julian one).
    static func dateTime(_ date: Date, in zone: TimeZone) -> String {
        let time = WallClockTime(date, in: zone)
        return ASCIIBuffer.text(capacity: 16) { out in
            out.put(time.day, digits: 2); out.put("."); out.put(time.month, digits: 2); out.put(".")
            out.put(time.year, digits: 4); out.put(" ")
            out.put(time.hour, digits: 2); out.put(":"); out.put(time.minute, digits: 2)
        }
    }

    public mutating func writeHeader(to output: inout String) {
        CSVField.appendHeader(Self.columns, to: &output)
    }

    public mutating func write(_ record: HealthRecord, to output: inout String) {
        for sample in record.samples { add(sample, to: &output) }
    }

    public mutating func writeFooter(to output: inout String) {
        flush(to: &output)
    }

    private mutating func add(_ sample: QuantitySample, to output: inout String) {
        guard let mapping = Self.columnsByType[sample.type.identifier] else {
            summary.skip(sample.type.identifier, because: .noOpenScaleColumn)
            return
        }
        guard let converted = try? sample.type.canonicalUnit.convert(sample.quantity.value, to: mapping.unit),
              (converted * mapping.factor).isFinite else {
            summary.skip(sample.type.identifier, because: .notANumber)
            return
        }
        // Records arrive by start time: a later start closes every open reading.
        if let first = open.first, first.start != sample.start { flush(to: &output) }
        var index = open.firstIndex { $0.source == sample.source && $0.values[mapping.column] == nil }
        if index == nil {
            if open.count >= Self.maximumOpenReadings { flush(to: &output) }
            open.append(Reading(start: sample.start, source: sample.source))
            index = open.count - 1
        }
        guard let index else { return }
        open[index].values[mapping.column] = converted * mapping.factor
        open[index].types[mapping.column] = sample.type.identifier
    }

    private mutating func flush(to output: inout String) {
        for reading in open {
            guard let weight = reading.values["weight"] else {
                for type in reading.types.values { summary.skip(type, because: .noWeightInReading) }
                continue
            }
            var values = reading.values
            values["muscle"] = values["muscle"].map { $0 / weight * 100 }
            func field(_ column: String) -> CSVCell { .number(values[column].map { JSONNumber.format(Self.rounded($0)) } ?? "") }
            CSVField.appendRow([
                .text(Self.dateTime(reading.start, in: timeZone)), .number(JSONNumber.format(Self.rounded(weight))),
                field("fat"), field("water"), field("muscle"), field("lbm"), field("bone"), field("visceralFat"),
                field("waist"), .text("ingestd " + reading.source),
            ], to: &output)
            summary.written += 1
        }
        open.removeAll(keepingCapacity: true)
    }

    /// openScale keeps floats: two decimals are what it shows and stores meaningfully.
    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
