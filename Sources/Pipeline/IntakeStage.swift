import Foundation
import HealthModel

/// The first stages of the pipeline over one batch: normalize, validate, authorize, under one
/// set of grants. A value, so that it can run on another thread than the pipeline's: an import
/// takes its next batch through it on its reading thread while the pipeline writes the batch
/// before (`Pipeline.preparation`, `PreparedBatch`).
struct IntakeStage: Sendable {
    /// The grants and denials the batch is authorized under.
    let policy: AuthorizationPolicy

    /// Normalizes, validates and authorizes every record of a batch.
    func intake(_ records: [HealthRecord], clock: Date) -> Intake {
        var batch = Intake(capacity: records.count)
        records.withUnsafeBufferPointer { records in
            for index in records.indices {
                let acceptedBefore = batch.accepted.count
                take(records[index], clock: clock, into: &batch)
                if batch.accepted.count > acceptedBefore { batch.acceptedRecords.append(index) }
            }
        }
        return batch
    }

    /// What the stages made of a batch so far.
    struct Intake: Sendable {
        var report = IngestReport()
        var accepted: [NormalizedRecord] = []
        /// Records of undecided pairs, for the pending area.
        var held: [NormalizedRecord] = []
        /// The type of every accepted member sample, in order, as a slot of `tally`, and the
        /// member count of every accepted record: the receipt is counted without touching the
        /// samples again.
        var tally = TypeTally()
        var memberSlots: [Int] = []
        var memberCounts: [Int] = []
        /// The index in the ingested records of every accepted record.
        var acceptedRecords: [Int] = []
        /// The batch's authorization decisions so far.
        var decisions = RecentDecisions()

        init(capacity: Int) {
            accepted.reserveCapacity(capacity)
            acceptedRecords.reserveCapacity(capacity)
            memberSlots.reserveCapacity(capacity)
            memberCounts.reserveCapacity(capacity)
        }
    }

    /// Normalizes, validates and authorizes one record. The record is borrowed, so a sample is
    /// copied once, into `accepted`, and only when it passes.
    private func take(_ record: borrowing HealthRecord, clock: Date, into batch: inout Intake) {
        switch record {
        case .sample(let sample):
            switch normalizedQuantity(of: sample, clock: clock) {
            case .success(let quantity):
                let decision = batch.decisions.decision(source: sample.source, type: sample.type, policy: policy)
                if decision == .denied {
                    Self.reject(sample, .notAuthorized, into: &batch.report)
                    return
                }
                let normalized: NormalizedRecord
                if let quantity {
                    var converted = sample
                    converted.quantity = quantity
                    normalized = .sample(converted)
                } else {
                    normalized = .sample(sample)
                }
                guard decision == .granted else {
                    hold(normalized, undecided: [sample.type], into: &batch)
                    return
                }
                batch.accepted.append(normalized)
                batch.memberSlots.append(batch.tally.slot(for: sample.type.identifier))
                batch.memberCounts.append(1)
            case .failure(let reason):
                Self.reject(sample, reason, into: &batch.report)
            }
        case .correlation(let correlation):
            if let normalized = prepare(correlation, clock: clock, report: &batch.report) {
                let undecided = normalized.objects.filter {
                    policy.decision(source: $0.source, type: $0.type) == .undecided
                }.map(\.type)
                guard undecided.isEmpty else {
                    hold(.correlation(normalized), undecided: undecided, into: &batch)
                    return
                }
                for member in normalized.objects { batch.memberSlots.append(batch.tally.slot(for: member.type.identifier)) }
                batch.memberCounts.append(normalized.objects.count)
                batch.accepted.append(.correlation(normalized))
            }
        }
    }

    /// Normalizes a sample to its type's canonical unit and validates it.
    func prepare(_ sample: QuantitySample, clock: Date) -> Result<QuantitySample, RejectionReason> {
        switch normalizedQuantity(of: sample, clock: clock) {
        case .success(let quantity?):
            var normalized = sample
            normalized.quantity = quantity
            return .success(normalized)
        case .success(nil):
            return .success(sample)
        case .failure(let reason):
            return .failure(reason)
        }
    }

    /// The checks of `prepare` without copying the sample: the quantity in the canonical unit,
    /// nil when the sample's own quantity already is (the common case), or why it is rejected.
    private func normalizedQuantity(of sample: QuantitySample, clock: Date) -> Result<Quantity?, RejectionReason> {
        let type = sample.type
        guard sample.quantity.value.isFinite else { return .failure(.nonFiniteValue) }
        if let syncIdentifier = sample.metadata.syncIdentifier, syncIdentifier.isEmpty {
            return .failure(.emptySyncIdentifier)
        }
        var converted: Quantity?
        if sample.quantity.unit != type.canonicalUnit {
            do {
                converted = try sample.quantity.converted(to: type.canonicalUnit)
            } catch {
                return .failure(.incompatibleUnit(unit: sample.quantity.unit.unitString,
                                                  canonical: type.canonicalUnit.unitString))
            }
        }
        let value = converted?.value ?? sample.quantity.value
        guard value.isFinite else { return .failure(.nonFiniteValue) }
        guard type.plausibleRange.contains(value) else {
            return .failure(.outOfRange(value: value, unit: type.canonicalUnit.unitString, range: type.plausibleRange))
        }
        guard sample.start <= sample.end else { return .failure(.endBeforeStart) }
        let ahead = sample.end.timeIntervalSince(clock)
        guard ahead <= Pipeline.allowedClockSkew else { return .failure(.inFuture(secondsAhead: ahead)) }
        return .success(converted)
    }

