import Export
import Foundation
import HealthModel
import SQLiteStore
import Testing

/// `HealthStore.forEachRecord`: what the export reads from a store.
@Suite struct ExportCursorTests {
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
