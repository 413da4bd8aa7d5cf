import Foundation

/// A sample that groups other samples (HealthKit's `HKCorrelation`): a blood-pressure reading
/// (systolic + diastolic) or a food item (dietary samples). Each member is also an ordinary sample.
public struct Correlation: Hashable, Sendable {
    public var uuid: UUID
    public var type: CorrelationType
    public var start: Date
    public var end: Date
    /// The member samples.
    public var objects: [QuantitySample]
    /// The id of the source that produced the correlation.
    public var source: String
    public var device: Device?
    public var metadata: Metadata

    public init(
        uuid: UUID = SampleIdentifierGenerator.shared.next(),
        type: CorrelationType,
        start: Date,
        end: Date,
        objects: [QuantitySample],
        source: String,
        device: Device? = nil,
        metadata: Metadata = Metadata()
    ) {
        self.uuid = uuid
        self.type = type
        self.start = start
        self.end = end
        self.objects = objects
        self.source = source
        self.device = device
        self.metadata = metadata
    }

    /// What makes this correlation the same one when it comes again (a device re-read, an
    /// import repeated), never its dates alone: two blood pressures of one cuff in the same
    /// minute are two correlations. See ``identity(type:syncIdentifier:deviceLocalIdentifier:start:end:members:)``.
    public var identity: String {
        Self.identity(type: type.identifier, syncIdentifier: metadata.syncIdentifier,
                      deviceLocalIdentifier: device?.localIdentifier ?? "", start: start, end: end,
                      members: objects.map { Member(type: $0.type.identifier, value: $0.quantity.value,
                                                    syncIdentifier: $0.metadata.syncIdentifier) })
    }

    /// A member as the identity sees it.
    public struct Member: Sendable {
        public var type: String
        public var value: Double
        public var syncIdentifier: String?
        public init(type: String, value: Double, syncIdentifier: String?) {
            self.type = type
            self.value = value
            self.syncIdentifier = syncIdentifier
        }
    }

    /// A correlation's identity (unique per source in a store): its own sync identifier when it
    /// has one; else its members' sync identifiers when every member has one (so that a newer
    /// version of the members keeps their correlation); else its device, dates and members'
    /// values (re-reading the same reading is idempotent; another reading differs).
    public static func identity(type: String, syncIdentifier: String?, deviceLocalIdentifier: String,
                                start: Date, end: Date, members: [Member]) -> String {
        let separator = "\u{1F}"
        if let syncIdentifier { return ["sync", type, syncIdentifier].joined(separator: separator) }
        if !members.isEmpty, members.allSatisfy({ $0.syncIdentifier != nil }) {
            let keys = members.map { "\($0.type)=\($0.syncIdentifier ?? "")" }.sorted()
            return (["members", type] + keys).joined(separator: separator)
        }
        let keys = members.map { "\($0.type)=\($0.value.bitPattern)/\($0.syncIdentifier ?? "")" }.sorted()
        return (["content", type, deviceLocalIdentifier, "\(start.timeIntervalSince1970.bitPattern)",
                 "\(end.timeIntervalSince1970.bitPattern)"] + keys).joined(separator: separator)
    }

    /// Checks the members against the correlation type's rules.
    ///
    /// Blood pressure: exactly one systolic and one diastolic sample, nothing else, both with the
    /// correlation's start and end. Food: at least one sample, all of dietary types.
    public func validate() throws(CorrelationError) {
        switch type {
        case .bloodPressure: try validateBloodPressure()
        case .food: try validateFood()
        }
    }

    private func validateBloodPressure() throws(CorrelationError) {
        let memberTypes: [QuantityType] = [.bloodPressureSystolic, .bloodPressureDiastolic]
        for object in objects where !memberTypes.contains(object.type) {
            throw .unexpectedMember(correlation: type, member: object.type.identifier)
        }
        for memberType in memberTypes {
            let count = objects.count { $0.type == memberType }
            if count == 0 { throw .missingMember(correlation: type, member: memberType.identifier) }
            if count > 1 { throw .duplicateMember(correlation: type, member: memberType.identifier, count: count) }
        }
        for object in objects where object.start != start || object.end != end {
            throw .memberDatesMismatch(
                member: object.uuid, memberStart: object.start, memberEnd: object.end,
                correlationStart: start, correlationEnd: end)
        }
    }

    private func validateFood() throws(CorrelationError) {
        if objects.isEmpty { throw .noMembers(correlation: type) }
        for object in objects where !object.type.isDietary {
            throw .nonDietaryMember(member: object.type.identifier)
        }
    }
}

/// Why a correlation's members break its type's rules.
public enum CorrelationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A correlation with no member samples.
    case noMembers(correlation: CorrelationType)
    /// A required member type is absent (type identifier).
    case missingMember(correlation: CorrelationType, member: String)
    /// A member type that must appear once appears `count` times.
    case duplicateMember(correlation: CorrelationType, member: String, count: Int)
    /// A member of a type the correlation does not allow.
    case unexpectedMember(correlation: CorrelationType, member: String)
    /// A food correlation member that is not a dietary type.
    case nonDietaryMember(member: String)
    /// A member whose dates differ from the correlation's.
    case memberDatesMismatch(member: UUID, memberStart: Date, memberEnd: Date, correlationStart: Date, correlationEnd: Date)

    public var description: String {
        switch self {
        case .noMembers(let correlation):
            "\(correlation.shortName) correlation has no samples"
        case .missingMember(let correlation, let member):
            "\(correlation.shortName) correlation has no \(member) sample"
        case .duplicateMember(let correlation, let member, let count):
            "\(correlation.shortName) correlation has \(count) \(member) samples, expected one"
        case .unexpectedMember(let correlation, let member):
            "\(correlation.shortName) correlation cannot contain \(member)"
        case .nonDietaryMember(let member):
            "food correlation contains non-dietary type \(member)"
        case .memberDatesMismatch(let member, let memberStart, let memberEnd, let correlationStart, let correlationEnd):
            "sample \(member.uuidString) runs \(ISO8601DateTime.string(from: memberStart))–\(ISO8601DateTime.string(from: memberEnd)), "
                + "correlation runs \(ISO8601DateTime.string(from: correlationStart))–\(ISO8601DateTime.string(from: correlationEnd))"
        }
    }
}
