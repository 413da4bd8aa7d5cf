import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd stats TYPE --sum|--average|…`: HealthKit's statistics collection query.
struct StatsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "stats", abstract: "Statistics of a type, optionally per hour, day, week or month.",
        discussion: """
            --sum is for cumulative types (steps, distance, energy): overlapping sources are merged by \
            priority ('ingestd priority'), and samples crossing a bucket edge are split in proportion to \
            time. --average, --min, --max and --latest are for discrete types; heart rate averages are \
            weighted by time. Buckets are calendar periods in --tz (a DST day has 23 or 25 hours). \
            Buckets without data are listed without a value. Text output has a header and shows \
            values in the type's display unit (--units us for lb, mi, °F, mg/dL); --unit overrides.
            """,
        examples: [
            "ingestd stats stepCount --sum --by day --from 2026-03-01 --to 2026-04-01",
            "ingestd stats bodyMass --average --by week --units us",
            "ingestd stats heartRate --average --by hour --unit bpm",
        ]
    )
    static let typeArgument = TypedPositional<String>(Positional("TYPE", help: "Quantity type: full identifier or short name."))
    static let statisticFlags = TypedFlagGroup(ExclusiveFlags("statistic", required: true, flags: [
        Flag("sum", help: "Total (cumulative types)."),
        Flag("average", help: "Mean (discrete types; time-weighted for heart rate)."),
        Flag("min", help: "Smallest value (discrete types)."),
        Flag("max", help: "Largest value (discrete types)."),
        Flag("latest", help: "Most recent value (discrete types)."),
    ]))
    static let byOption = TypedOption<String>(Option(
        "by", valueName: "hour|day|week|month", help: "Bucket size (default: one bucket over the range).",
        allowedValues: ["hour", "day", "week", "month"]))
    static let signature = Signature {
        Self.typeArgument
        Self.statisticFlags
        Self.byOption
        TimeRangeOptions.self
        UnitOption.self
        UnitSystemOption.self
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }

    let type: QuantityType
    let statistic: String
    /// The statistic asked for, fit to the type.
    let operation: StatisticsOperation
    let by: BucketGranularity?
    let from: Date?
    let to: Date?
    let zone: TimeZone
    let unit: String?
    let units: UnitSystemOption
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required(Self.typeArgument))
        statistic = arguments.choice(Self.statisticFlags) ?? "sum"
        by = try arguments.value(Self.byOption).flatMap { BucketGranularity(rawValue: $0) }
        let range = try TimeRangeOptions(arguments)
        zone = range.zone
        from = range.from
        to = range.to
        unit = try UnitOption(arguments).text
        units = try UnitSystemOption(arguments)
        json = try JSONOption(arguments).isOn
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
        guard let operation = StatisticsOperation(statistic: statistic, for: type) else {
            if type.aggregationStyle.isCumulative {
                throw UsageError.invalid("--\(statistic) is only for discrete types; \(type.shortName) is cumulative (use --sum)")
            }
            throw UsageError.invalid(
                "--\(statistic) is only for cumulative types; \(type.shortName) is \(type.aggregationStyle) (use --average, --min, --max or --latest)")
        }
        self.operation = operation
        if let from, let to, from >= to {
            throw UsageError.invalid("--from must be before --to")
        }
        if let from, let to, let by {
            // Checked before any work: even the longest buckets of this size give more than the limit.
            let atLeast = to.timeIntervalSince(from) / Self.longestBucket(by)
            if atLeast > Double(CalendarBuckets.defaultMaximumBucketCount) {
                throw UsageError.invalid(
                    "--from … --to by \(by.rawValue) makes more than \(CalendarBuckets.defaultMaximumBucketCount) buckets; narrow the range or use longer buckets")
            }
        }
    }

    /// An upper bound on one bucket's length in seconds (a day may last 25 hours at a DST change).
    static func longestBucket(_ granularity: BucketGranularity) -> TimeInterval {
        let day: TimeInterval = 26 * 3600
        switch granularity {
        case .hour: return 2 * 3600
        case .day: return day
        case .week: return 7 * day
        case .month: return 31 * day
        }
    }

    func run(_ context: CommandContext) async throws {
        let outputUnit = try CommonArguments.outputUnit(unit, for: type)
        let store = try storeFile.open(context)
        defer { store.close() }
        let buckets: [StatisticsBucket]
        let scope = try storeFile.scope(person, in: store)
        let system = try units.system(for: scope, in: store)
        do {
            buckets = try store.statistics(operation, type: type, from: from, to: to, granularity: by, zone: zone,
                                           scope: scope)
        } catch StatisticsError.tooManyBuckets(let limit) {
            throw UsageError.invalid("the range makes more than \(limit) buckets; narrow it or use longer buckets")
        }
        let lines = QueryAnswerJSON.StatisticsLines(type: type, unit: outputUnit, zone: zone)
        if json {
            buckets.map(lines.line).forEach(context.stdout.writeLine)
            return
        }
        guard buckets.contains(where: { $0.value != nil }) else {
            context.stdout.writeLine("No \(type.shortName) data" + (from != nil || to != nil ? " in this range." : " stored."))
            return
        }
        let rows = buckets.map { bucket -> [String] in
            let text = bucket.value.map {
                unit == nil
                    ? DisplayUnits.text($0, of: type, system: system)
                    : DisplayUnits.text($0, of: type, in: outputUnit, system: system)
            } ?? "-"
            return [lines.time(bucket.start), lines.time(bucket.end), text]
        }
        context.stdout.write(Table(header: ["START", "END", statistic.uppercased()], rows: rows).rendered)
    }
}
