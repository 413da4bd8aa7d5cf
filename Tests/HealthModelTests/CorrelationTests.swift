import Foundation
import Testing
@testable import HealthModel

// Foundation also declares `Unit` (NSUnit).
fileprivate typealias Unit = HealthModel.Unit

@Suite struct CorrelationTests {
    let taken = Date(timeIntervalSince1970: 1_767_254_400)  // 2026-01-01T08:00:00Z
    let mmHg = QuantityType.bloodPressureSystolic.canonicalUnit

    fileprivate func reading(_ type: QuantityType, _ value: Double, at date: Date? = nil, unit: Unit? = nil) -> QuantitySample {
        let date = date ?? taken
        return QuantitySample(
            type: type, quantity: Quantity(value: value, unit: unit ?? type.canonicalUnit),
            start: date, end: date, source: "gatt-blood-pressure")
    }

    func bloodPressure(_ objects: [QuantitySample]) -> Correlation {
        Correlation(type: .bloodPressure, start: taken, end: taken, objects: objects, source: "gatt-blood-pressure")
    }

    @Test func validBloodPressure() throws {
        let correlation = bloodPressure([reading(.bloodPressureSystolic, 121), reading(.bloodPressureDiastolic, 79)])
        try correlation.validate()
        // Order of members does not matter.
        try bloodPressure([reading(.bloodPressureDiastolic, 79), reading(.bloodPressureSystolic, 121)]).validate()
    }

    @Test func bloodPressureWithoutDiastolic() {
        #expect(throws: CorrelationError.missingMember(correlation: .bloodPressure, member: "HKQuantityTypeIdentifierBloodPressureDiastolic")) {
            try bloodPressure([reading(.bloodPressureSystolic, 121)]).validate()
        }
    }

    @Test func bloodPressureWithTwoSystolic() {
        let correlation = bloodPressure([
            reading(.bloodPressureSystolic, 121), reading(.bloodPressureSystolic, 125), reading(.bloodPressureDiastolic, 79),
        ])
        #expect(throws: CorrelationError.duplicateMember(correlation: .bloodPressure, member: "HKQuantityTypeIdentifierBloodPressureSystolic", count: 2)) {
            try correlation.validate()
        }
    }

    @Test func bloodPressureWithHeartRateMember() {
        let correlation = bloodPressure([
            reading(.bloodPressureSystolic, 121), reading(.bloodPressureDiastolic, 79), reading(.heartRate, 1.2),
        ])
        #expect(throws: CorrelationError.unexpectedMember(correlation: .bloodPressure, member: "HKQuantityTypeIdentifierHeartRate")) {
            try correlation.validate()
        }
    }

    @Test func bloodPressureWithMismatchedDates() throws {
        let later = taken.addingTimeInterval(60)
        let diastolic = reading(.bloodPressureDiastolic, 79, at: later)
        let correlation = bloodPressure([reading(.bloodPressureSystolic, 121), diastolic])
        let error = try #require(throws: CorrelationError.self) { try correlation.validate() }
        #expect(error == .memberDatesMismatch(
            member: diastolic.uuid, memberStart: later, memberEnd: later, correlationStart: taken, correlationEnd: taken))
        #expect(error.description.contains("2026-01-01T08:01:00Z"))
        #expect(error.description.contains("2026-01-01T08:00:00Z"))
    }

    @Test func validFood() throws {
        let food = Correlation(
            type: .food, start: taken, end: taken,
            objects: [reading(.dietaryEnergyConsumed, 250), reading(.dietaryProtein, 12), reading(.dietarySodium, 0.4)],
            source: "manual", metadata: Metadata(entries: [MetadataKey.foodType: .string("Porridge")]))
        try food.validate()
    }

    @Test func foodWithNonDietaryMember() {
        let food = Correlation(
            type: .food, start: taken, end: taken,
            objects: [reading(.dietaryEnergyConsumed, 250), reading(.bodyMass, 72)], source: "manual")
        #expect(throws: CorrelationError.nonDietaryMember(member: "HKQuantityTypeIdentifierBodyMass")) {
            try food.validate()
        }
    }

    @Test func emptyFood() {
        let food = Correlation(type: .food, start: taken, end: taken, objects: [], source: "manual")
        #expect(throws: CorrelationError.noMembers(correlation: .food)) { try food.validate() }
    }
}