    /// The correlation with its members normalized, or nil when it is rejected (whole).
    private func prepare(_ correlation: Correlation, clock: Date, report: inout IngestReport) -> Correlation? {
        do {
            try correlation.validate()
        } catch {
            for member in correlation.objects { Self.reject(member, .invalidCorrelation(error.description), into: &report) }
            return nil
        }
        var members: [QuantitySample] = []
        for member in correlation.objects {
            switch prepare(member, clock: clock) {
            case .success(let normalized): members.append(normalized)
            case .failure(let reason):
                // A correlation is stored whole or not at all.
                for other in correlation.objects { Self.reject(other, other == member ? reason : .invalidCorrelation("member \(member.type.shortName): \(reason)"), into: &report) }
                return nil
            }
        }
        let denied = members.filter { policy.decision(source: $0.source, type: $0.type) == .denied }
        guard denied.isEmpty else {
            // Authorization is per member type; a correlation is written only when all are granted,
            // and refused whole when one member type is denied.
            for member in members { Self.reject(member, .notAuthorized, into: &report) }
            return nil
        }
        var normalized = correlation
        normalized.objects = members
        return normalized
    }

    /// The authorization decisions of the last few (source, type) pairs of a batch: most batches
    /// hold a handful of pairs, and comparing a source's bytes costs less than hashing it (twice)
    /// in the policy's tables. Byte-equal names are canonically equal, so a hit is always right.
    struct RecentDecisions {
        private var entries: [(source: String, type: QuantityType, decision: AuthorizationDecision)] = []
        private var next = 0
        private static let limit = 8

        mutating func decision(source: String, type: QuantityType, policy: AuthorizationPolicy) -> AuthorizationDecision {
            for entry in entries where entry.type == type && entry.source.hasSameUTF8(as: source) {
                return entry.decision
            }
            let decision = policy.decision(source: source, type: type)
            if entries.count < Self.limit {
                entries.append((source, type, decision))
            } else {
                entries[next] = (source, type, decision)
                next = (next + 1) % Self.limit
            }
            return decision
        }
    }

    /// Keeps a record of an undecided pair for the pending area and counts its samples as held.
    private func hold(_ record: NormalizedRecord, undecided: [QuantityType], into batch: inout Intake) {
        for member in record.samples {
            batch.report.perType[member.type.identifier, default: TypeCounts()].held += 1
        }
        for type in undecided {
            batch.report.held[record.source, default: []].insert(type.identifier)
        }
        batch.held.append(record)
    }

    static func reject(_ sample: QuantitySample, _ reason: RejectionReason, into report: inout IngestReport) {
        let key = RejectionKey(source: sample.source, type: sample.type.identifier, reason: reason.key)
        report.rejections[key, default: 0] += 1
        if report.examples[key] == nil { report.examples[key] = reason.description }
        if case .notAuthorized = reason {
            report.perType[sample.type.identifier, default: TypeCounts()].denied += 1
            report.denied[sample.source, default: []].insert(sample.type.identifier)
        } else {
            report.perType[sample.type.identifier, default: TypeCounts()].invalid += 1
        }
    }
}

/// Per-type outcome counts of one batch, kept in a short list of slots: a batch holds a handful
/// of types, and comparing an identifier with the (usually storage-sharing) one of its slot is
/// cheaper than hashing it into `IngestReport.perType` once per sample.
struct TypeTally: Sendable {
    private var identifiers: [String] = []
    private var counts: [TypeCounts] = []
    private var lastSlot = 0

    /// The slot of `identifier`, created on first use.
    mutating func slot(for identifier: String) -> Int {
        if lastSlot < identifiers.count, identifiers[lastSlot] == identifier { return lastSlot }
        if let found = identifiers.firstIndex(of: identifier) {
            lastSlot = found
            return found
        }
        identifiers.append(identifier)
        counts.append(TypeCounts())
        lastSlot = identifiers.count - 1
        return lastSlot
    }

    /// Whether the batch has a member of the type `identifier`.
    func contains(_ identifier: String) -> Bool {
        identifiers.contains(identifier)
    }

    mutating func count(_ outcome: WriteOutcome, slot: Int) {
        switch outcome {
        case .written: counts[slot].written += 1
        case .duplicate: counts[slot].duplicate += 1
        case .replaced: counts[slot].replaced += 1
        case .uuidConflict, .syncVersionConflict: break  // counted as invalid by the caller
        }
    }

    /// Adds the counts of the types that had outcomes to `perType`.
    func add(to perType: inout [String: TypeCounts]) {
        for (identifier, typeCounts) in zip(identifiers, counts)
        where typeCounts.written + typeCounts.duplicate + typeCounts.replaced > 0 {
            perType[identifier, default: TypeCounts()] += typeCounts
        }
    }
}
