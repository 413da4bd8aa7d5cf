import Foundation
import HealthModel
import LocalPostgres
import PostgresStore
import Testing

/// The sink writer's direct path (a batch of new samples copied in binary straight into the
/// table) against its staging path (COPY text into a temporary table, upsert by uuid): the same
/// rows, the fallback when a uuid is already there, and the client's `to_timestamp`.
@Suite(.serialized, .offCooperativePool) struct PostgresDirectCopyTests {
    /// Samples with awkward values: fractional seconds at the rounding edge, before 1970, text
    /// that COPY's text format escapes, non-ASCII, several types, people and sources.
    static func awkwardChanges(anchorBase: Int64 = 0) -> [PostgresChange] {
        let starts: [Double] = [1_780_000_000, 1_780_000_000.1234565, 1_780_000_000.0000005, -86_400.25, 0.0000015,
                                951_782_400.999_999_5, 1_700_000_000.5]
        var changes: [PostgresChange] = []
        for (index, start) in starts.enumerated() {
            let type: QuantityType = index % 2 == 0 ? .stepCount : .bodyMass
            let sample = QuantitySample(type: type, quantity: Quantity(value: index % 2 == 0 ? Double(100 + index) : 61.25 + Double(index) / 3,
                                                                       unit: type.canonicalUnit),
                                        start: Date(timeIntervalSince1970: start),
                                        end: Date(timeIntervalSince1970: start + (index % 2 == 0 ? 59.999_999_7 : 0)),
                                        source: ["band", "scale\twith tab \\ and backslash", "Wåage \"Ü\"\nline"][index % 3])
            let person: String? = [nil, "alice", "bob\\o"][index % 3]
            changes.append(.upsert(sample, record: HealthRecordEncoder().encode(sample), person: person, anchor: anchorBase + Int64(index) + 1))
        }
        return changes
    }

    private static let columns = """
        uuid, gateway, person, type, value, unit, start_time, end_time, source, record, anchor, start_epoch, end_epoch,
        deleted_at IS NULL
        """

    @Test func directAndStagedBatchesWriteTheSameRows() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let direct = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()),
                                              schema: try PostgresSchema(name: "direct"), gateway: "ward-3")
        let staged = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()),
                                              schema: try PostgresSchema(name: "staged"), gateway: "ward-3")
        staged.copiesNewSamplesDirectly = false
        let changes = Self.awkwardChanges()
        #expect(try direct.write(changes) == changes.count)
        #expect(try staged.write(changes) == changes.count)
        for table in ["samples", "source_spans"] {
            let columns = table == "samples" ? Self.columns : "*"
            #expect(try server.psql("SELECT count(*) FROM direct.\(table)") == String(table == "samples" ? changes.count : 6))
            #expect(try server.psql("SELECT \(columns) FROM direct.\(table) EXCEPT SELECT \(columns) FROM staged.\(table)") == "")
            #expect(try server.psql("SELECT \(columns) FROM staged.\(table) EXCEPT SELECT \(columns) FROM direct.\(table)") == "")
        }
        #expect(try server.psql("SELECT id, last_anchor FROM direct.gateways") == "ward-3|\(changes.count)")
        #expect(try server.psql("SELECT id, last_anchor FROM staged.gateways") == "ward-3|\(changes.count)")
        // The text survives byte for byte, and the record is queryable JSON.
        #expect(try server.psql("SELECT DISTINCT source FROM direct.samples WHERE person = 'bob\\o'") == "Wåage \"Ü\"\nline")
        #expect(try server.psql("SELECT count(*) FROM direct.samples WHERE (record->>'uuid')::uuid = uuid") == String(changes.count))
    }

    @Test func aBatchWithAStoredUUIDFallsBackToTheUpsertAndWritesEachSampleOnce() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let writer = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(),
                                              gateway: "g1")
        let changes = Self.awkwardChanges()
        #expect(try writer.write(Array(changes.prefix(3))) == 3)
        // The first three again with four new ones (a batch re-sent after a crash, grown since):
        // the COPY meets a stored uuid, the upsert writes the four and leaves the three alone.
        let before = try server.psql("SELECT max(written_at) FROM ingestd.samples")
        #expect(try writer.write(changes) == 4)
        #expect(try server.psql("SELECT count(*), count(DISTINCT uuid) FROM ingestd.samples") == "7|7")
        #expect(try server.psql("SELECT count(*) FROM ingestd.samples WHERE written_at <= '\(before)'") == "3")
        #expect(try server.psql("SELECT last_anchor FROM ingestd.gateways") == "7")
        // The same batch once more changes nothing, and a batch of new samples goes straight in again.
        #expect(try writer.write(changes) == 0)
        #expect(try writer.write(Self.awkwardChanges(anchorBase: 7)) == 7)
        #expect(try server.psql("SELECT count(*), max(anchor) FROM ingestd.samples") == "14|14")
    }

    /// Another gateway's samples with the same uuids are rows of their own (the key is (gateway,
    /// uuid)): the direct COPY takes them, and the first gateway's rows are never touched.
    @Test func aSampleWithAnotherGatewaysUUIDIsARowOfItsOwn() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let first = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(),
                                             gateway: "g1")
        let second = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(),
                                              gateway: "g2")
        let changes = Self.awkwardChanges()
        #expect(try first.write(changes) == changes.count)
        let before = try server.psql("SELECT uuid, person, record, anchor, deleted_at IS NULL FROM ingestd.samples WHERE gateway = 'g1' ORDER BY uuid")
        #expect(try second.write(Array(changes.prefix(1))) == 1)
        let moved = changes.prefix(2).map { change -> PostgresChange in
            guard case .upsert(let sample, let record, _, let anchor) = change else { return change }
            return .upsert(sample, record: record, person: "carol", anchor: anchor)
        }
        #expect(try second.write(moved) == 2)
        #expect(try server.psql("SELECT gateway, count(*) FROM ingestd.samples GROUP BY 1 ORDER BY 1") == "g1|7\ng2|2")
        #expect(try server.psql("SELECT DISTINCT person FROM ingestd.samples WHERE gateway = 'g2'") == "carol")
        #expect(try server.psql("SELECT uuid, person, record, anchor, deleted_at IS NULL FROM ingestd.samples WHERE gateway = 'g1' ORDER BY uuid")
                == before)
    }

    @Test func timestampsAreComputedAsToTimestampComputesThem() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        var values: [Double] = [0, 0.0000005, 0.0000015, 0.0000025, -0.0000005, 1.0000005, 1_780_000_000.1234565,
                                951_782_400.999_999_5, -62_135_596_800, 253_402_300_799.999_999, -210_866_803_200]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            values.append(Double.random(in: -3e9...5e9, using: &generator))
            values.append((Double.random(in: 0...2e9, using: &generator) * 1_000_000).rounded() / 1_000_000 + 0.0000005)
        }
        let list = values.map { "(\($0)::float8)" }.joined(separator: ",")
        let theirs = try server.psql("""
            SELECT (extract(epoch FROM to_timestamp(v)) * 1000000)::bigint - 946684800000000 FROM (VALUES \(list)) AS t (v)
            """).split(separator: "\n").map { Int64($0) }
        let ours = values.map { PostgresCopyBinary.timestampMicroseconds(fromUnixSeconds: $0) }
        #expect(theirs == ours)
        for refused in [Double.nan, .infinity, -.infinity, -210_866_803_200.5, 9_224_318_016_000] {
            #expect(PostgresCopyBinary.timestampMicroseconds(fromUnixSeconds: refused) == nil)
        }
    }
}
