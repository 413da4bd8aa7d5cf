import Foundation
import HealthModel

// The household ports: what the admin commands change in a store (people, device owners, whose
// samples are whose). The SQLite store implements them; a fleet's PostgreSQL database does not
// (it is read across gateways, never administered), so commands opening one refuse before asking.

/// A connection to a store that the caller ends.
public protocol StoreConnection: AnyObject {
    /// Ends the store's connection.
    func close()
}

/// Everything the household commands change: people, device owners, whose samples are whose.
public typealias HouseholdStore = PeopleStore & DeviceOwnershipStore & SampleAssignmentStore

/// The people of a store, as `people add`, `people set` and `people remove` change them.
public protocol PeopleStore: StoreConnection {
    /// Everybody, in the order they were added.
    func people() throws -> [Person]
    /// The person named `name`; `PeopleError.unknownPerson` when there is none.
    func person(named name: String) throws -> Person
    /// How many stored samples belong to `person` (`people list`).
    func sampleCount(of person: Person) throws -> Int
    /// Adds a person; `bodyMassKilograms` is the weight the body-mass rule starts from.
    @discardableResult
    func addPerson(name: String, profile: UserProfile, bodyMassKilograms: Double?, scaleUserIndex: Int?) throws -> Person
    /// Replaces the characteristics of `person` (`profile set`) and recomputes the body
    /// composition derived from their weighings.
    @discardableResult
    func setProfile(_ profile: UserProfile, of person: Person) throws -> BodyCompositionRecomputation
    /// Sets the measurement system `person` reads values in (nil: the configuration's).
    func setUnits(_ units: UnitSystem?, of person: Person) throws
    /// Sets the formula `person`'s weighings are derived with, and recomputes them.
    @discardableResult
    func setBodyComposition(_ choice: BodyCompositionChoice, of person: Person) throws -> BodyCompositionRecomputation
    /// Removes the person named `name`, doing `disposal` with their samples; how many samples it moved or deleted.
    func removePerson(named name: String, samples disposal: PersonSampleDisposal) throws -> Int
}

/// The owners of devices and their formulas, as `devices assign` and `devices set` change them.
public protocol DeviceOwnershipStore: StoreConnection {
    /// Every device owner, by device (`people list`).
    func deviceOwners() throws -> [DeviceOwner]
    /// Makes `person` the owner of the device `identifier`: its later samples are theirs.
    func assignDevice(_ identifier: String, to person: Person) throws
    /// Sets (nil: the person's choice again) the formula of the device's weighings, and recomputes them.
    @discardableResult
    func setBodyComposition(_ choice: BodyCompositionChoice?, ofDevice identifier: String) throws -> BodyCompositionRecomputation
}

/// Whose stored samples are whose, as `assign` changes it.
public protocol SampleAssignmentStore: StoreConnection {
    /// Hands `body` the samples nobody was assigned, oldest first, at most `limit` (0: all), one
    /// at a time as they are read (nothing gathered): what `assign` can move (`ingestd unassigned`).
    func forEachUnassignedSample(limit: Int, _ body: (QuantitySample) throws -> Void) throws
    /// How many samples nobody was assigned (`people list` points at them).
    func unassignedCount() throws -> Int
    /// Gives the samples `uuids` to `person` (those already theirs are left alone); how many moved.
    /// An unknown uuid fails the whole call.
    @discardableResult
    func assign(_ uuids: [UUID], to person: Person) throws -> Int
    /// Gives the unassigned samples of the device `identifier` to `person`; how many moved.
    @discardableResult
    func assignUnassigned(fromDevice identifier: String, to person: Person) throws -> Int
}

extension SampleAssignmentStore {
    /// The samples nobody was assigned, oldest first, at most `limit` (0: all), gathered.
    public func unassignedSamples(limit: Int = 0) throws -> [QuantitySample] {
        var samples: [QuantitySample] = []
        try forEachUnassignedSample(limit: limit) { samples.append($0) }
        return samples
    }
}

