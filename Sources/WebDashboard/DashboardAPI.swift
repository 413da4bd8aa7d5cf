import Charts
import Foundation
import HealthModel
import Pipeline

/// `/api/v1/…`: the JSON of `ingestd today`, `stats`, `samples`, `changes`, `status` and `sources`
/// (JSON lines, written by the CLI's own encoders) and the people, from the query port; every
/// parameter checked, unknown ones refused (400). Samples and changes come a page at a time (at
/// most `maximumPerRequest` each), so that an answer's size does not grow with the store.
struct DashboardAPI {
    let store: any QueryStore
    let zone: TimeZone
    let zoneName: String
    let now: Date

    /// The most samples (or changes) one answer holds, and the page size when no limit is given.
    static let maximumPerRequest = 5000

    func answer(_ endpoint: String, query: [String: String]) throws -> HTTPResponse {
        switch endpoint {
        case "people":
            try Self.allow(query, [])
            let names = try store.queryPeopleNames()
            return json("[" + names.map(JSONText.quoted).joined(separator: ",") + "]\n")
        case "today": return try today(query)
        case "stats": return try stats(query)
        case "samples": return try samples(query)
        case "changes": return try changes(query)
        case "status": return try status(query)
        case "sources": return try sources(query)
        default:
            return Dashboard.plain(404, "no API endpoint \(PrintableText.escaped(endpoint)); try today, stats, samples, changes, status, sources or people")
        }
    }

