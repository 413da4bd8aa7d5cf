import ArgumentParsing
import Foundation

/// `--tz ZONE`: the IANA time zone for dates and buckets.
struct TimeZoneOption: OptionGroup {
    static var arguments: [ArgumentElement] {
        [Option("tz", valueName: "ZONE", help: "IANA time zone for dates and buckets (default: the system zone).").element]
    }

    /// The zone named by `--tz`, or the system zone.
    let zone: TimeZone
    /// The name given with `--tz`; nil when the system zone is used.
    let name: String?

    init(_ values: ParsedValues) throws {
        name = try values.value("tz")
        zone = try CommonArguments.timeZone(name)
    }
}

/// `--from T --to T --tz ZONE`: a time range whose plain dates are read in the zone.
struct TimeRangeOptions: OptionGroup {
    static var arguments: [ArgumentElement] {
        [
            Option("from", valueName: "T",
                   help: "Start, inclusive: ISO 8601 date-time with offset, or YYYY-MM-DD (start of that day in --tz).").element,
            Option("to", valueName: "T",
                   help: "End, exclusive: ISO 8601 date-time with offset, or YYYY-MM-DD (start of that day in --tz).").element,
        ] + TimeZoneOption.arguments
    }

    let from: Date?
    let to: Date?
    /// The zone of `--tz` (or the system zone), in which plain dates were read.
    let zone: TimeZone

    init(_ values: ParsedValues) throws {
        zone = try TimeZoneOption(values).zone
        from = try CommonArguments.date(try values.value("from"), option: "--from", zone: zone)
        to = try CommonArguments.date(try values.value("to"), option: "--to", zone: zone)
    }
}

/// `--unit U`: the HKUnit values are printed (or given) in.
struct UnitOption: OptionGroup {
    static var arguments: [ArgumentElement] {
        [Option("unit", valueName: "U", help: "Print values in this HKUnit (default: the type's canonical unit).").element]
    }

    /// The unit text as given; checked against the quantity type by the command.
    let text: String?

    init(_ values: ParsedValues) throws {
        text = try values.value("unit")
    }
}
