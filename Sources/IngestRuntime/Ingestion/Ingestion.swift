import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// The one front door to ingestion: every record that reaches the store passes through here —
/// the daemon's device sessions (through `IngestService`), `replay`, `import`, and the held
/// records a grant brings in (`auth grant`, the dashboard's decision). It owns the pipeline
/// (normalize → validate → authorize → assign → derive → deduplicate → write), which is built
/// here and nowhere else, so every path runs the same stages with the same bounds.
///
/// Callers hand it records and print (or log) the reports it returns; it never prints.
public final class Ingestion {
    /// The store written (the composition root opened it; only its ports are handed out).
    private let store: HealthStore
    private let pipeline: Pipeline

    /// Ingestion into `store`: the pending area bounded by `pendingLimits`, shared scales' weighings
    /// assigned within `assignTolerance` (a fraction of the recent weight).
    public init(store: HealthStore, pendingLimits: PendingLimits = PendingLimits(),
                assignTolerance: Double = PersonAssigner.defaultTolerance) throws {
        self.store = store
        store.pendingLimits = pendingLimits
        pipeline = try Pipeline(store: store)
        pipeline.assignTolerance = assignTolerance
    }

    /// The store's write authorization (grants, denials, the sources it has met), as the
    /// ingestion commands read it without seeing which store was opened.
    public var authorization: any AuthorizationStore { store }

    /// The store's advertisement keys, for decoding the encrypted captures being ingested.
    public var advertisementKeys: any AdvertisementKeyStore { store }

    /// The store's device memory, what the daemon's conversations keep per device between contacts.
    public var deviceMemory: any DeviceMemoryStore { store }

    /// Runs one batch through the pipeline and commits it in one transaction. `deviceKeys`: what
    /// the transport knows the device by (USB `VID:PID`, serial number), for device owners.
    public func ingest(_ records: [HealthRecord], deviceKeys: [String] = []) throws -> IngestReport {
        try ingest(PreparedBatch(untaken: records), deviceKeys: deviceKeys)
    }

    /// Takes batches through the pipeline's first stages (normalize, validate, authorize) on
    /// another thread, under the grants it has now; `ingest(_:)` of such a batch does not take it
    /// again unless the grants changed meanwhile (`import` takes its next batch on its reading
    /// thread while this one is written).
    public var preparation: BatchPreparation { pipeline.preparation }

    /// Runs a batch taken ahead by `preparation` through the rest of the pipeline and commits it.
    public func ingest(_ batch: PreparedBatch, deviceKeys: [String] = []) throws -> IngestReport {
        do {
            return try pipeline.ingest(batch, deviceKeys: deviceKeys)
        } catch let error as SQLiteError where error.isDiskFull {
            throw IngestionError.diskFull
        }
    }

    /// Holds the commits of the batches ingested from now on until `endHeldCommits(keep:)`
    /// keeps or discards them all (`import` stores its first batches while its archive is still
    /// being verified). Other writers of the store wait meanwhile: hold briefly.
    public func holdCommits() throws {
        try store.holdCommits()
    }

    /// Commits (`keep`) or rolls back every batch ingested since `holdCommits()`.
    public func endHeldCommits(keep: Bool) throws {
        do {
            try store.endHeldCommits(keep: keep)
        } catch let error as SQLiteError where error.isDiskFull {
            throw IngestionError.diskFull
        }
    }

    /// Keeps the devices' battery charges (not health samples: only for sources with a grant);
    /// returns how many were kept.
    @discardableResult
    public func recordBatteries(_ batteries: [DeviceBattery]) throws -> Int {
        do {
            return try store.recordBatteries(batteries)
        } catch let error as SQLiteError where error.isDiskFull {
            throw IngestionError.diskFull
        }
    }

    /// Re-reads grants and priorities (after a grant here or in another process).
    public func reloadAuthorization() throws {
        try pipeline.reloadAuthorization()
    }

    /// Grants `source` the `types` (or every type with `all`), then brings its held records of
    /// them in through the pipeline (`auth grant`, the dashboard's "allow").
    public func grant(source: String, types: [QuantityType], all: Bool = false) throws -> ReleaseSummary {
        let derived = try store.grant(source: source, types: types, all: all)
        try pipeline.reloadAuthorization()
        var release = try store.releaseHeld(source: source, types: types, all: all, through: pipeline)
        release.derivedFromStoredWeighings = derived.added
        return release
    }

    /// Grants each (source, type) pair without bringing held records in (`import --grant`, for
    /// the pairs of the export it reads), then re-reads the grants once.
    public func grantWithoutReleasing(_ pairs: [(source: String, type: QuantityType)]) throws {
        guard !pairs.isEmpty else { return }
        for pair in pairs { try store.grant(source: pair.source, types: [pair.type]) }
        try pipeline.reloadAuthorization()
    }

    /// Removes the records held longer than the retention period; per source how many.
    public func purgeExpiredPending(now: Date = Date()) throws -> [String: Int] {
        try store.purgeExpiredPending(now: now)
    }

    /// Ends the store's connection.
    public func close() {
        store.close()
    }
}

/// Why the front door stored nothing of a batch.
public enum IngestionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The disk is full: the batch's transaction was rolled back, nothing half-written.
    case diskFull

    public var description: String {
        switch self {
        case .diskFull: "the disk is full: the last batch was not stored (nothing half-written)"
        }
    }
}
