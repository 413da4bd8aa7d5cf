import Foundation
import Testing
@testable import GATTHealthProfiles

struct RSCAccumulatorTests {
    /// A walking RSC value with a total distance: flags 0x02, speed 1.5 m/s, `cadence`, `decimeters`.
    private func measurement(cadence: UInt8, decimeters: UInt32?) throws -> RSCMeasurement {
        var value: [UInt8] = [decimeters == nil ? 0x00 : 0x02, 0x80, 0x01, cadence]
        if let decimeters { value += (0..<4).map { UInt8(truncatingIfNeeded: decimeters >> (8 * $0)) } }
        return try RSCMeasurement(decoding: value)
    }

    private func at(_ seconds: Double) -> Date { captureStart.addingTimeInterval(seconds) }

    @Test func distanceAndStepsOverASequence() throws {
        var accumulator = RSCAccumulator()
        typealias Increment = RSCAccumulator.Increment

        // The first value only sets the base.
        var result = accumulator.add(try measurement(cadence: 120, decimeters: 1000), at: at(0))
        #expect(result.distance == nil)
        #expect(result.steps == nil)

        // +12 dm in 1 s at 120 steps/min: 1.2 m and 2 steps.
        result = accumulator.add(try measurement(cadence: 120, decimeters: 1012), at: at(1))
        #expect(result.distance == Increment(start: at(0), end: at(1), amount: 1.2))
        #expect(result.steps == Increment(start: at(0), end: at(1), amount: 2))

        // +18 dm in 1.5 s at 100 steps/min (the later value's cadence): 1.8 m, 2.5 steps.
        result = accumulator.add(try measurement(cadence: 100, decimeters: 1030), at: at(2.5))
        #expect(result.distance == Increment(start: at(1), end: at(2.5), amount: 1.8))
        #expect(result.steps == Increment(start: at(1), end: at(2.5), amount: 2.5))

        // The counter went back to 5 dm: a reset, no distance (never negative); steps go on.
        result = accumulator.add(try measurement(cadence: 100, decimeters: 5), at: at(3.5))
        #expect(result.distance == nil)
        #expect(result.steps == Increment(start: at(2.5), end: at(3.5), amount: 100.0 / 60))

        // Counting again from the new base: +4 dm.
        result = accumulator.add(try measurement(cadence: 90, decimeters: 9), at: at(4.5))
        #expect(result.distance == Increment(start: at(3.5), end: at(4.5), amount: 0.4))
        #expect(result.steps == Increment(start: at(3.5), end: at(4.5), amount: 1.5))

        // A 25.5 s gap: no steps across it; an unchanged counter gives no distance.
        result = accumulator.add(try measurement(cadence: 90, decimeters: 9), at: at(30))
        #expect(result.distance == nil)
        #expect(result.steps == nil)

        // Cadence 0: no steps.
        result = accumulator.add(try measurement(cadence: 0, decimeters: 9), at: at(31))
        #expect(result.steps == nil)

        // A value without total distance still counts steps; the next distance spans both.
        result = accumulator.add(try measurement(cadence: 60, decimeters: nil), at: at(32))
        #expect(result.distance == nil)
        #expect(result.steps == Increment(start: at(31), end: at(32), amount: 1))
        result = accumulator.add(try measurement(cadence: 60, decimeters: 19), at: at(33))
        #expect(result.distance == Increment(start: at(31), end: at(33), amount: 1))
    }

    @Test func timeNotMovingForwardGivesNothing() throws {
        var accumulator = RSCAccumulator()
        _ = accumulator.add(try measurement(cadence: 120, decimeters: 100), at: at(10))
        let same = accumulator.add(try measurement(cadence: 120, decimeters: 110), at: at(10))
        #expect(same.distance == nil)
        #expect(same.steps == nil)
        let earlier = accumulator.add(try measurement(cadence: 120, decimeters: 120), at: at(5))
        #expect(earlier.distance == nil)
        #expect(earlier.steps == nil)
        // After that the earlier value is the base.
        let next = accumulator.add(try measurement(cadence: 120, decimeters: 125), at: at(6))
        #expect(next.distance?.amount == 0.5)
    }

    @Test func resetForgetsTheBase() throws {
        var accumulator = RSCAccumulator()
        _ = accumulator.add(try measurement(cadence: 120, decimeters: 100), at: at(0))
        accumulator.reset()
        let result = accumulator.add(try measurement(cadence: 120, decimeters: 110), at: at(1))
        #expect(result.distance == nil)
        #expect(result.steps == nil)
    }
}
