import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `--tz ZONE`: the IANA time zone for dates and buckets.
struct TimeZoneOption: OptionGroup {
    static let tz = TypedOption<String>(Option(
        "tz", valueName: "ZONE", help: "IANA time zone for dates and buckets (default: the system zone)."))

    static var arguments: [ArgumentElement] { [tz.element] }

    /// The zone named by `--tz`, or the system zone.
    let zone: TimeZone
    /// The name given with `--tz`; nil when the system zone is used.
    let name: String?

    init(_ values: ParsedValues) throws {
        name = try values.value(Self.tz)
        zone = try CommonArguments.timeZone(name)
    }
}

/// `--from T --to T --tz ZONE`: a time range whose plain dates are read in the zone.
struct TimeRangeOptions: OptionGroup {
    static let fromOption = TypedOption<String>(Option(
        "from", valueName: "T",
        help: "Start, inclusive: ISO 8601 date-time with offset, or YYYY-MM-DD (start of that day in --tz)."))
    static let toOption = TypedOption<String>(Option(
        "to", valueName: "T",
        help: "End, exclusive: ISO 8601 date-time with offset, or YYYY-MM-DD (start of that day in --tz)."))

    static var arguments: [ArgumentElement] { [fromOption.element, toOption.element] + TimeZoneOption.arguments }

    let from: Date?
    let to: Date?
    /// The zone of `--tz` (or the system zone), in which plain dates were read.
    let zone: TimeZone
    /// The name given with `--tz`; nil when the system zone is used.
    let zoneName: String?

    init(_ values: ParsedValues) throws {
        let zoneOption = try TimeZoneOption(values)
        zone = zoneOption.zone
        zoneName = zoneOption.name
        from = try CommonArguments.date(try values.value(Self.fromOption), option: Self.fromOption.spelling, zone: zone)
        to = try CommonArguments.date(try values.value(Self.toOption), option: Self.toOption.spelling, zone: zone)
    }
}

/// `--unit U`: the HKUnit values are printed (or given) in.
struct UnitOption: OptionGroup {
    static let unit = TypedOption<String>(Option(
        "unit", valueName: "U", help: "Print values in this HKUnit (default: the type's canonical unit)."))

    static var arguments: [ArgumentElement] { [unit.element] }

    /// The unit text as given; checked against the quantity type by the command.
    let text: String?

    init(_ values: ParsedValues) throws {
        text = try values.value(Self.unit)
    }
}

/// `--units metric|us`: the measurement system of text output (kg or lb, km or mi, °C or °F,
/// mmol/L or mg/dL). Without it on the command line, a query for one person follows the person's
/// own (`people set P --units`), else the configuration's `units`, else metric. JSON output keeps
/// the stored units.
struct UnitSystemOption: OptionGroup {
    static let units = TypedOption<String>(Option(
        "units", help: "Measurement system of text output (default: the person's, 'people set P --units', else the configuration's, else metric).",
        allowedValues: UnitSystem.allCases.map(\.rawValue)))

    static var arguments: [ArgumentElement] { [units.element] }

    /// The command line's system, else the configuration's, else metric.
    let system: UnitSystem
    /// Whether `--units` was given on the command line (it then wins over the person's).
    let isGiven: Bool

    init(_ values: ParsedValues) throws {
        let text = try values.value(Self.units)
        system = text.flatMap(UnitSystem.init(rawValue:)) ?? .metric
        isGiven = values.isPresent(Self.units)
    }

    /// The system for a query in `scope`: `--units` when given, else the person's own when the
    /// scope is one person who set one, else the configuration's (or metric).
    func system(for scope: QueryScope, in store: any QueryStore) throws -> UnitSystem {
        guard !isGiven else { return system }
        return try store.queryUnitSystem(for: scope) ?? system
    }
}

/// Times as printed: ISO 8601 with the offset of a zone (`2026-11-30T08:15:00+01:00`).
struct PrintedTime {
    let zone: TimeZone

    /// The zone of `--tz` when given, else the machine's zone for text and UTC for JSON.
    static func zone(named zoneName: String?, zone: TimeZone, json: Bool) -> TimeZone {
        zoneName == nil && json ? (TimeZone(identifier: "UTC") ?? zone) : zone
    }

    init(zone: TimeZone) {
        self.zone = zone
    }

    /// `date` on the wall clock of `zone` with its offset (`Z` for UTC), seconds with the
    /// fraction they have (none for whole seconds): `2026-05-28T22:26:40.5+02:00`.
    func string(_ date: Date) -> String {
        var text = ""
        ISO8601DateTime.append(date, in: zone, to: &text)
        return text
    }
}
