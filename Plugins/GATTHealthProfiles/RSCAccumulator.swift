import Foundation

/// Turns a stream of RSC measurements into interval quantities: the distance covered (the
/// change of the sensor's total-distance counter) and the steps taken (cadence × time).
///
/// - Distance: between two successive measurements that carry a total distance, the increase
///   of the counter, over the interval between their receive times. A counter that goes
///   backwards was reset: no distance for that interval, and the new value becomes the base.
/// - Steps: between two successive measurements, the later one's cadence (the device computes
///   it over the steps just taken) × the time between them. Intervals longer than
///   ``maximumStepInterval`` (a gap in notifications) give no steps.
/// Zero amounts give nothing; time not moving forwards restarts both.
public struct RSCAccumulator: Sendable {
    /// One interval quantity.
    public struct Increment: Hashable, Sendable {
        public var start: Date
        public var end: Date
        public var amount: Double
    }

    /// The longest gap between notifications across which steps are still integrated.
    public var maximumStepInterval: TimeInterval

    private var previousTime: Date?
    private var previousDistance: (time: Date, decimeters: UInt32)?

    public init(maximumStepInterval: TimeInterval = 10) {
        self.maximumStepInterval = maximumStepInterval
    }

    /// Adds the measurement received at `time`; returns the distance in metres and the steps
    /// since the previous one, when there are any.
    public mutating func add(_ measurement: RSCMeasurement, at time: Date) -> (distance: Increment?, steps: Increment?) {
        var steps: Increment?
        if let previousTime {
            let elapsed = time.timeIntervalSince(previousTime)
            if elapsed > 0, elapsed <= maximumStepInterval, measurement.cadence > 0 {
                steps = Increment(start: previousTime, end: time, amount: Double(measurement.cadence) * elapsed / 60)
            }
        }
        previousTime = time

        var distance: Increment?
        if let counter = measurement.totalDistanceDecimeters {
            if let previous = previousDistance, time > previous.time, counter >= previous.decimeters {
                let delta = counter - previous.decimeters
                if delta > 0 {
                    distance = Increment(start: previous.time, end: time, amount: Double(delta) / 10)
                }
            }
            previousDistance = (time, counter)
        }
        return (distance, steps)
    }

    /// Forgets the previous measurement (the next one starts afresh).
    public mutating func reset() {
        previousTime = nil
        previousDistance = nil
    }
}
