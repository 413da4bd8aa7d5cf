import Foundation
import HealthModel

/// The ingest pipeline: normalize → validate → authorize → assign a person → (store: deduplicate → write).
///
/// Authorization has three outcomes per (source, type): granted samples are written, denied ones
/// are rejected (`denied`), and those of an undecided pair are held in the store's pending area
/// (counted as `held`) until `ingestd auth grant` brings them in through `ingest(_:releasing:)`.
///
/// One `ingest` call is one batch and one store transaction. A rejected sample never blocks the
/// rest of its batch; rejections are counted per (source, type, reason). The store's receipt is
/// returned only after the commit, so a caller may acknowledge data to a device afterwards.
/// A pipeline is owned by one task at a time.
public final class Pipeline {
    /// How far in the future (by the ingest clock) a sample may end: device clocks drift.
    public static let allowedClockSkew: TimeInterval = 600

    private let store: any SampleStore
    private let now: @Sendable () -> Date
    private var policy: AuthorizationPolicy
    /// Batches taken ahead (`preparation`) that `ingest(_:)` took again, because they were taken
    /// under other grants than the pipeline's.
    private(set) var batchesTakenAgain = 0
    /// Called after each commit with its "records processed" events.
    public var onRecordsProcessed: (@Sendable ([RecordsProcessed]) -> Void)?
    /// The relative tolerance of the body-mass rule of person assignment (0.10 = ±10 %).
    public var assignTolerance = PersonAssigner.defaultTolerance

    /// - Parameter now: the ingest clock (tests and replays pass their own).
    public init(store: any SampleStore, now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.store = store
        self.now = now
        self.policy = try store.loadAuthorization()
    }

    /// Writes of one batch refused because its grants changed meanwhile, before giving up.
    static let authorizationRetries = 5

    /// Re-reads grants from the store (after `ingestd auth grant`, or on SIGHUP).
    public func reloadAuthorization() throws {
        policy = try store.loadAuthorization()
    }

    /// Normalizes a sample to its type's canonical unit and validates it.
    public func prepare(_ sample: QuantitySample, clock: Date) -> Result<QuantitySample, RejectionReason> {
        IntakeStage(policy: policy).prepare(sample, clock: clock)
    }

    /// The first stages over a batch, under the pipeline's grants now.
    private func intake(_ records: [HealthRecord], clock: Date) -> IntakeStage.Intake {
        IntakeStage(policy: policy).intake(records, clock: clock)
    }

    /// Runs one batch through every stage and commits what passes in one transaction.
    /// - Parameter releasing: pending rows these records came from (a grant bringing them in): they
    ///   leave the pending area in the same transaction.
    /// - Parameter deviceKeys: what the transport knows the records' device by (a USB device's
    ///   `VID:PID` and serial number), for device owners.
    public func ingest(_ records: [HealthRecord], releasing: [Int64] = [], deviceKeys: [String] = []) throws -> IngestReport {
        try ingest(PreparedBatch(untaken: records), releasing: releasing, deviceKeys: deviceKeys)
    }

    /// Takes batches through the first stages (normalize, validate, authorize) on another thread,
    /// under the grants this pipeline has now (see `BatchPreparation`).
    public var preparation: BatchPreparation {
        BatchPreparation(stage: IntakeStage(policy: policy), now: now)
    }

    /// Ingests a batch taken ahead by `preparation` (on another thread) as `ingest(_:)` does,
    /// without taking it again when the pipeline's grants are still those it was taken under
    /// (compared whole: an unchanged policy shares its storage, so that costs next to nothing);
    /// a batch taken under other grants, or not at all, is taken here. A taken batch keeps the
    /// ingest clock it was taken with.
    public func ingest(_ prepared: PreparedBatch, releasing: [Int64] = [], deviceKeys: [String] = []) throws -> IngestReport {
        let records = prepared.records
        let clock = prepared.taken?.clock ?? now()
        var batch: IntakeStage.Intake
        if let taken = prepared.taken, taken.policy == policy {
            batch = taken.intake
        } else {
            if prepared.taken != nil { batchesTakenAgain += 1 }
            batch = intake(records, clock: clock)
        }
        // A decision taken since the grants were read (`ingestd auth grant` or `deny` in another
        // process) applies at once to samples that would otherwise be held.
        if !batch.held.isEmpty {
            let fresh = try store.loadAuthorization()
            if fresh != policy {
                policy = fresh
                batch = intake(records, clock: clock)
            }
        }
        var people: [Int64?]
        var receipt: CommitReceipt
        var attempts = 0
        while true {
            let household: Household
            (people, household) = try assignPeople(batch.accepted, deviceKeys: deviceKeys)
            deriveBodyComposition(into: &batch, people: &people, household: household)
            do {
                receipt = try store.write(batch.accepted, people: people, held: batch.held, releasing: releasing,
                                          rejections: batch.report.rejections)
                break
            } catch let changed as AuthorizationChangedError {
                // Decided while this batch was on its way (a grant in another process): read
                // the grants again, take the batch again, write it again.
                attempts += 1
                guard attempts < Self.authorizationRetries else { throw changed }
                policy = try store.loadAuthorization()
                batch = intake(records, clock: clock)
            }
        }
        var report = batch.report
        report.pending = receipt.pending
        var firstMember = 0
        for (index, outcomes) in receipt.outcomes.prefix(batch.accepted.count).enumerated() {
            let members = batch.memberCounts[index]
            for (offset, outcome) in outcomes.prefix(members).enumerated() {
                if outcome == .uuidConflict || outcome == .syncVersionConflict {
                    let member = batch.accepted[index].samples[offset]
                    let reason: RejectionReason = outcome == .uuidConflict
                        ? .uuidConflict(member.uuid)
                        : .syncVersionConflict(syncIdentifier: member.metadata.syncIdentifier ?? "", version: member.metadata.syncVersion ?? 0)
                    IntakeStage.reject(member, reason, into: &report)
                    report.conflicts.append((batch.acceptedRecords[index], reason))
                } else {
                    batch.tally.count(outcome, slot: batch.memberSlots[firstMember + offset])
                    if people[index] == nil, outcome == .written || outcome == .replaced { report.unassigned += 1 }
                }
            }
            firstMember += members
        }
        batch.tally.add(to: &report.perType)
        report.events = receipt.events
        report.anchor = receipt.anchor
        if !receipt.events.isEmpty { onRecordsProcessed?(receipt.events) }
        return report
    }