    private func json(_ text: String, lines: Bool = false) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: lines ? "application/x-ndjson" : "application/json", text: text)
    }

    static func allow(_ query: [String: String], _ names: Set<String>) throws {
        if let unknown = query.keys.sorted().first(where: { !names.contains($0) }) {
            throw DashboardError.invalidParameter(name: unknown, value: query[unknown] ?? "",
                                                  expected: names.isEmpty ? "no parameters" : "one of " + names.sorted().joined(separator: ", "))
        }
    }

    private func scope(_ query: [String: String]) throws -> QueryScope {
        let names = try store.queryPeopleNames()
        if let name = query["person"] {
            guard names.contains(name) else { throw DashboardError.unknownPerson(name, known: names) }
            return QueryScope(people: .named(name))
        }
        guard names.count == 1, let only = names.first else {
            throw DashboardError.invalidParameter(name: "person", value: "", expected: "one of " + names.joined(separator: ", "))
        }
        return QueryScope(people: .named(only))
    }

    private func zone(_ query: [String: String]) throws -> (TimeZone, String) {
        guard let name = query["tz"] else { return (zone, zoneName) }
        guard let zone = TimeZone(identifier: name) else {
            throw DashboardError.invalidParameter(name: "tz", value: name, expected: "an IANA time zone such as Europe/Berlin")
        }
        return (zone, name)
    }

    /// A `YYYY-MM-DD` day's start in `zone`, or an ISO 8601 time with offset.
    static func date(_ name: String, _ text: String, zone: TimeZone) throws -> Date {
        if let day = Self.day(text, zone: zone) { return day }
        if let date = ISO8601DateTime.date(from: text) { return date }
        throw DashboardError.invalidParameter(name: name, value: text, expected: "a date YYYY-MM-DD or an ISO 8601 time like 2026-03-01T08:00:00Z")
    }

    static func day(_ text: String, zone: TimeZone) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components),
              calendar.component(.day, from: date) == day else { return nil }
        return date
    }

    private func today(_ query: [String: String]) throws -> HTTPResponse {
        try Self.allow(query, ["person", "date", "tz"])
        let (zone, zoneName) = try zone(query)
        let scope = try scope(query)
        let sections = HealthSections(store: store, scope: scope, zone: zone)
        let today = sections.startOfDay(now)
        let start: Date
        switch query["date"]?.lowercased() {
        case nil, "today": start = today
        case "yesterday": start = sections.adding(days: -1, to: today)
        case let text?:
            guard let day = Self.day(text, zone: zone) else {
                throw DashboardError.invalidParameter(name: "date", value: text, expected: "yesterday, today or a date YYYY-MM-DD")
            }
            start = day
        }
        let end = sections.adding(days: 1, to: start)
        let line = QueryAnswerJSON.todayLine(day: ChartFormat(zone: zone).dateText(start), zoneName: zoneName,
                                             steps: try sections.sum(.stepCount, from: start, to: end),
                                             meters: try sections.sum(.distanceWalkingRunning, from: start, to: end))
        return json(line + "\n")
    }

    private func stats(_ query: [String: String]) throws -> HTTPResponse {
        try Self.allow(query, ["type", "statistic", "by", "from", "to", "unit", "person", "tz"])
        let (zone, _) = try zone(query)
        let type = try Self.quantityType(query["type"])
        let statistic = query["statistic"] ?? (type.aggregationStyle.isCumulative ? "sum" : "average")
        guard let operation = StatisticsOperation(statistic: statistic, for: type) else {
            throw DashboardError.invalidParameter(
                name: "statistic", value: statistic,
                expected: type.aggregationStyle.isCumulative ? "sum (\(type.shortName) is cumulative)" : "average, min, max or latest")
        }
        let unit = try Self.unit(query, of: type)
        var granularity: BucketGranularity?
        if let by = query["by"] {
            guard let value = BucketGranularity(rawValue: by) else {
                throw DashboardError.invalidParameter(name: "by", value: by, expected: "hour, day, week or month")
            }
            granularity = value
        }
        let from = try query["from"].map { try Self.date("from", $0, zone: zone) }
        let to = try query["to"].map { try Self.date("to", $0, zone: zone) }
        if let from, let to, from >= to { throw DashboardError.badRange("'from' must be before 'to'") }
        let buckets: [StatisticsBucket]
        do {
            buckets = try store.statistics(operation, type: type, from: from, to: to, granularity: granularity, zone: zone,
                                           scope: try scope(query))
        } catch StatisticsError.tooManyBuckets(let limit) {
            throw DashboardError.badRange("the range makes more than \(limit) buckets; narrow it or use longer buckets")
        }
        let lines = QueryAnswerJSON.StatisticsLines(type: type, unit: unit, zone: zone)
        return json(buckets.map { lines.line($0) + "\n" }.joined(), lines: true)
    }

    /// The quantity type named by the `type` parameter (required).
    static func quantityType(_ name: String?) throws -> QuantityType {
        guard let name else {
            throw DashboardError.invalidParameter(name: "type", value: "", expected: "a quantity type such as stepCount")
        }
        guard let type = QuantityType.named(name) else {
            throw DashboardError.invalidParameter(name: "type", value: name, expected: "a quantity type such as stepCount or heartRate")
        }
        return type
    }

    /// The unit of the `unit` parameter (aliases people type, such as bpm or lbs, included), which
    /// must suit `type`; the type's canonical unit when the parameter is not given.
    static func unit(_ query: [String: String], of type: QuantityType) throws -> HealthModel.Unit {
        guard let text = query["unit"] else { return type.canonicalUnit }
        guard let unit = try? UnitAliases.unit(typed: text), unit.isCompatible(with: type.canonicalUnit) else {
            throw DashboardError.invalidParameter(
                name: "unit", value: text,
                expected: "a unit of \(type.shortName) such as \(DisplayUnits.displayUnit(for: type, system: .metric).unit.unitString)")
        }
        return unit
    }

    /// A whole number from 1 to `maximumPerRequest`, or nil when the parameter is not given.
    static func count(_ name: String, _ query: [String: String]) throws -> Int? {
        guard let text = query[name] else { return nil }
        guard let count = Int(text), (1...maximumPerRequest).contains(count) else {
            throw DashboardError.invalidParameter(name: name, value: text, expected: "a whole number from 1 to \(maximumPerRequest)")
        }
        return count
    }

    /// `samples TYPE --json` with the command's options as parameters: `from`, `to` (read in `tz`),
    /// `source`, `unit`, `limit`, `latest=true` or `newest`, `person`. Without `limit` or `newest`,
    /// the first `maximumPerRequest`; when more match, the header `X-Ingestd-Truncated` says so.
    private func samples(_ query: [String: String]) throws -> HTTPResponse {
        try Self.allow(query, ["type", "from", "to", "tz", "source", "unit", "limit", "latest", "newest", "person"])
        let type = try Self.quantityType(query["type"])
        let (zone, _) = try zone(query)
        let from = try query["from"].map { try Self.date("from", $0, zone: zone) }
        let to = try query["to"].map { try Self.date("to", $0, zone: zone) }
        if let from, let to, from >= to { throw DashboardError.badRange("'from' must be before 'to'") }
        let unit = try Self.unit(query, of: type)
        var latest = false
        if let text = query["latest"] {
            guard let flag = Bool(text) else { throw DashboardError.invalidParameter(name: "latest", value: text, expected: "true or false") }
            latest = flag
        }
        let limit = try Self.count("limit", query)
        let newest = try Self.count("newest", query)
        // Without a limit, one more than the page size: it tells whether more match.
        let pageLimit = limit ?? (latest || newest != nil ? 0 : Self.maximumPerRequest + 1)
        let selection: SampleSelection
        do {
            selection = try SampleSelection(type: type, from: from, to: to, source: query["source"], limit: pageLimit,
                                            latest: latest, newest: newest)
        } catch {
            throw DashboardError.conflictingParameters(error.description)
        }
        let scope = try scope(query)
        // As `samples --json`: UTC unless `tz` is given.
        let encoder = HealthRecordEncoder(timeZone: query["tz"] == nil ? nil : zone)
        var text = ""
        var listed = 0
        var truncated = false
        try selection.forEach(in: store, scope: scope) { sample in
            guard listed < Self.maximumPerRequest else {
                truncated = true
                return
            }
            listed += 1
            let converted = query["unit"] == nil ? sample : ((try? sample.converted(to: unit)) ?? sample)
            encoder.append(converted, to: &text)
            text += "\n"
        }
        var response = json(text, lines: true)
        if truncated {
            response.headers.append(("X-Ingestd-Truncated", "more than \(Self.maximumPerRequest) samples match; narrow from and to"))
        }
        return response
    }

    /// `changes --json`: parameters `since` (an anchor `changes` printed), `type`, `person`, and
    /// `limit` (the page size, at most `maximumPerRequest`, a few more to finish an anchor); the
    /// last line is the anchor to pass as `since` for the next page.
    private func changes(_ query: [String: String]) throws -> HTTPResponse {
        try Self.allow(query, ["since", "type", "person", "limit"])
        let sinceText = query["since"] ?? "0"
        let since: ChangeAnchor
        do {
            since = try ChangeAnchor(text: sinceText)
        } catch {
            throw DashboardError.invalidParameter(name: "since", value: sinceText, expected: "an anchor 'changes' printed (\(error.reason))")
        }
        let type = try query["type"].map { try Self.quantityType($0) }
        let limit = try Self.count("limit", query) ?? Self.maximumPerRequest
        let scope = try scope(query)
        let encoder = HealthRecordEncoder()
        var text = ""
        let next: ChangeAnchor
        do {
            next = try store.changes(since: since, type: type, scope: scope, limit: limit) { entry in
                text += QueryAnswerJSON.line(entry, encoder: encoder) + "\n"
            }
        } catch ChangeAnchorError.ofAnotherStore(_, let reason) {
            throw DashboardError.invalidParameter(name: "since", value: sinceText, expected: "an anchor of this store (\(reason))")
        }
        return json(text + QueryAnswerJSON.anchorLine(next) + "\n", lines: true)
    }

    /// `status --json`: per source and type, held, unassigned, and the rejections of the last 24 hours.
    private func status(_ query: [String: String]) throws -> HTTPResponse {
        try Self.allow(query, [])
        let status = try store.status(scope: QueryScope(), rejectionsSince: now.addingTimeInterval(-86_400))
        return json(QueryAnswerJSON.statusLines(status).map { $0 + "\n" }.joined(), lines: true)
    }

    /// `sources --json`; `person` narrows the sample counts to one person's.
    private func sources(_ query: [String: String]) throws -> HTTPResponse {
        try Self.allow(query, ["person"])
        let scope = query["person"] == nil ? QueryScope() : try scope(query)
        let encoder = HealthRecordEncoder()
        return json(try store.sourcesWithHeld(scope: scope).map { QueryAnswerJSON.sourceLine($0.summary, held: $0.held, encoder: encoder) + "\n" }
            .joined(), lines: true)
    }
}
