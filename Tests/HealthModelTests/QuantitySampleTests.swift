import Foundation
import Testing
@testable import HealthModel

// Foundation also declares `Unit` (NSUnit).
fileprivate typealias Unit = HealthModel.Unit

@Suite struct QuantitySampleTests {
    let morning = Date(timeIntervalSince1970: 1_767_254_400)  // 2026-01-01T08:00:00Z

    @Test func quantityReadsInCompatibleUnits() throws {
        let weight = Quantity(value: 160, unit: try Unit(from: "lb"))
        #expect(abs(try weight.doubleValue(for: try Unit(from: "kg")) - 72.5747792) < 1e-9)
        #expect(abs(try weight.doubleValue(for: try Unit(from: "st")) - 160.0 / 14) < 1e-12)
        #expect(weight.isCompatible(with: try Unit(from: "g")))
        #expect(!weight.isCompatible(with: try Unit(from: "m")))
        #expect(weight.description == "160 lb")
    }

    @Test func quantityRefusesIncompatibleUnit() throws {
        let weight = Quantity(value: 72, unit: try Unit(from: "kg"))
        #expect(throws: UnitError.self) { try weight.doubleValue(for: try Unit(from: "count/min")) }
    }

    @Test func sampleValueInOtherUnits() throws {
        let sample = QuantitySample(
            type: .heartRate, quantity: Quantity(value: 1.2, unit: try Unit(from: "count/s")),
            start: morning, end: morning, source: "gatt-heart-rate")
        #expect(abs(try sample.canonicalValue() - 72) < 1e-12)
        #expect(abs(try sample.value(in: try Unit(from: "count/min")) - 72) < 1e-12)
        let normalized = try sample.converted(to: QuantityType.heartRate.canonicalUnit)
        #expect(normalized.quantity.unit == QuantityType.heartRate.canonicalUnit)
        #expect(abs(normalized.quantity.value - 72) < 1e-12)
        #expect(normalized.uuid == sample.uuid)
        #expect(sample.isInstantaneous)
        #expect(sample.duration == 0)
    }

    @Test func intervalSample() throws {
        let sample = QuantitySample(
            type: .stepCount, quantity: Quantity(value: 1200, unit: .count),
            start: morning, end: morning.addingTimeInterval(900), source: "omron-pedometer")
        #expect(!sample.isInstantaneous)
        #expect(sample.duration == 900)
        #expect(throws: UnitError.self) { try sample.value(in: try Unit(from: "kg")) }
    }

    @Test func samplesAreValuesComparedFieldByField() throws {
        let uuid = UUID()
        let kilograms = try Unit(from: "kg")
        let first = QuantitySample(uuid: uuid, type: .bodyMass, quantity: Quantity(value: 72.35, unit: kilograms),
                                   start: morning, end: morning, source: "scale")
        var second = first
        #expect(first == second)
        second.metadata.syncVersion = 2
        #expect(first != second)
        second = first
        second.device = Device(localIdentifier: "C8:47:8C:00:11:22")
        #expect(first != second)
    }

    @Test func deviceEmptiness() {
        #expect(Device().isEmpty)
        #expect(!Device(udiDeviceIdentifier: "(01)00884838087537").isEmpty)
    }
}
