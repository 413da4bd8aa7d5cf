import Foundation
import HealthModel
import Pipeline

/// The changes, export and watch questions of the read port, on a fleet's database.
extension PostgresQueryStore {
    /// Rows fetched per round trip by the export cursor (memory stays bounded by it).
    static let exportPageSize = 2_000

    public func changes(since anchor: ChangeAnchor, type: QuantityType?, scope: QueryScope, limit: Int,
                        _ body: (ChangeEntry) throws -> Void) throws -> ChangeAnchor {
        let next = try changes(since: try anchor.fleet(), type: type, scope: scope, limit: limit) { change in
            switch change {
            case .added(let sample, _, let anchor): try body(.added(sample, anchor: anchor))
            case .deleted(let uuid, let type, _, let anchor): try body(.deleted(uuid: uuid, type: type, anchor: anchor))
            }
        }
        return .gateways(next)
    }

    /// The fleet's live samples overlapping `[from, to)`, in the order `samples` lists them, read
    /// through a server-side cursor in one read-only snapshot. A fleet's database keeps samples,
    /// not correlations: a blood pressure comes as its two member samples.
    public func forEachRecord(types: [QuantityType]?, from: Date?, to: Date?, scope: QueryScope,
                              _ body: (HealthRecord) throws -> Void) throws -> ExportReadSummary {
        var parameters: [String?] = []
        var conditions = ["x.deleted_at IS NULL"]
        func parameter(_ value: String) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        if let types {
            guard !types.isEmpty else { return ExportReadSummary() }
            let list = "{" + types.map { "\"\($0.identifier)\"" }.joined(separator: ",") + "}"
            conditions.append("x.type = ANY(\(parameter(list))::text[])")
        }
        if let from {
            let p = parameter(String(from.timeIntervalSince1970))
            conditions.append("(x.end_time > to_timestamp(\(p)::float8) OR x.start_time >= to_timestamp(\(p)::float8))")
        }
        if let to { conditions.append("x.start_time < to_timestamp(\(parameter(String(to.timeIntervalSince1970)))::float8)") }
        switch scope.people {
        case .everyone: break
        case .unassigned: conditions.append("x.person IS NULL")
        case .named(let name): conditions.append("x.person = \(parameter(name))")
        }
        if let gateway = scope.gateway { conditions.append("x.gateway = \(parameter(gateway))") }
        let select = """
            SELECT x.type, x.record::text FROM \(schema.table("samples")) x WHERE \(conditions.joined(separator: " AND "))
            ORDER BY x.start_time, x.end_time, x.gateway, x.anchor, x.uuid
            """
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            try connection.execute("DECLARE ingestd_export NO SCROLL CURSOR FOR " + select, parameters)
            var summary = ExportReadSummary()
            let decoder = HealthRecordDecoder(defaultSource: "")
            while true {
                let rows = try connection.execute("FETCH \(Self.exportPageSize) FROM ingestd_export").rows
                for row in rows {
                    guard row.count == 2, let identifier = row[0], let text = row[1] else {
                        throw PostgresError.unexpectedValue(column: "samples row", value: row.map { $0 ?? "NULL" }.joined(separator: "|"))
                    }
                    guard QuantityType.named(identifier) != nil,
                          case .sample(let sample) = try decoder.decodeLine(text) else {
                        summary.unknownTypes[identifier, default: 0] += 1
                        continue
                    }
                    try body(.sample(sample))
                }
                if rows.count < Self.exportPageSize { break }
            }
            try connection.execute("COMMIT")
            return summary
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Every gateway's current position (nil `anchor`), or the position given.
    public func watchStart(after anchor: ChangeAnchor?) throws -> WatchCursor {
        if let anchor { return .gateways(try anchor.fleet()) }
        var positions: [String: Int64] = [:]
        for row in try connection.execute("SELECT id, last_anchor FROM \(schema.table("gateways"))").rows {
            guard row.count == 2, let id = row[0], let text = row[1], let last = Int64(text) else { continue }
            positions[id] = last
        }
        return .gateways(FleetAnchor(positions: positions))
    }

    /// Per gateway, the samples it delivered since the cursor, one event per type and source
    /// (count and the highest anchor), gateway by gateway; the cursor moves to each gateway's
    /// position in the same snapshot. Tombstones are not commits: they are left out, as are the
    /// samples of gateways outside `scope`.
    public func watchEvents(after cursor: WatchCursor, scope: QueryScope) throws -> (events: [WatchEvent], cursor: WatchCursor) {
        guard case .gateways(let start) = cursor else {
            throw ChangeAnchorError.ofAnotherStore(text: "watch position", reason: "a store file's position, not a fleet's")
        }
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            var gatewaySQL = "SELECT id, last_anchor FROM \(schema.table("gateways"))"
            var gatewayParameters: [String?] = []
            if let gateway = scope.gateway {
                gatewaySQL += " WHERE id = $1"
                gatewayParameters.append(gateway)
            }
            var next = start
            var events: [WatchEvent] = []
            for row in try connection.execute(gatewaySQL + " ORDER BY id", gatewayParameters).rows {
                guard row.count == 2, let gateway = row[0], let text = row[1], let last = Int64(text) else { continue }
                let position = start.positions[gateway] ?? 0
                guard position < last else { continue }
                var parameters: [String?] = [gateway, String(position), String(last)]
                var sql = """
                    SELECT x.type, x.source, count(*), max(x.anchor) FROM \(schema.table("samples")) x
                    WHERE x.gateway = $1 AND x.anchor > $2::bigint AND x.anchor <= $3::bigint AND x.deleted_at IS NULL
                    """
                sql += Self.personCondition(scope.people, parameters: &parameters)
                sql += " GROUP BY 1, 2 ORDER BY max(x.anchor), 1, 2"
                for event in try connection.execute(sql, parameters).rows {
                    guard event.count == 4, let type = event[0], let source = event[1], let count = event[2].flatMap(Int.init),
                          let anchor = event[3].flatMap(Int64.init) else {
                        throw PostgresError.unexpectedValue(column: "samples row", value: event.map { $0 ?? "NULL" }.joined(separator: "|"))
                    }
                    events.append(.committed(type: type, source: source, count: count, anchor: anchor, gateway: gateway))
                }
                next.positions[gateway] = last
            }
            try connection.execute("COMMIT")
            return (events, .gateways(next))
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
