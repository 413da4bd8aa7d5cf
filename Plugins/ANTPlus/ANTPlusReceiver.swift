import AdapterKit
import Foundation
import HealthModel

/// An accumulator for a sensor's rolling counter (a field that counts up and wraps at `modulus`).
///
/// The first value read is the baseline. After it, each value adds the smallest increase that leads from the
/// previous value to it: `(new - old) mod modulus`. That is all the counter can tell: a reception gap long enough
/// for the counter to wrap more than once loses the extra turns (they cannot be known) and never adds counts the
/// counter does not show.
public struct RollingCounter: Hashable, Sendable {
    public let modulus: Int
    public private(set) var last: Int?
    public private(set) var total = 0

    public init(modulus: Int) {
        self.modulus = modulus
    }

    /// Takes the next raw value and returns the increase since the previous one (0 for the first).
    public mutating func advance(to raw: Int) -> Int {
        let value = ((raw % modulus) + modulus) % modulus
        defer { last = value }
        guard let last else { return 0 }
        let increase = (value - last + modulus) % modulus
        total += increase
        return increase
    }
}

/// Turns the data pages of heart-rate monitors, stride sensors and weight scales into samples, one state per
/// sensor (by channel id). Pure: the caller says when each message arrived and when to close an interval.
///
/// * Heart rate: a `HeartRate` sample when a new beat arrives with a valid computed rate, at most one per
///   sensor every `heartRateInterval`.
/// * Stride sensor: the stride and distance counters of page 1 are accumulated across wraps; `flush` writes the
///   increase since the last flush as `StepCount` (two steps per stride: the profile counts one stride for every
///   two footfalls) and `DistanceWalkingRunning` over the time between the pages that bound it, and the latest
///   non-zero speed as a `RunningSpeed` sample.
/// * Weight scale: one `BodyMass` sample per weighing — never while the scale says "computing", never the
///   invalid value, and not again for the same weight until the scale measures anew.
public struct ANTPlusReceiver: Sendable {
    /// Timing rules.
    public struct Settings: Hashable, Sendable {
        /// Shortest time between two heart-rate samples of one sensor.
        public var heartRateInterval: TimeInterval = 5
        /// A reception gap after which the counters of a stride sensor may have wrapped unseen.
        public var counterGap: TimeInterval = 60
        /// After this silence the same weight counts as a new weighing.
        public var weighingGap: TimeInterval = 60

        public init() {}
    }

    struct StrideState: Sendable {
        var strides = RollingCounter(modulus: 256)
        var distance = RollingCounter(modulus: 4096)
        var lastPage: Date?
        var intervalStart: Date?
        var intervalEnd: Date?
        var pendingStrides = 0
        var pendingSixteenths = 0
        var speed: (value: Double, time: Date)?
    }

    struct HeartState: Sendable {
        var lastBeatCount: UInt8?
        var lastSample: Date?
    }

    struct ScaleState: Sendable {
        var lastWeight: Double?
        var lastSeen: Date?
    }

    public let source: String
    public let settings: Settings
    private var strides: [ANTChannelID: StrideState] = [:]
    private var hearts: [ANTChannelID: HeartState] = [:]
    private var scales: [ANTChannelID: ScaleState] = [:]

    public init(source: String, settings: Settings = Settings()) {
        self.source = source
        self.settings = settings
    }

    /// Handles one data message from `sender` received at `time`.
    public mutating func receive(_ data: [UInt8], from sender: ANTChannelID, at time: Date, into output: inout AdapterOutput) {
        let page: ANTPlusPage
        do {
            page = try ANTPlusPageDecoder.decode(deviceType: sender.deviceType, data: data)
        } catch {
            if case .unsupportedDeviceType(let type, _) = error {
                output.skip("ant+ device type \(type)")
            } else {
                output.reject(source, reason: error.reason, detail: "\(sender): \(error)", time: time)
            }
            return
        }
        switch page {
        case .heartRate(let heart): receiveHeartRate(heart, from: sender, at: time, into: &output)
        case .strideDistance(let distance): receiveStrides(distance, from: sender, at: time, into: &output)
        case .strideStatus(let status):
            if status.speed > 0 { strides[sender, default: StrideState()].speed = (status.speed, time) }
            output.skip("ant+ stride status page")
        case .bodyWeight(let weight): receiveWeight(weight, from: sender, at: time, into: &output)
        case .other(let type, let number): output.skip("ant+ page \(number) of device type \(type)")
        }
    }

