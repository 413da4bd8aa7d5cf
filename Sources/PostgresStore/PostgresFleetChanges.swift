import Foundation
import HealthModel
import Pipeline

/// One change in a fleet's database, in change order (by gateway id, then the gateway's anchor).
public enum FleetChange: Sendable {
    /// A sample added (or replaced) by `gateway` at its feed anchor `anchor`.
    case added(QuantitySample, gateway: String, anchor: Int64)
    /// A sample `gateway` deleted (a tombstone) at `anchor`.
    case deleted(uuid: UUID, type: String, gateway: String, anchor: Int64)
}

extension PostgresQueryStore {
    /// ` AND …` selecting the samples (alias `x`) of `people`, its parameter appended to `parameters`.
    static func personCondition(_ people: QueryScope.People, parameters: inout [String?]) -> String {
        switch people {
        case .everyone: return ""
        case .unassigned: return " AND x.person IS NULL"
        case .named(let name):
            parameters.append(name)
            return " AND x.person = $\(parameters.count)"
        }
    }

    /// The rows read per statement while streaming changes (memory stays bounded by it).
    static let changesPageSize = 5_000

    /// The fleet's anchored query: every change after `anchor` of `type` (all types when nil) in
    /// `scope`, gateway by gateway in feed order, handed to `body` as it is read (at most `limit`
    /// when above 0). Everything is read in one read-only snapshot. Returns the new anchor: every
    /// gateway in scope advanced to its position in that snapshot (with a limit that cut the
    /// stream short, the last change handed over); positions of gateways outside scope are kept.
    @discardableResult
    public func changes(since anchor: FleetAnchor, type: QuantityType?, scope: QueryScope, limit: Int = 0,
                        _ body: (FleetChange) throws -> Void) throws -> FleetAnchor {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let result = try readChanges(since: anchor, type: type, scope: scope, limit: limit, body)
            try connection.execute("COMMIT")
            return result
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private func readChanges(since anchor: FleetAnchor, type: QuantityType?, scope: QueryScope, limit: Int,
                             _ body: (FleetChange) throws -> Void) throws -> FleetAnchor {
        var gatewaySQL = "SELECT id, last_anchor FROM \(schema.table("gateways"))"
        var gatewayParameters: [String?] = []
        if let gateway = scope.gateway {
            gatewaySQL += " WHERE id = $1"
            gatewayParameters.append(gateway)
        }
        let gateways = try connection.execute(gatewaySQL + " ORDER BY id", gatewayParameters).rows.map { row -> (String, Int64) in
            guard row.count == 2, let id = row[0], let text = row[1], let last = Int64(text) else {
                throw PostgresError.unexpectedValue(column: "gateways row", value: row.map { $0 ?? "NULL" }.joined(separator: "|"))
            }
            return (id, last)
        }
        var result = anchor
        var remaining = limit > 0 ? limit : Int.max
        let decoder = HealthRecordDecoder(defaultSource: "")
        for (gateway, last) in gateways {
            var position = anchor.positions[gateway] ?? 0
            guard position < last else { continue }
            var parameters: [String?] = [gateway, nil, nil]
            // Keyset paging on (anchor, uuid): a tombstone and the sample that replaced it share an anchor.
            var sql = """
                SELECT x.anchor, x.uuid, x.type, x.deleted_at IS NOT NULL, x.record::text FROM \(schema.table("samples")) x
                WHERE x.gateway = $1 AND (x.anchor, x.uuid) > ($2::bigint, $3::uuid)
                """
            if let type {
                parameters.append(type.identifier)
                sql += " AND x.type = $\(parameters.count)"
            }
            sql += Self.personCondition(scope.people, parameters: &parameters)
            sql += " ORDER BY x.anchor, x.uuid LIMIT \(Self.changesPageSize)"
            var lastUUID = "ffffffff-ffff-ffff-ffff-ffffffffffff"
            var finished = false
            while !finished {
                parameters[1] = String(position)
                parameters[2] = lastUUID
                let rows = try connection.execute(sql, parameters).rows
                for row in rows {
                    guard row.count == 5, let anchorText = row[0], let rowAnchor = Int64(anchorText),
                          let uuidText = row[1], let uuid = UUID(uuidString: uuidText), let typeName = row[2] else {
                        throw PostgresError.unexpectedValue(column: "samples row", value: row.map { $0 ?? "NULL" }.joined(separator: "|"))
                    }
                    // A spent limit ends the stream after the last anchor handed over is complete, so
                    // the position never falls between two changes of one anchor.
                    if remaining <= 0 && rowAnchor != position {
                        result.positions[gateway] = position
                        return result
                    }
                    if row[3] == "t" {
                        try body(.deleted(uuid: uuid, type: typeName, gateway: gateway, anchor: rowAnchor))
                    } else {
                        guard let record = row[4], case .sample(let sample) = try decoder.decodeLine(record) else {
                            throw PostgresError.unexpectedValue(column: "samples.record", value: row[4] ?? "NULL")
                        }
                        try body(.added(sample, gateway: gateway, anchor: rowAnchor))
                    }
                    position = rowAnchor
                    lastUUID = uuidText
                    remaining -= 1
                }
                finished = rows.count < Self.changesPageSize
            }
            result.positions[gateway] = last
        }
        return result
    }

    /// The schema's version and, per gateway in `scope`, its deliveries and counts. A fleet's
    /// database holds no held samples (each gateway keeps its own) and no rejections.
    public func status(scope: QueryScope, rejectionsSince since: Date) throws -> StoreStatus {
        let version = try schema.currentVersion(connection)
        let filter = scope.gateway == nil ? "" : " WHERE g.id = $1"
        let parameters: [String?] = scope.gateway.map { [$0] } ?? []
        func date(_ text: String?) throws -> Date {
            guard let text, let seconds = Double(text) else { throw PostgresError.unexpectedValue(column: "time", value: text ?? "NULL") }
            return Date(timeIntervalSince1970: seconds)
        }
        func integer(_ text: String?) throws -> Int {
            guard let text, let value = Int(text) else { throw PostgresError.unexpectedValue(column: "count", value: text ?? "NULL") }
            return value
        }
        let gateways = try connection.execute("""
            SELECT g.id, date_part('epoch', g.first_delivery), date_part('epoch', g.last_delivery), g.last_anchor,
                   count(x.uuid) FILTER (WHERE x.deleted_at IS NULL), count(x.uuid) FILTER (WHERE x.deleted_at IS NOT NULL)
            FROM \(schema.table("gateways")) g LEFT JOIN \(schema.table("samples")) x ON x.gateway = g.id\(filter)
            GROUP BY g.id ORDER BY g.id
            """, parameters).rows.map { row in
            GatewayStatus(gateway: row[0] ?? "", firstDelivery: try date(row[1]), lastDelivery: try date(row[2]),
                          lastAnchor: Int64(try integer(row[3])), liveSamples: try integer(row[4]), deletedSamples: try integer(row[5]))
        }
        let sourceFilter = scope.gateway == nil ? "" : " AND x.gateway = $1"
        let sources = try connection.execute("""
            SELECT x.gateway, x.source, x.type, count(*), date_part('epoch', max(x.end_time)) FROM \(schema.table("samples")) x
            WHERE x.deleted_at IS NULL\(sourceFilter) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """, parameters).rows.map { row in
            SourceTypeStatus(gateway: row[0] ?? "", source: row[1] ?? "", type: row[2] ?? "", count: try integer(row[3]),
                             lastSampleEnd: try date(row[4]))
        }
        return StoreStatus(location: connection.target, schema: SchemaStatus(name: schema.name, version: version),
                           gateways: gateways, sourceTypes: sources)
    }
}
