import Foundation
import HealthModel

/// The ingest pipeline: normalize → validate → authorize → (store: deduplicate → write).
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
    /// Called after each commit with its "records processed" events.
    public var onRecordsProcessed: (@Sendable ([RecordsProcessed]) -> Void)?

    /// - Parameter now: the ingest clock (tests and replays pass their own).
    public init(store: any SampleStore, now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.store = store
        self.now = now
        self.policy = try store.loadAuthorization()
    }

    /// Re-reads grants from the store (after `ingestd auth grant`, or on SIGHUP).
    public func reloadAuthorization() throws {
        policy = try store.loadAuthorization()
    }

    /// Runs one batch through every stage and commits what passes in one transaction.
    public func ingest(_ records: [HealthRecord]) throws -> IngestReport {
        var report = IngestReport()
        var accepted: [NormalizedRecord] = []
        accepted.reserveCapacity(records.count)
        let clock = now()
        for record in records {
            switch record {
            case .sample(let sample):
                switch prepare(sample, clock: clock) {
                case .success(let normalized):
                    if policy.allows(source: normalized.source, type: normalized.type) {
                        accepted.append(.sample(normalized))
                    } else {
                        reject(sample, .notAuthorized, into: &report)
                    }
                case .failure(let reason):
                    reject(sample, reason, into: &report)
                }
            case .correlation(let correlation):
                prepare(correlation, clock: clock, accepted: &accepted, report: &report)
            }
        }
        let receipt = try store.write(accepted, rejections: report.rejections)
        for (record, outcomes) in zip(accepted, receipt.outcomes) {
            for (sample, outcome) in zip(record.samples, outcomes) {
                switch outcome {
                case .written: report.perType[sample.type.identifier, default: TypeCounts()].written += 1
                case .duplicate: report.perType[sample.type.identifier, default: TypeCounts()].duplicate += 1
                case .replaced: report.perType[sample.type.identifier, default: TypeCounts()].replaced += 1
                }
            }
        }
        report.events = receipt.events
        report.anchor = receipt.anchor
        if !receipt.events.isEmpty { onRecordsProcessed?(receipt.events) }
        return report
    }

    /// Normalizes a sample to its type's canonical unit and validates it.
    public func prepare(_ sample: QuantitySample, clock: Date) -> Result<QuantitySample, RejectionReason> {
        let type = sample.type
        guard sample.quantity.value.isFinite else { return .failure(.nonFiniteValue) }
        var normalized = sample
        if sample.quantity.unit != type.canonicalUnit {
            do {
                normalized.quantity = try sample.quantity.converted(to: type.canonicalUnit)
            } catch {
                return .failure(.incompatibleUnit(unit: sample.quantity.unit.unitString,
                                                  canonical: type.canonicalUnit.unitString))
            }
        }
        let value = normalized.quantity.value
        guard value.isFinite else { return .failure(.nonFiniteValue) }
        guard type.plausibleRange.contains(value) else {
            return .failure(.outOfRange(value: value, unit: type.canonicalUnit.unitString, range: type.plausibleRange))
        }
        guard sample.start <= sample.end else { return .failure(.endBeforeStart) }
        let ahead = sample.end.timeIntervalSince(clock)
        guard ahead <= Self.allowedClockSkew else { return .failure(.inFuture(secondsAhead: ahead)) }
        return .success(normalized)
    }

    private func prepare(_ correlation: Correlation, clock: Date, accepted: inout [NormalizedRecord],
                         report: inout IngestReport) {
        do {
            try correlation.validate()
        } catch {
            for member in correlation.objects { reject(member, .invalidCorrelation(error.description), into: &report) }
            return
        }
        var members: [QuantitySample] = []
        for member in correlation.objects {
            switch prepare(member, clock: clock) {
            case .success(let normalized): members.append(normalized)
            case .failure(let reason):
                // A correlation is stored whole or not at all.
                for other in correlation.objects { reject(other, other == member ? reason : .invalidCorrelation("member \(member.type.shortName): \(reason)"), into: &report) }
                return
            }
        }
        let denied = members.filter { !policy.allows(source: $0.source, type: $0.type) }
        guard denied.isEmpty else {
            // Authorization is per member type; a correlation is written only when all are granted.
            for member in members { reject(member, .notAuthorized, into: &report) }
            return
        }
        var normalized = correlation
        normalized.objects = members
        accepted.append(.correlation(normalized))
    }

    private func reject(_ sample: QuantitySample, _ reason: RejectionReason, into report: inout IngestReport) {
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
