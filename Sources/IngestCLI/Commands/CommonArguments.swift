import ArgumentParsing
import Foundation
import HealthModel

/// Conversions of command-line text shared by the commands and their option groups (`Options/`):
/// time zones, dates, USB ids, adapter settings, source ids, quantity types, output units; and
/// why a file cannot be opened (`StoreOption` opens the store with clear errors).
enum CommonArguments {
    /// `--batch-size` of replay, import and sinks: records held in memory at once (replay
    /// reserves room for them up front), so the value is bounded.
    static let batchSizes = 1...100_000

    /// Why the user may not open `path` (or create it in its directory), in `strerror` words,
    /// e.g. "permission denied"; nil when access(2) sees no problem.
    static func accessProblem(_ path: String, write: Bool) -> String? {
        let exists = FileManager.default.fileExists(atPath: path)
        let target = exists ? path : ((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent)
        let wanted = exists ? (write ? R_OK | W_OK : R_OK) : W_OK | X_OK
        guard access(target, wanted) != 0 else { return nil }
        let reason = String(cString: strerror(errno))
        return (reason.prefix(1).lowercased() + reason.dropFirst()) + (exists ? "" : " (in \(target))")
    }

    /// `VID:PID` in hex, e.g. `0590:0028`.
    static func usbIDs(_ text: String?) throws -> (UInt16, UInt16)? {
        guard let text else { return nil }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) else {
            throw UsageError.invalidValue(text, argument: "--usb", reason: "expected VID:PID in hex, e.g. 0590:0028")
        }
        return (vendor, product)
    }

    /// `KEY=VALUE` pairs of `--adapter-option`.
    static func adapterOptions(_ pairs: [String]) throws -> [String: String] {
        var options: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw UsageError.invalidValue(pair, argument: "--adapter-option", reason: "expected KEY=VALUE")
            }
            options[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        return options
    }

    /// The zone named by `--tz`, or the system zone.
    static func timeZone(_ name: String?) throws -> TimeZone {
        guard let name else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw UsageError.invalidValue(name, argument: "--tz", reason: "not a known IANA time zone")
        }
        return zone
    }

    /// A `T` argument: an ISO 8601 date-time with offset, or a date meaning the start of that day in `zone`.
    static func date(_ text: String?, option: String, zone: TimeZone) throws -> Date? {
        guard let text else { return nil }
        if let date = ISO8601DateTime.date(from: text) { return date }
        if let day = CalendarDate(text), let date = startOfDay(day, in: zone) { return date }
        throw UsageError.invalidValue(
            text, argument: option, reason: "expected an ISO 8601 date-time with offset or YYYY-MM-DD")
    }

    /// `--date-of-birth YYYY-MM-DD` of `profile set` and `people add`.
    static let dateOfBirthOption = TypedOption<CalendarDate>(
        Option("date-of-birth", valueName: "YYYY-MM-DD", help: "Date of birth."), expected: "a date YYYY-MM-DD") { CalendarDate($0) }
    /// `--biological-sex female|male|other` of `profile set` and `people add`.
    static let biologicalSexOption = TypedOption<BiologicalSex>(
        Option("biological-sex", valueName: "female|male|other", help: "Biological sex.", allowedValues: ["female", "male", "other", "notSet"]),
        expected: "female, male or other") { BiologicalSex(named: $0) }

    /// `--date-of-birth YYYY-MM-DD` (of `profile set` and `people add`): a date not in the future.
    static func dateOfBirth(_ arguments: ParsedValues) throws -> CalendarDate? {
        let dateOfBirth = try arguments.value(dateOfBirthOption)
        if let dateOfBirth, let date = startOfDay(dateOfBirth, in: TimeZone(identifier: "UTC") ?? .current), date > Date() {
            throw UsageError.invalidValue(dateOfBirth.description, argument: dateOfBirthOption.spelling, reason: "is in the future")
        }
        return dateOfBirth
    }

    static func startOfDay(_ day: CalendarDate, in zone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let noon = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 12))
        else { return nil }
        return calendar.startOfDay(for: noon)
    }

    /// A source id given on the command line: not empty, no control characters (NUL, newline…),
    /// which the store would keep and every listing would print garbled.
    static func sourceID(_ text: String, argument: String, allowingControlCharacters: Bool = false) throws -> String {
        guard !text.isEmpty else { throw UsageError.invalidValue(text, argument: argument, reason: "must not be empty") }
        if !allowingControlCharacters, let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw UsageError.invalidValue(
                text.debugDescription, argument: argument,
                reason: "contains the control character U+\(String(control.value, radix: 16, uppercase: true))")
        }
        return text
    }

    /// A quantity type by full identifier or short name.
    static func quantityType(_ name: String) throws -> QuantityType {
        guard let type = QuantityType.named(name) else {
            throw CommandError.unknownQuantityType(
                name: name, suggestion: EditDistance.nearest(to: name, among: QuantityType.catalogue.map(\.shortName)))
        }
        return type
    }

    /// A unit for output, compatible with `type`; aliases people type (`bpm`, `lbs`, `°C`) are
    /// accepted. An unknown or incompatible unit is a usage error (64) with a suggestion.
    static func outputUnit(_ text: String?, for type: QuantityType) throws -> HealthModel.Unit {
        guard let text else { return type.canonicalUnit }
        let unit: HealthModel.Unit
        do {
            unit = try UnitAliases.unit(typed: text)
        } catch {
            let suggestion = EditDistance.nearest(to: text, among: UnitAliases.suggestions)
            throw UsageError.invalidValue(
                text, argument: "--unit",
                reason: "not a known unit" + (suggestion.map { "; did you mean '\($0)'?" } ?? "; see 'ingestd units list'"))
        }
        guard unit.isCompatible(with: type.canonicalUnit) else {
            throw UsageError.invalidValue(
                text, argument: "--unit",
                reason: "\(type.shortName) is measured in units like \(DisplayUnits.displayUnit(for: type, system: .metric).unit.unitString)")
        }
        return unit
    }

    /// A value converted for output (compatibility was checked by `outputUnit`).
    static func convert(_ value: Double, from: HealthModel.Unit, to: HealthModel.Unit) -> Double {
        (try? from.convert(value, to: to)) ?? value
    }
}