    /// The assignment stage: the person of every accepted record (nil: unassigned), with the
    /// household read fresh for the batch (another process may have added people or owners).
    private func assignPeople(_ accepted: [NormalizedRecord], deviceKeys: [String]) throws -> ([Int64?], Household) {
        guard !accepted.isEmpty else { return ([], Household()) }
        let store = self.store
        var assigner = PersonAssigner(household: try store.loadHousehold(), tolerance: assignTolerance) {
            try store.personOfWeighing(source: $0, syncIdentifier: $1)
        }
        return (try assigner.assign(accepted, deviceKeys: deviceKeys).map(\.person), assigner.household)
    }

    /// The derivation stage (`BodyCompositionStage`): adds the body composition of the batch's
    /// assigned weighings to the batch, with the person of their weighing. A derived sample is
    /// written only when its (source, type) is granted; a weighing that derives nothing is
    /// counted with its reason.
    private func deriveBodyComposition(into batch: inout IntakeStage.Intake, people: inout [Int64?], household: Household) {
        // Most batches have no body mass: the stage does not look at their samples at all.
        guard batch.tally.contains(QuantityType.bodyMass.identifier) else { return }
        // The body mass samples, found by their type's slot (the others are not touched).
        let bodyMassSlot = batch.tally.slot(for: QuantityType.bodyMass.identifier)
        var bodyMassRecords: [Int] = []
        var member = 0
        for (record, count) in batch.memberCounts.enumerated() {
            if count == 1, batch.memberSlots[member] == bodyMassSlot { bodyMassRecords.append(record) }
            member += count
        }
        let derivation = BodyCompositionStage.derive(batch.accepted, bodyMassRecords: bodyMassRecords, people: people, household: household)
        var skips = derivation.skips
        var refused: Set<PersonAssigner.WeighingKey> = []
        for (record, sample) in derivation.derived {
            guard policy.decision(source: sample.source, type: sample.type) == .granted else {
                if refused.insert(PersonAssigner.weighingKey(sample)).inserted,
                   case .sample(let weighing) = batch.accepted[record] {
                    skips.append((weighing, .notAuthorized(type: sample.type.shortName)))
                }
                continue
            }
            batch.accepted.append(.sample(sample))
            batch.acceptedRecords.append(batch.acceptedRecords[record])
            batch.memberSlots.append(batch.tally.slot(for: sample.type.identifier))
            batch.memberCounts.append(1)
            people.append(people[record])
        }
        for (weighing, skip) in skips {
            let key = RejectionKey(source: weighing.source, type: QuantityType.bodyFatPercentage.identifier, reason: skip.key)
            batch.report.rejections[key, default: 0] += 1
            if batch.report.examples[key] == nil { batch.report.examples[key] = skip.description }
        }
    }
}

/// A batch on its way into the pipeline, taken through its first stages ahead of the write or
/// not (`untaken`).
public struct PreparedBatch: Sendable {
    /// The records as they came.
    public let records: [HealthRecord]
    /// What the first stages made of them; nil when they have not run.
    let taken: Taken?

    /// The first stages' work on a batch, the ingest clock they ran with, and the grants they
    /// ran under.
    struct Taken: Sendable {
        var intake: IntakeStage.Intake
        var clock: Date
        var policy: AuthorizationPolicy
    }

    /// A batch the pipeline takes through every stage when it is ingested.
    public init(untaken records: [HealthRecord]) {
        self.records = records
        taken = nil
    }

    init(records: [HealthRecord], taken: Taken) {
        self.records = records
        self.taken = taken
    }
}

/// Normalizes, validates and authorizes batches on another thread than the pipeline's, under
/// the grants the pipeline had when it handed this out (`Pipeline.preparation`): an import takes
/// its next batch through these stages while the pipeline writes the batch before. A batch
/// taken under grants that changed since (an import's `--grant`, `auth grant` in another
/// process) is taken again by the pipeline, so none is written under grants no longer in force.
public struct BatchPreparation: Sendable {
    let stage: IntakeStage
    let now: @Sendable () -> Date

    /// `records` taken through the first stages, with the ingest clock read now.
    public func prepare(_ records: [HealthRecord]) -> PreparedBatch {
        let clock = now()
        let taken = PreparedBatch.Taken(intake: stage.intake(records, clock: clock), clock: clock, policy: stage.policy)
        return PreparedBatch(records: records, taken: taken)
    }
}
