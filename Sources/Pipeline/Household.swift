import Foundation
import HealthModel

/// The people of a store and what assigns a sample to one of them: device owners, scale user
/// slots, and each person's most recent body mass (for readings of a shared scale).
public struct Household: Sendable, Equatable {
    /// Everybody, in the order they were added.
    public var people: [Person]
    /// Device key (a BLE address, serial number or adapter-given local identifier, lowercased) → person id.
    public var deviceOwners: [String: Int64]
    /// Each person's most recent body mass in kg: their newest assigned weighing, otherwise the
    /// weight given when they were added.
    public var latestBodyMass: [Int64: Double]
    /// Device key → the body-composition formula of its weighings, over the person's choice
    /// (`ingestd devices set DEVICE --body-composition`).
    public var deviceBodyComposition: [String: BodyCompositionChoice]

    public init(people: [Person] = [], deviceOwners: [String: Int64] = [:], latestBodyMass: [Int64: Double] = [:],
                deviceBodyComposition: [String: BodyCompositionChoice] = [:]) {
        self.people = people
        self.deviceOwners = deviceOwners
        self.latestBodyMass = latestBodyMass
        self.deviceBodyComposition = deviceBodyComposition
    }

    /// The formula set for the device of `sample`, if any.
    public func bodyComposition(ofDeviceOf sample: QuantitySample) -> BodyCompositionChoice? {
        guard !deviceBodyComposition.isEmpty else { return nil }
        return Self.deviceKeys(of: sample).lazy.compactMap { deviceBodyComposition[$0] }.first
    }

    /// Whether anybody (a person or a device) chose `estimate`: only then do weighings without
    /// an impedance derive anything.
    public var estimatesWithoutImpedance: Bool {
        people.contains { $0.bodyComposition == .estimate } || deviceBodyComposition.values.contains(.estimate)
    }

    /// The lookup key of a device identifier as `devices assign` stores it.
    public static func deviceKey(_ identifier: String) -> String {
        identifier.lowercased()
    }

    /// The keys under which a sample's device may have an owner: its local identifier (a BLE
    /// address, an adapter-given id), its UDI and its serial number.
    static func deviceKeys(of sample: QuantitySample) -> [String] {
        var keys: [String] = []
        if let local = sample.device?.localIdentifier, !local.isEmpty { keys.append(deviceKey(local)) }
        if let udi = sample.device?.udiDeviceIdentifier, !udi.isEmpty { keys.append(deviceKey(udi)) }
        if let serial = sample.metadata.deviceSerialNumber, !serial.isEmpty { keys.append(deviceKey(serial)) }
        return keys
    }
}

/// Why a sample went to a person (or to nobody).
public enum AssignmentReason: String, Sendable, CaseIterable {
    /// The store has one person: everything is theirs.
    case onlyPerson = "only-person"
    /// `ingestd devices assign`: the device belongs to the person.
    case deviceOwner = "device-owner"
    /// The scale's user slot on the reading is the person's `--scale-user-index`.
    case scaleUserSlot = "scale-user-slot"
    /// A shared scale's body mass within the tolerance of this person's recent weight only.
    case closestBodyMass = "closest-body-mass"
    /// A reading of the same weighing (same source and sync identifier) as an assigned body mass.
    case sameWeighing = "same-weighing"
    /// Nobody could be told with certainty: kept unassigned for `ingestd assign`.
    case unassigned
}

/// The assignment stage: gives every accepted record a person, or none when the rules cannot
/// tell (never a guess two people could match). In order: the only person; the device's owner;
/// the scale's user slot; for body mass, the person whose recent weight is closest, when it is
/// within `tolerance` of that weight and no other person's is; readings of the same weighing
/// follow the weight; otherwise unassigned.
public struct PersonAssigner {
    /// The default tolerance: ±10 % of a person's recent body mass.
    public static let defaultTolerance = 0.10

    public private(set) var household: Household
    /// The relative tolerance around each person's recent body mass (0.10 = ±10 %).
    public let tolerance: Double
    /// The person of an earlier weighing by (source, sync identifier), looked up in the store for
    /// derived readings that arrive without their weight.
    private let storedWeighing: (String, String) throws -> Int64?
    private var weighings: [WeighingKey: Int64?] = [:]

