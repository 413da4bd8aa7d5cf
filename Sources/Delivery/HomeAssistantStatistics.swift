import Foundation
import HealthModel
import Pipeline

/// One statistics query a transport needs answered by the store before a send (the deliverer
/// runs it on its feed and puts the buckets in `DeliveryContext.statistics`).
public struct StatisticsRequest: Sendable, Hashable {
    public var operation: StatisticsOperation
    public var type: QuantityType
    public var from: Date?
    public var to: Date?
    public var granularity: BucketGranularity?
    /// Whose samples: a person's name, or nil for every person's.
    public var person: String?

    public init(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                granularity: BucketGranularity?, person: String?) {
        self.operation = operation
        self.type = type
        self.from = from
        self.to = to
        self.granularity = granularity
        self.person = person
    }

    /// Hours are UTC hours, as Home Assistant's statistics are.
    public var zone: TimeZone { TimeZone(identifier: "UTC") ?? .current }
    public var scope: QueryScope { QueryScope(people: person.map { .named($0) } ?? .everyone) }
}

/// The hourly statistics one (owner, type) of a batch needs re-imported: from which hour on,
/// or everything (a deletion: which hour it touched is not known). Built from the batch's
/// records alone, so that the requests and the send agree.
struct HomeAssistantStatisticsPlan: Hashable {
    var owner: HomeAssistantOwner
    var type: QuantityType
    /// Whose samples the statistic counts (nil: everybody's, for the gateway's room sensors).
    var person: String?
    /// nil: every hour (cleared and imported again).
    var ranges: [DateInterval]?

    /// How far around a changed sample a measurement's hours may change: a time-weighted mean
    /// holds an instantaneous reading up to `StatisticsEngine.defaultMaxHoldGap` (the one before
    /// and the sample itself).
    static let holdMargin = StatisticsEngine.defaultMaxHoldGap
    /// Changed stretches closer than this are read in one query.
    static let mergeGap: TimeInterval = 24 * 3600

    /// The plans of `records` for a sink reading `sinkPerson` (nil: everybody).
    static func plans(_ records: [OutgoingRecord], sinkPerson: String?) -> [HomeAssistantStatisticsPlan] {
        struct Key: Hashable { var owner: HomeAssistantOwner; var type: QuantityType }
        var intervals: [Key: [DateInterval]] = [:]
        var rebuild: Set<Key> = []
        for record in records {
            guard let type = record.sample?.type ?? QuantityType.named(record.type),
                  let owner = HomeAssistantOwner.of(person: record.person, type) else { continue }
            let key = Key(owner: owner, type: type)
            guard let sample = record.sample else {
                rebuild.insert(key)
                continue
            }
            let cumulative = type.aggregationStyle.isCumulative
            let start = hourStart(cumulative ? sample.start : sample.start.addingTimeInterval(-holdMargin))
            let end = hourStart(sample.end.addingTimeInterval(cumulative ? 0 : holdMargin)).addingTimeInterval(3600)
            intervals[key, default: []].append(DateInterval(start: start, end: end))
        }
        let keys = Set(intervals.keys).union(rebuild).sorted {
            ($0.type.identifier, String(describing: $0.owner)) < ($1.type.identifier, String(describing: $1.owner))
        }
        return keys.map { key in
            let person: String? = switch key.owner {
            case .person(let name): name
            case .gateway: sinkPerson
            }
            guard !rebuild.contains(key) else { return HomeAssistantStatisticsPlan(owner: key.owner, type: key.type, person: person, ranges: nil) }
            var merged: [DateInterval] = []
            for interval in (intervals[key] ?? []).sorted(by: { $0.start < $1.start }) {
                if let last = merged.last, interval.start.timeIntervalSince(last.end) <= mergeGap {
                    merged[merged.count - 1] = DateInterval(start: last.start, end: max(last.end, interval.end))
                } else {
                    merged.append(interval)
                }
            }
            // A running sum changes from the earliest changed hour to the last hour with data.
            if key.type.aggregationStyle.isCumulative, let first = merged.first {
                merged = [DateInterval(start: first.start, end: .distantFuture)]
            }
            return HomeAssistantStatisticsPlan(owner: key.owner, type: key.type, person: person, ranges: merged)
        }
    }

