import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd samples TYPE`: HealthKit's sample query.
struct Samples: Command {
    static let configuration = CommandConfiguration(
        name: "samples", abstract: "List stored samples of a type, oldest first.",
        discussion: "A sample is listed when its interval overlaps [--from, --to).")
    static let signature = Signature {
        Positional("TYPE", help: "Quantity type: full identifier or short name (stepCount).")
        CommonArguments.from
        CommonArguments.to
        CommonArguments.tz
        Option("source", valueName: "ID", help: "Only samples of this source.")
        CommonArguments.unit
        Option("limit", valueName: "N", help: "At most N samples (0: no limit).", default: "0")
        PersonOption.self
        CommonArguments.json
        CommonArguments.store
    }

    let person: PersonOption
    let type: QuantityType
    let from: Date?
    let to: Date?
    let source: String?
    let unit: String?
    let limit: Int
    let json: Bool
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required("type"))
        let zone = try CommonArguments.timeZone(try arguments.value("tz"))
        from = try CommonArguments.date(try arguments.value("from"), option: "--from", zone: zone)
        to = try CommonArguments.date(try arguments.value("to"), option: "--to", zone: zone)
        source = try arguments.value("source")
        unit = try arguments.value("unit")
        limit = try arguments.value("limit") ?? 0
        person = try PersonOption(arguments)
        json = arguments.flag("json")
        storePath = try arguments.value("store")
        guard limit >= 0 else { throw UsageError.invalidValue(String(limit), argument: "--limit", reason: "must not be negative") }
    }

    func run(_ context: CommandContext) async throws {
        let outputUnit = try CommonArguments.outputUnit(unit, for: type)
        let store = try CommonArguments.openStore(storePath, context: context, readOnly: true)
        defer { store.close() }
        let samples = try store.samples(type: type, from: from, to: to, source: source,
                                        person: try person.scope(in: store), limit: limit)
        let encoder = HealthRecordEncoder()
        if json {
            for sample in samples {
                let converted = (try? sample.converted(to: outputUnit)) ?? sample
                context.stdout.writeLine(encoder.encode(converted))
            }
            return
        }
        let rows = samples.map { sample -> [String] in
            let value = CommonArguments.convert(sample.quantity.value, from: type.canonicalUnit, to: outputUnit)
            return [ISO8601DateTime.string(from: sample.start), ISO8601DateTime.string(from: sample.end),
                    JSONNumber.format(value) + " " + outputUnit.unitString, sample.source,
                    sample.device?.name ?? sample.device?.localIdentifier ?? ""]
        }
        context.stdout.write(Table(header: ["START", "END", "VALUE", "SOURCE", "DEVICE"], rows: rows).rendered)
    }
}

/// `ingestd stats TYPE --sum|--average|…`: HealthKit's statistics collection query.
struct Stats: Command {
    static let configuration = CommandConfiguration(
        name: "stats", abstract: "Statistics of a type, optionally per hour, day, week or month.",
        discussion: """
            --sum is for cumulative types (steps, distance, energy): overlapping sources are merged by \
            priority ('ingestd priority'), and samples crossing a bucket edge are split in proportion to \
            time. --average, --min, --max and --latest are for discrete types; heart rate averages are \
            weighted by time. Buckets are calendar periods in --tz (a DST day has 23 or 25 hours). \
            Buckets without data are listed without a value.
            """)
    static let signature = Signature {
        Positional("TYPE", help: "Quantity type: full identifier or short name.")
        ExclusiveFlags("statistic", required: true, flags: [
            Flag("sum", help: "Total (cumulative types)."),
            Flag("average", help: "Mean (discrete types; time-weighted for heart rate)."),
            Flag("min", help: "Smallest value (discrete types)."),
            Flag("max", help: "Largest value (discrete types)."),
            Flag("latest", help: "Most recent value (discrete types)."),
        ])
        Option("by", valueName: "hour|day|week|month", help: "Bucket size (default: one bucket over the range).",
               allowedValues: ["hour", "day", "week", "month"])
        CommonArguments.from
        CommonArguments.to
        CommonArguments.tz
        CommonArguments.unit
        PersonOption.self
        CommonArguments.json
        CommonArguments.store
    }

    let person: PersonOption
    let type: QuantityType
    let statistic: String
    let by: BucketGranularity?
    let from: Date?
    let to: Date?
    let zone: TimeZone
    let unit: String?
    let json: Bool
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required("type"))
        statistic = arguments.choice("statistic") ?? "sum"
        person = try PersonOption(arguments)
        by = try arguments.value("by").flatMap { BucketGranularity(rawValue: $0) }
        zone = try CommonArguments.timeZone(try arguments.value("tz"))
        from = try CommonArguments.date(try arguments.value("from"), option: "--from", zone: zone)
        to = try CommonArguments.date(try arguments.value("to"), option: "--to", zone: zone)
        unit = try arguments.value("unit")
        json = arguments.flag("json")
        storePath = try arguments.value("store")
        if statistic == "sum", !type.aggregationStyle.isCumulative {
            throw UsageError.invalid(
                "--sum is only for cumulative types; \(type.shortName) is \(type.aggregationStyle) (use --average, --min, --max or --latest)")
        }
        if statistic != "sum", type.aggregationStyle.isCumulative {
            throw UsageError.invalid("--\(statistic) is only for discrete types; \(type.shortName) is cumulative (use --sum)")
        }
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

    var operation: StatisticsOperation {
        switch statistic {
        case "sum": .sum
        case "min": .minimum
        case "max": .maximum
        case "latest": .latest
        default:
            switch type.aggregationStyle {
            case .discreteTemporallyWeighted: .average(.temporal)
            case .discreteEquivalentContinuousLevel: .average(.equivalentContinuousLevel)
            default: .average(.arithmetic)
            }
        }
    }

    func run(_ context: CommandContext) async throws {
        let outputUnit = try CommonArguments.outputUnit(unit, for: type)
        let store = try CommonArguments.openStore(storePath, context: context, readOnly: true)
        defer { store.close() }
        let buckets: [StatisticsBucket]
        do {
            buckets = try store.statistics(operation, type: type, from: from, to: to, granularity: by, zone: zone,
                                           person: try person.scope(in: store))
        } catch StatisticsError.tooManyBuckets(let limit) {
            throw UsageError.invalid("the range makes more than \(limit) buckets; narrow it or use longer buckets")
        }
        for bucket in buckets {
            let value = bucket.value.map { CommonArguments.convert($0, from: type.canonicalUnit, to: outputUnit) }
            if json {
                var line = "{\"start\":\(JSONText.quoted(Self.localString(bucket.start, zone)))"
                line += ",\"end\":\(JSONText.quoted(Self.localString(bucket.end, zone)))"
                line += ",\"value\":" + (value.map(JSONNumber.format) ?? "null")
                line += ",\"unit\":\(JSONText.quoted(outputUnit.unitString))"
                if let interval = bucket.latestInterval {
                    line += ",\"sampleStart\":\(JSONText.quoted(Self.localString(interval.start, zone)))"
                    line += ",\"sampleEnd\":\(JSONText.quoted(Self.localString(interval.end, zone)))"
                }
                line += "}"
                context.stdout.writeLine(line)
            } else {
                let text = value.map { JSONNumber.format($0) + " " + outputUnit.unitString } ?? "-"
                context.stdout.writeLine("\(Self.localString(bucket.start, zone))  \(Self.localString(bucket.end, zone))  \(text)")
            }
        }
    }

    /// An ISO 8601 date-time in `zone` with its offset, e.g. `2026-03-29T00:00:00+01:00`.
    static func localString(_ date: Date, _ zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// `ingestd today`: the seed's two numbers, merged across sources.
struct Today: Command {
    static let configuration = CommandConfiguration(
        name: "today", abstract: "Today's steps and walking/running distance in km, merged across sources.",
        discussion: """
            Overlapping sources are not added up: where two devices recorded the same walk, the \
            higher-priority source counts ('ingestd priority stepCount SOURCE...').
            """)
    static let signature = Signature {
        Option("date", valueName: "YYYY-MM-DD", help: "Another day instead of today.")
        CommonArguments.tz
        PersonOption.self
        CommonArguments.json
        CommonArguments.store
    }

    let person: PersonOption
    let date: CalendarDate?
    let zone: TimeZone
    let zoneName: String
    let json: Bool
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        let zoneArgument: String? = try arguments.value("tz")
        zone = try CommonArguments.timeZone(zoneArgument)
        zoneName = zoneArgument ?? zone.identifier
        date = try arguments.value("date", expected: "a date YYYY-MM-DD") { CalendarDate($0) }
        person = try PersonOption(arguments)
        json = arguments.flag("json")
        storePath = try arguments.value("store")
    }

    func run(_ context: CommandContext) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let day: CalendarDate
        if let date {
            day = date
        } else {
            let parts = calendar.dateComponents([.year, .month, .day], from: Date())
            guard let today = CalendarDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) else {
                throw CommandFailure.failure("cannot tell today's date in \(zoneName)")
            }
            day = today
        }
        guard let start = CommonArguments.startOfDay(day, in: zone),
              let end = calendar.date(byAdding: .day, value: 1, to: start) else {
            throw CommandFailure.failure("cannot compute the day \(day) in \(zoneName)")
        }
        let path = storePath ?? HealthStore.defaultPath(environment: context.environment)
        var steps = 0.0
        var meters = 0.0
        if FileManager.default.fileExists(atPath: path) {
            let store = try CommonArguments.openStore(path, context: context)
            defer { store.close() }
            let scope = try person.scope(in: store)
            steps = try store.statistics(.sum, type: .stepCount, from: start, to: end, granularity: nil, zone: zone,
                                         person: scope).first?.value ?? 0
            meters = try store.statistics(.sum, type: .distanceWalkingRunning, from: start, to: end, granularity: nil,
                                          zone: zone, person: scope).first?.value ?? 0
        }
        let stepsText = JSONNumber.format(steps.rounded())
        let kilometres = (meters / 1000 * 1000).rounded() / 1000
        if json {
            context.stdout.writeLine(
                "{\"date\":\"\(day)\",\"tz\":\(JSONText.quoted(zoneName)),\"steps\":\(stepsText),\"distance_km\":\(JSONNumber.format(kilometres))}")
        } else {
            context.stdout.writeLine("\(day) (\(zoneName)): \(stepsText) steps, \(JSONNumber.format(kilometres)) km")
        }
    }
}

/// `ingestd changes`: the anchored object query.
struct Changes: Command {
    static let configuration = CommandConfiguration(
        name: "changes", abstract: "Samples added and deleted since an anchor; the last line is the new anchor.",
        discussion: """
            Each line is a sample, or {"deleted":"<uuid>","type":…} for a sample that was replaced by a \
            newer sync version. The last line is {"anchor":N}: pass N as --since next time.
            """)
    static let signature = Signature {
        Option("since", valueName: "ANCHOR", help: "Only changes after this anchor (default 0: everything).", default: "0")
        Option("type", valueName: "T", help: "Only this quantity type.")
        PersonOption.self
        CommonArguments.json
        CommonArguments.store
    }

    let person: PersonOption
    let since: Int64
    let type: QuantityType?
    let json: Bool
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        let anchor: Int = try arguments.value("since") ?? 0
        guard anchor >= 0 else { throw UsageError.invalidValue(String(anchor), argument: "--since", reason: "must not be negative") }
        since = Int64(anchor)
        type = try (try arguments.value("type") as String?).map(CommonArguments.quantityType)
        person = try PersonOption(arguments)
        json = arguments.flag("json")
        storePath = try arguments.value("store")
    }

    func run(_ context: CommandContext) async throws {
        let store = try CommonArguments.openStore(storePath, context: context, readOnly: true)
        defer { store.close() }
        let (entries, anchor) = try store.changes(since: since, type: type, person: try person.scope(in: store))
        let encoder = HealthRecordEncoder()
        for entry in entries {
            switch entry {
            case .added(let sample, _):
                context.stdout.writeLine(encoder.encode(sample))
            case .deleted(let uuid, let type, _):
                context.stdout.writeLine("{\"deleted\":\"\(uuid.uuidString.lowercased())\",\"type\":\(JSONText.quoted(type))}")
            }
        }
        context.stdout.writeLine("{\"anchor\":\(anchor)}")
    }
}

/// `ingestd watch`: follows the commit log ("records processed" notifications).
struct Watch: Command {
    static let configuration = CommandConfiguration(
        name: "watch", abstract: "Print one JSON line per commit and type as other processes write.",
        discussion: "Lines look like {\"type\":…,\"count\":N,\"source\":…,\"anchor\":N}. Stop with Ctrl-C.")
    static let signature = Signature {
        Option("since", valueName: "ANCHOR", help: "Also print commits after this anchor (default: only new ones).")
        Option("interval", valueName: "MS", help: "How often to look for commits, in milliseconds.", default: "250")
        Option("count", valueName: "N", help: "Exit after N lines (for scripts and tests).")
        PersonOption.self
        CommonArguments.store
    }

    let person: PersonOption
    let since: Int64?
    let interval: Int
    let count: Int?
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        since = try (arguments.value("since") as Int?).map(Int64.init)
        interval = try arguments.value("interval") ?? 250
        person = try PersonOption(arguments)
        count = try arguments.value("count")
        storePath = try arguments.value("store")
        if let since, since < 0 {
            throw UsageError.invalidValue(String(since), argument: "--since", reason: "must not be negative")
        }
        if let count, count < 1 {
            throw UsageError.invalidValue(String(count), argument: "--count", reason: "must be at least 1")
        }
        guard interval > 0 else { throw UsageError.invalidValue(String(interval), argument: "--interval", reason: "must be positive") }
    }

    func run(_ context: CommandContext) async throws {
        let store = try CommonArguments.openStore(storePath, context: context)
        defer { store.close() }
        var lastCommit: Int64
        if let since {
            lastCommit = try store.commitID(forAnchor: since)
        } else {
            lastCommit = try store.commitID(forAnchor: Int64.max)
        }
        var printed = 0
        let scope = try person.scope(in: store)
        while true {
            for event in try store.commitEvents(afterCommit: lastCommit, person: scope) {
                context.stdout.writeLine(
                    "{\"type\":\(JSONText.quoted(event.type)),\"count\":\(event.count),\"source\":\(JSONText.quoted(event.source)),\"anchor\":\(event.anchor)}")
                lastCommit = max(lastCommit, event.commitID)
                printed += 1
                if let count, printed >= count {
                    context.stdout.flush()
                    return
                }
            }
            context.stdout.flush()
            // `ingestd watch | head -1`: SIGPIPE is ignored, so end here once the reader is gone.
            if context.stdout.isReaderGone { return }
            try await Task.sleep(for: .milliseconds(interval))
        }
    }
}