    public init(household: Household, tolerance: Double = Self.defaultTolerance,
                storedWeighing: @escaping (String, String) throws -> Int64? = { _, _ in nil }) {
        self.household = household
        self.tolerance = tolerance
        self.storedWeighing = storedWeighing
    }

    /// What ties the readings of one weighing: the source and the sync identifier, or without
    /// one, the source, the device and the time.
    struct WeighingKey: Hashable {
        var source: String
        var identity: String
    }

    static func weighingKey(_ sample: QuantitySample) -> WeighingKey {
        if let sync = sample.metadata.syncIdentifier { return WeighingKey(source: sample.source, identity: "sync:" + sync) }
        let device = sample.device?.localIdentifier ?? ""
        return WeighingKey(source: sample.source,
                           identity: "at:\(device)|\(sample.start.timeIntervalSince1970)|\(sample.end.timeIntervalSince1970)")
    }

    /// The person of every record (nil: unassigned) and why. Body mass readings are decided
    /// first, so that the derived readings of a weighing follow it wherever they are in the batch.
    /// `deviceKeys` are what the transport knows the records' device by (a USB device's
    /// `VID:PID` and serial number): an owner of one of them owns every record, after the keys
    /// the samples carry themselves.
    public mutating func assign(_ records: [NormalizedRecord], deviceKeys: [String] = []) throws
        -> [(person: Int64?, reason: AssignmentReason)] {
        let transportKeys = deviceKeys.map(Household.deviceKey)
        var result = [(person: Int64?, reason: AssignmentReason)](repeating: (nil, .unassigned), count: records.count)
        guard !household.people.isEmpty else { return result }
        if household.people.count == 1 {
            let only = household.people[0].id
            return Array(repeating: (only, .onlyPerson), count: records.count)
        }
        var later: [Int] = []
        for (index, record) in records.enumerated() {
            let samples = record.samples
            if let decided = direct(samples, transportKeys: transportKeys) {
                result[index] = decided
                rememberWeighing(samples, person: decided.person)
            } else if let weight = samples.first(where: { $0.type == .bodyMass }) {
                let person = closestPerson(to: weight.quantity.value)
                result[index] = (person, person == nil ? .unassigned : .closestBodyMass)
                rememberWeighing(samples, person: person)
            } else {
                later.append(index)
            }
        }
        for index in later {
            let samples = records[index].samples
            guard let first = samples.first else { continue }
            let key = Self.weighingKey(first)
            if let known = weighings[key] {
                result[index] = (known, known == nil ? .unassigned : .sameWeighing)
            } else if let sync = first.metadata.syncIdentifier, let stored = try storedWeighing(first.source, sync) {
                result[index] = (stored, .sameWeighing)
            }
        }
        return result
    }

    /// The device owner or the scale user slot of a record, when either names a person.
    private func direct(_ samples: [QuantitySample], transportKeys: [String]) -> (person: Int64?, reason: AssignmentReason)? {
        guard let first = samples.first else { return nil }
        if !household.deviceOwners.isEmpty {
            for key in Household.deviceKeys(of: first) + transportKeys {
                if let owner = household.deviceOwners[key] { return (owner, .deviceOwner) }
            }
        }
        for sample in samples {
            guard case .number(let slot)? = sample.metadata[MetadataKey.deviceUserID],
                  let person = household.people.first(where: { $0.scaleUserIndex.map(Double.init) == slot }) else { continue }
            return (person.id, .scaleUserSlot)
        }
        return nil
    }

    /// The only person whose recent body mass is within the tolerance of `kilograms`; nil when
    /// nobody's is, or when several people's are (a guess two people could match).
    private func closestPerson(to kilograms: Double) -> Int64? {
        let within = household.people.filter { person in
            guard let reference = household.latestBodyMass[person.id] else { return false }
            return abs(kilograms - reference) <= reference * tolerance
        }
        return within.count == 1 ? within[0].id : nil
    }

    /// Records the weighing's person for its derived readings, and an assigned weight as the
    /// person's most recent one.
    private mutating func rememberWeighing(_ samples: [QuantitySample], person: Int64?) {
        guard let weight = samples.first(where: { $0.type == .bodyMass }) else { return }
        weighings[Self.weighingKey(weight)] = .some(person)
        if let person { household.latestBodyMass[person] = weight.quantity.value }
    }
}