    /// The whole UTC hour `date` falls in.
    static func hourStart(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
    }

    /// The store queries the plan needs: for a cumulative type the sum before its first hour and
    /// the hourly sums from there to the end of the data; for a measurement the hourly mean,
    /// minimum and maximum over each changed stretch.
    var requests: [StatisticsRequest] {
        if type.aggregationStyle.isCumulative {
            let from = ranges?.first?.start
            var requests = [StatisticsRequest(.sum, type: type, from: from, to: nil, granularity: .hour, person: person)]
            if let from { requests.append(StatisticsRequest(.sum, type: type, from: nil, to: from, granularity: nil, person: person)) }
            return requests
        }
        return (ranges.map { $0.map { Optional($0) } } ?? [nil]).flatMap { range in
            measurementOperations.map { operation in
                StatisticsRequest(operation, type: type, from: range?.start, to: range?.end, granularity: .hour, person: person)
            }
        }
    }

    var measurementOperations: [StatisticsOperation] {
        let average: StatisticsOperation = switch type.aggregationStyle {
        case .discreteTemporallyWeighted: .average(.temporal)
        case .discreteEquivalentContinuousLevel: .average(.equivalentContinuousLevel)
        default: .average(.arithmetic)
        }
        return [average, .minimum, .maximum]
    }

    /// The rows to import from the store's answers, as `recorder/import_statistics` wants them
    /// (`start` a whole UTC hour; `state` and the running `sum` in the entity's unit for a
    /// cumulative type, `mean`, `min`, `max` for a measurement). Hours without data have no row.
    func rows(_ answers: [StatisticsRequest: [StatisticsBucket]]) -> [String] {
        let entity = HomeAssistantEntity(type)
        let requests = self.requests
        if type.aggregationStyle.isCumulative {
            var running = requests.count > 1 ? (answers[requests[1]]?.first?.value ?? 0) : 0
            var rows: [String] = []
            for bucket in answers[requests[0]] ?? [] {
                guard let value = bucket.value else { continue }
                running += value
                rows.append("{\"start\":\(JSONText.quoted(Self.utc(bucket.start))),\"state\":\(JSONNumber.format(entity.displayValue(value)))"
                            + ",\"sum\":\(JSONNumber.format(entity.displayValue(running)))}")
            }
            return rows
        }
        var rows: [String] = []
        for group in stride(from: 0, to: requests.count, by: 3) {
            let means = answers[requests[group]] ?? []
            let minima = answers[requests[group + 1]] ?? []
            let maxima = answers[requests[group + 2]] ?? []
            for (index, bucket) in means.enumerated() {
                guard let mean = bucket.value, index < minima.count, index < maxima.count,
                      let low = minima[index].value, let high = maxima[index].value else { continue }
                rows.append("{\"start\":\(JSONText.quoted(Self.utc(bucket.start))),\"mean\":\(JSONNumber.format(entity.displayValue(mean)))"
                            + ",\"min\":\(JSONNumber.format(entity.displayValue(low))),\"max\":\(JSONNumber.format(entity.displayValue(high)))}")
            }
        }
        return rows
    }

    static func utc(_ date: Date) -> String {
        HomeAssistantDiscovery.localTime(date, zone: TimeZone(identifier: "UTC") ?? .current)
    }
}

/// Home Assistant's external statistic ids for ingestd: `ingestd:<gateway>_<person>_<type>`
/// (`ingestd:<gateway>_<type>` for the gateway's room sensors), each part lower-case letters,
/// digits and single `_` as Home Assistant requires (`^[a-z0-9_]+:[a-z0-9_]+$`, no `__`, no `_`
/// at either end); the type in snake case (`step_count`).
public enum HomeAssistantStatisticID {
    /// The source every id starts with (Home Assistant requires the source to equal it).
    public static let source = "ingestd"

