import Foundation
import HealthModel
import Pipeline
@testable import SQLiteStore
import Testing

/// `HealthStore.forEachRecord`: what the export reads from a store.
@Suite(.offCooperativePool) struct ExportCursorTests {
    @Test func everyRecordComesBackInTimeOrderWithCorrelationsWhole() throws {
        let temp = try mixedStore()
        let records = try temp.records()
        #expect(records.count == 12)
        let firstIDs = records.map { record -> UUID in
            switch record {
            case .sample(let sample): sample.uuid
            case .correlation(let correlation): correlation.uuid
            }
        }
        #expect(firstIDs == [FixtureID.steps, FixtureID.pressure, FixtureID.weight, FixtureID.fat, FixtureID.bmi,
                             FixtureID.otherWeight, FixtureID.heartRate, FixtureID.temperature, FixtureID.oxygen,
                             FixtureID.height, FixtureID.glucose, FixtureID.flights])
        guard case .correlation(let pressure) = records[1] else {
            Issue.record("the blood pressure is not a correlation: \(records[1])")
            return
        }
        #expect(pressure.type == .bloodPressure)
        #expect(pressure.source == "gatt-blood-pressure")
        #expect(pressure.device == cuff)
        #expect(Set(pressure.objects.map(\.uuid)) == [FixtureID.systolic, FixtureID.diastolic])
        // Values come back in the canonical unit: 160 lb is 72.5747792 kg.
        guard case .sample(let otherWeight) = records[5] else { return }
        #expect(abs(otherWeight.quantity.value - 72.5747792) < 1e-9)
        #expect(otherWeight.quantity.unit.unitString == "kg")
        guard case .sample(let weight) = records[2] else { return }
        #expect(weight.device == scale)
    }

    @Test func typeSelectionBringsACorrelationWholeWhenOneMemberIsSelected() throws {
        let temp = try mixedStore()
        let records = try temp.records(types: [.bloodPressureSystolic, .bodyMass])
        #expect(records.count == 3)
        guard case .correlation(let pressure) = records.first else {
            Issue.record("expected the blood pressure first, got \(String(describing: records.first))")
            return
        }
        #expect(pressure.objects.count == 2)
        #expect(records.dropFirst().flatMap(\.samples).map(\.type) == [.bodyMass, .bodyMass])
        #expect(try temp.records(types: [.walkingSpeed]).isEmpty, "a type the store never saw selects nothing")
    }

    /// Types no correlation holds are read in the type index's order (no sort of the whole
    /// selection): the same records, in the same order, as the general walk filtered to them,
    /// with and without a date range; and the plan shows it.
    @Test func typesOutsideEveryCorrelationComeInTheGeneralWalksOrderFromTheTypeIndex() throws {
        let temp = try mixedStore()
        let selected: [QuantityType] = [.bodyMass, .heartRate, .stepCount, .bodyTemperature]
        let all = try temp.records().flatMap { record -> [UUID] in
            guard case .sample(let sample) = record, selected.contains(sample.type) else { return [] }
            return [sample.uuid]
        }
        #expect(all.count == 5)
        #expect(try temp.records(types: selected).flatMap(\.samples).map(\.uuid) == all)
        let from = try date("2026-11-29T06:30:00Z")
        let ranged = try temp.records(from: from).flatMap { record -> [UUID] in
            guard case .sample(let sample) = record, selected.contains(sample.type) else { return [] }
            return [sample.uuid]
        }
        #expect(try temp.records(types: selected, from: from).flatMap(\.samples).map(\.uuid) == ranged)
        func queryPlan(_ sql: String) throws -> [String] {
            try temp.store.db.prepare("EXPLAIN QUERY PLAN " + sql).mapRows { $0.string(at: 3) ?? "" }
        }
        let plan = try queryPlan("SELECT x.id FROM samples x WHERE x.type IN (1) ORDER BY x.start_time, x.end_time, x.id")
        #expect(plan.contains { $0.contains("samples_by_type_time") } && !plan.contains { $0.contains("USE TEMP B-TREE FOR ORDER BY") },
                "\(plan)")
        #expect(try queryPlan("SELECT 1 FROM samples INDEXED BY samples_by_correlation WHERE correlation IS NOT NULL AND type IN (1) LIMIT 1")
            .contains { $0.contains("samples_by_correlation") })
    }

    @Test func dateRangeSelectsOverlappingRecords() throws {
        let temp = try mixedStore()
        // [06:30, 08:00): the steps interval overlaps, the blood pressure is inside, the 08:00 weighing is not.
        let records = try temp.records(from: try date("2026-11-29T06:30:00Z"), to: try date("2026-11-29T08:00:00Z"))
        #expect(records.flatMap(\.samples).map(\.uuid) .sorted { $0.uuidString < $1.uuidString }
                == [FixtureID.steps, FixtureID.systolic, FixtureID.diastolic])
        let later = try temp.records(from: try date("2026-11-29T09:00:00Z"))
        #expect(later.count == 6)
    }
}

/// The cursor on stored rows it cannot turn into records as they are.
@Suite(.offCooperativePool) struct ExportCursorBoundsTests {
    @Test func aTypeThisBuildDoesNotKnowIsCountedNotExported() throws {
        let temp = try mixedStore()
        let connection = try Connection(path: temp.path, mode: .readWrite)
        try connection.execute(sql: """
            INSERT INTO types(identifier) VALUES ('HKQuantityTypeIdentifierFromTheFuture');
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, device_local_id)
            VALUES (randomblob(16), (SELECT id FROM types WHERE identifier = 'HKQuantityTypeIdentifierFromTheFuture'),
                    1, 1.7e9, 1.7e9, 1, ''), (randomblob(16), (SELECT id FROM types WHERE identifier = 'HKQuantityTypeIdentifierFromTheFuture'),
                    2, 1.7e9, 1.7e9, 1, '');
            """)
        connection.close()
        var count = 0
        let summary = try temp.store.forEachRecord { _ in count += 1 }
        #expect(count == 12)
        #expect(summary.unknownTypes == ["HKQuantityTypeIdentifierFromTheFuture": 2])
    }

    @Test func aCorrelationPastTheMemberBoundStopsWithItsUUID() throws {
        let temp = try mixedStore()
        let connection = try Connection(path: temp.path, mode: .readWrite)
        let limit = HealthStore.maximumExportedCorrelationMembers
        try connection.execute(sql: """
            INSERT INTO correlations(uuid, type, start_time, end_time, source, identity)
            VALUES (X'00000000000040008000000000000042', 'HKCorrelationTypeIdentifierFood', 1.7e9, 1.7e9, 1, 'food-42');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(limit + 1))
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, device_local_id, correlation)
            SELECT randomblob(16), (SELECT id FROM types WHERE identifier = 'HKQuantityTypeIdentifierStepCount'),
                   i, 1.7e9, 1.7e9, 1, '', (SELECT id FROM correlations WHERE type = 'HKCorrelationTypeIdentifierFood')
            FROM n;
            """)
        connection.close()
        #expect(throws: ExportReadError.correlationTooLarge(uuid: FixtureID.uuid(42), limit: limit)) {
            try temp.store.forEachRecord { _ in }
        }
    }
}