/// A device owner as `people list` shows it.
public struct DeviceOwner: Sendable, Equatable {
    /// The identifier as given to `devices assign`.
    public var device: String
    public var person: String

    public init(device: String, person: String) {
        self.device = device
        self.person = person
    }
}

/// What `PeopleStore.removePerson` does with the person's samples.
public enum PersonSampleDisposal: Sendable, Equatable {
    /// Refuse when the person has samples.
    case refuse
    /// Move them to another person (the change feed shows each as delete + add).
    case reassign(to: String)
    /// Delete them (the change feed shows each deletion).
    case delete
}

/// Why a change to the people of a store was refused; each case carries the offending value.
public enum PeopleError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidName(String, reason: String)
    case duplicateName(String)
    case unknownPerson(String, known: [String])
    case scaleUserIndexTaken(Int, by: String)
    case scaleUserIndexOutOfRange(Int)
    /// `people remove` of a person who still has samples, without `--reassign` or `--delete-samples`.
    case hasSamples(String, count: Int)
    case lastPerson(String)
    case reassignToSelf(String)
    case unknownSample(UUID)
    case emptyDeviceIdentifier
    /// `people remove` of a person a sink reads (remove the sink first).
    case readBySinks(String, sinks: [String])

    /// People's names for a message, five at most (a store may hold 10,001):
    /// `Ann, Bob, Cem, Dan, Eve and 9996 more; 'ingestd people list' shows all 10001`.
    public static func listing(_ names: [String]) -> String {
        let shown = 5
        return names.count <= shown ? PrintableText.abbreviatedList(names)
            : "\(PrintableText.abbreviatedList(names, shown: shown)); 'ingestd people list' shows all \(names.count)"
    }

    public var description: String {
        switch self {
        case .invalidName(let name, let reason): "invalid person name \(JSONText.quoted(name)): \(reason)"
        case .duplicateName(let name): "there is already a person named \(JSONText.quoted(name))"
        case .unknownPerson(let name, let known):
            "no person named \(PrintableText.quoted(name)) (people: \(Self.listing(known)))"
        case .scaleUserIndexTaken(let index, let name): "scale user index \(index) already belongs to \(name)"
        case .scaleUserIndexOutOfRange(let index): "scale user index \(index) is not within 0...254"
        case .hasSamples(let name, let count):
            "\(name) has \(count) sample\(count == 1 ? "" : "s"); give --reassign OTHER or --delete-samples"
        case .lastPerson(let name): "\(name) is the only person; add another before removing \(name)"
        case .reassignToSelf(let name): "cannot reassign \(name)'s samples to \(name)"
        case .unknownSample(let uuid): "no stored sample has uuid \(uuid.uuidString.lowercased())"
        case .emptyDeviceIdentifier: "the device identifier must not be empty"
        case .readBySinks(let name, let sinks):
            "the sink\(sinks.count == 1 ? "" : "s") \(sinks.joined(separator: ", ")) deliver\(sinks.count == 1 ? "s" : "") \(name)'s samples; remove \(sinks.count == 1 ? "it" : "them") first ('ingestd sinks remove NAME')"
        }
    }
}

/// What a recomputation of derived body composition did: derived samples removed (each a
/// tombstone in the change feed), new ones added, and the weighings that derived nothing, by
/// reason (`not-derived-…`) with one example message each.
public struct BodyCompositionRecomputation: Sendable, Equatable {
    /// Weighings (body masses with an impedance, or of an `estimate` choice) looked at.
    public var weighings = 0
    public var removed = 0
    public var added = 0
    public var skipped: [String: Int] = [:]
    public var examples: [String: String] = [:]

    public init() {}

    /// One line for people: "3 weighings: 8 derived values removed, 8 added; 1 derived nothing: …".
    public var summary: String {
        var text = "\(weighings) weighing\(weighings == 1 ? "" : "s"): \(removed) derived value\(removed == 1 ? "" : "s") removed, \(added) added"
        for key in skipped.keys.sorted() {
            text += "; \(skipped[key] ?? 0) derived nothing: \(examples[key] ?? key)"
        }
        return text
    }
}