    public static func id(gateway: String, owner: HomeAssistantOwner, type: QuantityType) -> String {
        var parts = [part(gateway)]
        if case .person(let person) = owner { parts.append(part(person)) }
        parts.append(part(snakeCase(type.shortName)))
        return source + ":" + parts.joined(separator: "_")
    }

    /// `stepCount` → `step_count`.
    public static func snakeCase(_ shortName: String) -> String {
        var result = ""
        for character in shortName {
            if character.isUppercase, !result.isEmpty { result += "_" }
            result += character.lowercased()
        }
        return result
    }

    /// `text` as one part of an id: lower-case ASCII letters and digits, every other run of
    /// characters one `_`, none at the ends; `x` when nothing is left.
    static func part(_ text: String) -> String {
        var result = ""
        for scalar in text.lowercased().unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else if !result.isEmpty, result.last != "_" {
                result += "_"
            }
        }
        while result.last == "_" { result.removeLast() }
        return result.isEmpty ? "x" : result
    }
}

/// Imports a sink's history into Home Assistant's long-term statistics through its WebSocket API
/// (`recorder/import_statistics`, external statistics `ingestd:<gateway>_<person>_<type>`): per
/// batch, only the hours its samples changed, recomputed from the store (`ingestd stats --by
/// hour`'s numbers), so a re-import gives the same statistics and a late sample re-imports its
/// hour (for a running sum, its hour and every later one). A deletion clears the statistic and
/// imports it whole. One connection per batch, authenticated with the long-lived access token
/// (`--token`; never printed, logged or put in an argument).
final class HomeAssistantStatisticsTransport: SinkTransport {
    /// Seconds to wait for the handshake and for each answer.
    static let answerTimeout = 30.0
    /// Rows per `recorder/import_statistics` message (Home Assistant takes messages up to 4 MiB).
    static let rowsPerMessage = 2000

    private let configuration: SinkConfiguration
    private let options: HomeAssistantStatisticsSinkOptions
    private let secrets: SecretResolver

    init(_ configuration: SinkConfiguration, options: HomeAssistantStatisticsSinkOptions, secrets: SecretResolver) {
        self.configuration = configuration
        self.options = options
        self.secrets = secrets
    }

    var wantsDailyTotals: Bool { false }

    private var target: String { "Home Assistant \(configuration.target.host):\(configuration.target.port)" }

    func statisticsRequests(for records: [OutgoingRecord]) -> Set<StatisticsRequest> {
        Set(HomeAssistantStatisticsPlan.plans(records, sinkPerson: configuration.person).flatMap(\.requests))
    }

    func send(_ records: [OutgoingRecord], context: DeliveryContext) throws(SinkDeliveryError) -> SendResult {
        let plans = HomeAssistantStatisticsPlan.plans(records, sinkPerson: configuration.person)
        guard !plans.isEmpty else { return .accepted }
        let client = try connected()
        defer { client.close() }
        var id = 0
        for plan in plans {
            let statisticID = HomeAssistantStatisticID.id(gateway: options.gatewayID, owner: plan.owner, type: plan.type)
            if plan.ranges == nil {
                id += 1
                try request(client, id: id, "{\"id\":\(id),\"type\":\"recorder/clear_statistics\",\"statistic_ids\":[\(JSONText.quoted(statisticID))]}")
            }
            let rows = plan.rows(context.statistics)
            for chunk in stride(from: 0, to: rows.count, by: Self.rowsPerMessage) {
                id += 1
                let part = rows[chunk..<min(rows.count, chunk + Self.rowsPerMessage)]
                try request(client, id: id, "{\"id\":\(id),\"type\":\"recorder/import_statistics\",\"metadata\":\(metadata(plan, statisticID)),"
                                           + "\"stats\":[" + part.joined(separator: ",") + "]}")
            }
        }
        return .accepted
    }

