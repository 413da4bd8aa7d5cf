import Foundation
import HealthModel
import Pipeline

extension HealthStore {
    /// Members of one correlation the export cursor holds at most.
    public static let maximumExportedCorrelationMembers = 10_000

    /// Walks the stored records in time order, one row at a time (a cursor: memory stays constant
    /// whatever the number of samples), and hands each to `body`: a sample, or a correlation with
    /// its members. `types` (nil: every type) selects samples by type; a correlation comes whole
    /// when any of its members is selected. `from`/`to` select records overlapping [from, to), a
    /// correlation by its own dates. `person` selects whose samples. The walk is one read
    /// transaction: one consistent snapshot.
    @discardableResult
    public func forEachRecord(types: [QuantityType]? = nil, from: Date? = nil, to: Date? = nil,
                              person: PersonScope = .everyone,
                              _ body: (HealthRecord) throws -> Void) throws -> ExportReadSummary {
        try refreshIDs()
        var summary = ExportReadSummary()
        var conditions: [String] = []
        // Selected types of which no sample belongs to a correlation (the usual case: heart rate,
        // steps) are read in the type index's order with nothing to merge: the same records in the
        // same order as the general walk, without sorting the whole selection.
        var plain = false
        if let types {
            let ids = types.compactMap { typeIDs[$0.identifier] }
            guard !ids.isEmpty else { return summary }
            let list = ids.map(String.init).joined(separator: ",")
            plain = try db.prepare("""
                SELECT 1 FROM samples INDEXED BY samples_by_correlation WHERE correlation IS NOT NULL AND type IN (\(list)) LIMIT 1
                """)
                .firstRow { _ in true } == nil
            conditions.append(plain ? "x.type IN (\(list))" : """
                (x.type IN (\(list)) OR (x.correlation IS NOT NULL AND x.correlation IN \
                (SELECT correlation FROM samples WHERE type IN (\(list)) AND correlation IS NOT NULL)))
                """)
        }
        if from != nil {
            conditions.append(plain ? "(x.end_time > ?1 OR x.start_time >= ?1)"
                                    : "(COALESCE(c.end_time, x.end_time) > ?1 OR COALESCE(c.start_time, x.start_time) >= ?1)")
        }
        if to != nil { conditions.append(plain ? "x.start_time < ?2" : "COALESCE(c.start_time, x.start_time) < ?2") }
        let personCondition = person.condition("x")
        if !personCondition.isEmpty { conditions.append(String(personCondition.dropFirst(" AND ".count))) }
        let order = plain ? "x.start_time, x.end_time, x.id"
                          : "COALESCE(c.start_time, x.start_time), COALESCE(c.end_time, x.end_time), COALESCE(x.correlation, 0), x.id"
        let sql = """
            SELECT x.id, x.uuid, x.value, x.start_time, x.end_time, s.name, x.metadata,
                   d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
                   d.local_identifier, d.udi_device_identifier, x.sync_id, x.sync_version, t.identifier,
                   x.correlation, c.uuid, c.type, c.start_time, c.end_time, cs.name, c.metadata,
                   cd.name, cd.manufacturer, cd.model, cd.hardware_version, cd.firmware_version, cd.software_version,
                   cd.local_identifier, cd.udi_device_identifier
            FROM samples x JOIN sources s ON s.id = x.source JOIN types t ON t.id = x.type
            LEFT JOIN devices d ON d.id = x.device
            LEFT JOIN correlations c ON c.id = x.correlation
            LEFT JOIN sources cs ON cs.id = c.source
            LEFT JOIN devices cd ON cd.id = c.device
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(order)
            """
        try db.execute(sql: "BEGIN")
        defer { try? db.execute(sql: "COMMIT") }
        let statement = try db.prepare(sql)
        if let from { try statement.bind(from.timeIntervalSince1970, at: 1) }
        if let to { try statement.bind(to.timeIntervalSince1970, at: 2) }

        var open: (id: Int64, correlation: Correlation)?
        func finishOpen() throws {
            if let current = open { try body(.correlation(current.correlation)) }
            open = nil
        }
        try statement.forEachRow { row in
            let identifier = row.string(at: 17) ?? ""
            guard let type = QuantityType.named(identifier), let sample = try readSample(row, type: type) else {
                summary.unknownTypes[identifier, default: 0] += 1
                return
            }
            guard !row.isNull(at: 18) else {
                try finishOpen()
                try body(.sample(sample))
                return
            }
            let correlationID = row.int64(at: 18)
            if let current = open, current.id == correlationID {
                guard current.correlation.objects.count < Self.maximumExportedCorrelationMembers else {
                    throw ExportReadError.correlationTooLarge(uuid: current.correlation.uuid,
                                                              limit: Self.maximumExportedCorrelationMembers)
                }
                open?.correlation.objects.append(sample)
                return
            }
            try finishOpen()
            guard let uuid = Self.uuid(from: row.bytes(at: 19) ?? []),
                  let correlationType = CorrelationType.named(row.string(at: 20) ?? "") else {
                summary.unknownTypes[row.string(at: 20) ?? "correlation without a type", default: 0] += 1
                try body(.sample(sample))
                return
            }
            var metadata = Metadata()
            if let json = row.string(at: 24) {
                metadata = try HealthRecordDecoder(defaultSource: "").decodeMetadata(json)
            }
            open = (correlationID, Correlation(
                uuid: uuid, type: correlationType,
                start: Date(timeIntervalSince1970: row.double(at: 21)), end: Date(timeIntervalSince1970: row.double(at: 22)),
                objects: [sample], source: row.string(at: 23) ?? sample.source,
                device: Self.readDevice(row, at: 25), metadata: metadata))
        }
        try finishOpen()
        return summary
    }
}