    /// Writes what the stride sensors counted since the last flush.
    public mutating func flush(at time: Date, into output: inout AdapterOutput) {
        for id in strides.keys.sorted(by: { $0.description < $1.description }) {
            guard var state = strides[id] else { continue }
            if let start = state.intervalStart, let end = state.intervalEnd {
                let device = Self.device(id, name: "ANT+ stride sensor")
                if state.pendingStrides > 0 {
                    output.records.append(.sample(QuantitySample(
                        type: .stepCount, quantity: Quantity(value: Double(2 * state.pendingStrides), unit: .count),
                        start: start, end: end, source: source, device: device)))
                }
                if state.pendingSixteenths > 0 {
                    output.records.append(.sample(QuantitySample(
                        type: .distanceWalkingRunning,
                        quantity: Quantity(value: Double(state.pendingSixteenths) / 16, unit: .meter),
                        start: start, end: end, source: source, device: device)))
                }
            }
            if let speed = state.speed {
                output.records.append(.sample(QuantitySample(
                    type: .runningSpeed, quantity: Quantity(value: speed.value, unit: .meter.unitDivided(by: .second)),
                    start: speed.time, end: speed.time, source: source,
                    device: Self.device(id, name: "ANT+ stride sensor"))))
            }
            state.intervalStart = nil
            state.intervalEnd = nil
            state.pendingStrides = 0
            state.pendingSixteenths = 0
            state.speed = nil
            strides[id] = state
        }
    }

    /// The total strides counted from a sensor since its first page (for diagnostics and tests).
    public func strideTotal(of sensor: ANTChannelID) -> Int? { strides[sensor]?.strides.total }

    private mutating func receiveStrides(_ page: StrideDistancePage, from id: ANTChannelID, at time: Date,
                                         into output: inout AdapterOutput) {
        var state = strides[id, default: StrideState()]
        defer { strides[id] = state }
        if page.speed > 0 { state.speed = (page.speed, time) }
        let newStrides = state.strides.advance(to: Int(page.strideCount))
        let newSixteenths = state.distance.advance(to: page.distanceSixteenths)
        guard let previous = state.lastPage else {
            state.lastPage = time
            output.skip("ant+ stride baseline")
            return
        }
        state.lastPage = time
        if time.timeIntervalSince(previous) > settings.counterGap {
            output.skip("ant+ stride reception gap")
        }
        guard newStrides > 0 || newSixteenths > 0 else {
            output.skip("ant+ stride page without progress")
            return
        }
        if state.intervalStart == nil { state.intervalStart = previous }
        state.intervalEnd = time
        state.pendingStrides += newStrides
        state.pendingSixteenths += newSixteenths
    }

    private mutating func receiveHeartRate(_ page: HeartRatePage, from id: ANTChannelID, at time: Date,
                                           into output: inout AdapterOutput) {
        var state = hearts[id, default: HeartState()]
        defer { hearts[id] = state }
        guard state.lastBeatCount != page.beatCount else {
            output.skip("ant+ heart rate without a new beat")
            return
        }
        state.lastBeatCount = page.beatCount
        guard let bpm = page.computedHeartRate else {
            output.skip("ant+ heart rate invalid")
            return
        }
        if let last = state.lastSample, time.timeIntervalSince(last) < settings.heartRateInterval {
            output.skip("ant+ heart rate within interval")
            return
        }
        state.lastSample = time
        output.records.append(.sample(QuantitySample(
            type: .heartRate, quantity: Quantity(value: Double(bpm), unit: .countPerMinute), start: time, end: time,
            source: source, device: Self.device(id, name: "ANT+ heart rate monitor"))))
    }

    private mutating func receiveWeight(_ page: BodyWeightPage, from id: ANTChannelID, at time: Date,
                                        into output: inout AdapterOutput) {
        var state = scales[id, default: ScaleState()]
        defer {
            state.lastSeen = time
            scales[id] = state
        }
        if let seen = state.lastSeen, time.timeIntervalSince(seen) > settings.weighingGap { state.lastWeight = nil }
        switch page.reading {
        case .computing:
            state.lastWeight = nil
            output.skip("ant+ scale computing")
        case .invalid:
            output.skip("ant+ scale invalid weight")
        case .kilograms(let kilograms):
            guard state.lastWeight != kilograms else {
                output.skip("ant+ scale repeated weight")
                return
            }
            state.lastWeight = kilograms
            var metadata = Metadata()
            if let profile = page.userProfileID { metadata.entries["IngestANTUserProfile"] = .number(Double(profile)) }
            output.records.append(.sample(QuantitySample(
                type: .bodyMass, quantity: Quantity(value: kilograms, unit: .kilogram), start: time, end: time,
                source: source, device: Self.device(id, name: "ANT+ weight scale"), metadata: metadata)))
        }
    }

    static func device(_ id: ANTChannelID, name: String) -> Device {
        Device(name: name, localIdentifier: id.description)
    }
}