    private func metadata(_ plan: HomeAssistantStatisticsPlan, _ statisticID: String) -> String {
        let entity = HomeAssistantEntity(plan.type)
        var name = entity.name
        if name.hasSuffix(" today") { name.removeLast(" today".count) }
        let owner = switch plan.owner {
        case .person(let person): person
        case .gateway: "ingestd \(options.gatewayID)"
        }
        let cumulative = plan.type.aggregationStyle.isCumulative
        return "{\"has_mean\":\(!cumulative),\"has_sum\":\(cumulative),\"name\":\(JSONText.quoted("\(owner) \(name)")),"
            + "\"source\":\"\(HomeAssistantStatisticID.source)\",\"statistic_id\":\(JSONText.quoted(statisticID)),"
            + "\"unit_of_measurement\":" + (entity.unit.map(JSONText.quoted) ?? "null") + "}"
    }

    /// Connects and authenticates (`auth_required`, `auth` with the token, `auth_ok`).
    private func connected() throws(SinkDeliveryError) -> WebSocketClient {
        guard let reference = options.token else {
            throw .misconfigured(target: target, reason: "no access token", fix: "add the sink again with --token @/path (a long-lived access token of an administrator)")
        }
        let token: String
        do { token = try secrets.resolve(reference) } catch { throw .configuration(error) }
        let url = configuration.target
        let path = URLComponents(string: url.urlWithoutCredentials).map(\.path).flatMap { $0.isEmpty || $0 == "/" ? nil : $0 } ?? "/api/websocket"
        let client = try WebSocketClient(host: url.host, port: url.port, path: path, useTLS: url.usesTLS,
                                         caFile: options.caFile, target: target, timeout: Self.answerTimeout)
        do {
            let hello = try message(client)
            guard hello["type"] as? String == "auth_required" else {
                throw SinkDeliveryError.misconfigured(target: target, reason: "not Home Assistant's WebSocket API (it said \(hello["type"] ?? "nothing"))",
                                                      fix: "give ws://HOST:8123 or the proxy's wss:// URL of Home Assistant")
            }
            try client.send("{\"type\":\"auth\",\"access_token\":\(JSONText.quoted(token))}", timeout: Self.answerTimeout)
            let answer = try message(client)
            guard answer["type"] as? String == "auth_ok" else {
                throw SinkDeliveryError.misconfigured(target: target, reason: "the access token was refused (\(answer["message"] ?? answer["type"] ?? "no answer"))",
                                                      fix: "make a long-lived access token on your Home Assistant profile page and give it with --token @/path")
            }
        } catch let error as SinkDeliveryError {
            client.close()
            throw error
        } catch {
            client.close()
            throw .unreachable(target: target, reason: String(describing: error))
        }
        return client
    }

    /// Sends one command and waits for its result; a refusal is a configuration error (retried,
    /// never dead-lettered: what Home Assistant refuses is the sink's ids or token, not a sample).
    private func request(_ client: WebSocketClient, id: Int, _ text: String) throws(SinkDeliveryError) {
        try client.send(text, timeout: Self.answerTimeout)
        while true {
            let answer = try message(client)
            guard answer["id"] as? Int == id, answer["type"] as? String == "result" else { continue }
            if answer["success"] as? Bool == true { return }
            let error = answer["error"] as? [String: Any]
            let code = error?["code"] as? String ?? "error"
            let reason = "Home Assistant refused the import: \(code): \(error?["message"] as? String ?? "")"
            throw .misconfigured(target: target, reason: reason,
                                 fix: code == "unauthorized" ? "the token must be an administrator's" : "check the sink's --gateway-id and Home Assistant's log")
        }
    }

    private func message(_ client: WebSocketClient) throws(SinkDeliveryError) -> [String: Any] {
        let text = try client.receive(timeout: Self.answerTimeout)
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw .unreachable(target: target, reason: "an answer that is not a JSON object: \(text.prefix(200))")
        }
        return object
    }

    func idle(milliseconds: Int) {}
    func close() {}
}
