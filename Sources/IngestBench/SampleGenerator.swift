import Foundation
import HealthModel

/// SplitMix64: a tiny, fast, seedable generator, so every run (and both benchmark arms) see the
/// same samples.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed integer in `0..<bound` (bound > 0; the tiny modulo bias is irrelevant here).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A uniformly distributed double in `[0, 1)`.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
}

/// One simulated source (adapter instance): its name, device, how often it reports and what.
struct BenchSource: Sendable {
    var name: String
    var device: Device
    /// Seconds between two consecutive samples of this source.
    var step: Double
    /// What the source measures, cycled in order.
    var kinds: [SampleKind]
    /// Relative share of all generated samples.
    var weight: Int
}

/// One kind of measurement a source produces, with the unit the device sends.
struct SampleKind: Sendable {
    var type: QuantityType
    var unit: HealthModel.Unit
    /// Interval length in seconds (0: an instantaneous reading).
    var duration: Double
    /// Value range in `unit`, and the rounding step of the value.
    var range: ClosedRange<Double>
    var resolution: Double
    var metadata: Metadata = Metadata()
}

/// Generates the benchmark's ingest stream deterministically, batch by batch, so memory stays
/// flat: mixed quantity types from four sources (a watch, a phone, a chest strap and a scale),
/// some in non-canonical units the pipeline must convert, and exactly one in every
/// `duplicateEvery` records an exact copy (same UUID and values) of an earlier sample.
struct SampleGenerator {
    static let sources: [BenchSource] = {
        typealias U = HealthModel.Unit
        let (count, perMinute, metre, kilometre) = (U.count, U.countPerMinute, U.meter, U.kilometer)
        let (kilocalorie, kilogram, percent) = (U.kilocalorie, U.kilogram, U.percent)
        return [
            BenchSource(
                name: "bench-watch",
                device: Device(name: "Bench Watch", manufacturer: "Bench", model: "W1", localIdentifier: "AA:BB:CC:00:00:01"),
                step: 15,
                kinds: [
                    SampleKind(type: .stepCount, unit: count, duration: 60, range: 0...160, resolution: 1),
                    SampleKind(type: .heartRate, unit: perMinute, duration: 0, range: 48...175, resolution: 1),
                    SampleKind(type: .distanceWalkingRunning, unit: metre, duration: 60, range: 0...120, resolution: 0.1),
                    SampleKind(type: .activeEnergyBurned, unit: kilocalorie, duration: 60, range: 0...12, resolution: 0.01),
                ],
                weight: 40),
            BenchSource(
                name: "bench-phone",
                device: Device(name: "Bench Phone", manufacturer: "Bench", model: "P2"),
                step: 60,
                kinds: [
                    SampleKind(type: .stepCount, unit: count, duration: 60, range: 0...150, resolution: 1),
                    SampleKind(type: .distanceWalkingRunning, unit: kilometre, duration: 60, range: 0...0.11, resolution: 0.001),
                ],
                weight: 22),
            BenchSource(
                name: "bench-strap",
                device: Device(name: "Bench Strap", manufacturer: "Bench", model: "HRM", localIdentifier: "AA:BB:CC:00:00:02"),
                step: 5,
                kinds: [SampleKind(type: .heartRate, unit: perMinute, duration: 0, range: 50...190, resolution: 1)],
                weight: 36),
            BenchSource(
                name: "bench-scale",
                device: Device(name: "Bench Scale", manufacturer: "Bench", model: "S3", localIdentifier: "AA:BB:CC:00:00:03"),
                step: 1800,
                kinds: [
                    SampleKind(type: .bodyMass, unit: kilogram, duration: 0, range: 60...95, resolution: 0.05,
                               metadata: Metadata(deviceSerialNumber: "BS3-000117")),
                    SampleKind(type: .bodyFatPercentage, unit: percent, duration: 0, range: 0.12...0.32, resolution: 0.001,
                               metadata: Metadata(deviceSerialNumber: "BS3-000117")),
                ],
                weight: 2),
        ]
    }()

    /// Every quantity type the generator produces, for grants and the raw baseline's id table.
    static var types: [QuantityType] {
        var seen: [QuantityType] = []
        for source in sources { for kind in source.kinds where !seen.contains(kind.type) { seen.append(kind.type) } }
        return seen
    }

    /// 2023-01-01T00:00:00Z: one million samples end well before today.
    static let epoch = 1_672_531_200.0

    let duplicateEvery: Int
    private var random: SplitMix64
    private var clocks: [Double]
    private var kindCursor: [Int]
    private var cumulativeWeights: [Int]
    private var recent: [QuantitySample] = []
    private var recentNext = 0
    private let recentCapacity = 8192
    /// Records generated so far.
    private(set) var produced = 0
    /// Exact duplicates among them.
    private(set) var duplicates = 0

    init(seed: UInt64 = 0x1A6E_57D0, duplicateEvery: Int = 20) {
        random = SplitMix64(seed: seed)
        self.duplicateEvery = duplicateEvery
        clocks = Self.sources.map { _ in Self.epoch }
        kindCursor = Self.sources.map { _ in 0 }
        var total = 0
        cumulativeWeights = Self.sources.map { total += $0.weight; return total }
        recent.reserveCapacity(recentCapacity)
    }

    /// The next `count` records.
    mutating func nextBatch(_ count: Int) -> [HealthRecord] {
        var batch: [HealthRecord] = []
        batch.reserveCapacity(count)
        for _ in 0..<count { batch.append(.sample(next())) }
        return batch
    }

    mutating func next() -> QuantitySample {
        produced += 1
        if duplicateEvery > 0, produced % duplicateEvery == 0, !recent.isEmpty {
            duplicates += 1
            return recent[random.below(recent.count)]
        }
        let sample = fresh()
        if recent.count < recentCapacity {
            recent.append(sample)
        } else {
            recent[recentNext] = sample
            recentNext = (recentNext + 1) % recentCapacity
        }
        return sample
    }

    private mutating func fresh() -> QuantitySample {
        let pick = random.below(cumulativeWeights[cumulativeWeights.count - 1])
        let sourceIndex = cumulativeWeights.firstIndex { pick < $0 } ?? 0
        let source = Self.sources[sourceIndex]
        let kind = source.kinds[kindCursor[sourceIndex]]
        kindCursor[sourceIndex] = (kindCursor[sourceIndex] + 1) % source.kinds.count
        let start = clocks[sourceIndex]
        clocks[sourceIndex] += source.step
        let raw = kind.range.lowerBound + random.unit() * (kind.range.upperBound - kind.range.lowerBound)
        let value = (raw / kind.resolution).rounded() * kind.resolution
        let uuid = UUID(uuid: Self.uuidBytes(random.next(), random.next()))
        return QuantitySample(
            uuid: uuid, type: kind.type, quantity: Quantity(value: value, unit: kind.unit),
            start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: start + kind.duration),
            source: source.name, device: source.device, metadata: kind.metadata)
    }

    /// A version-4 UUID from 128 random bits.
    static func uuidBytes(_ high: UInt64, _ low: UInt64) -> uuid_t {
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40
            raw[8] = (raw[8] & 0x3F) | 0x80
            return raw.load(as: uuid_t.self)
        }
    }
}
