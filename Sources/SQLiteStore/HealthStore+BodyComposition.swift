import Foundation
import HealthModel
import Pipeline

extension HealthStore {
    /// Sets the formula `person`'s weighings are derived with, and recomputes them.
    @discardableResult
    public func setBodyComposition(_ choice: BodyCompositionChoice, of person: Person) throws -> BodyCompositionRecomputation {
        try db.transaction(.immediate) {
            let update = try db.prepare("UPDATE people SET body_composition = ? WHERE id = ?")
            try update.bind(choice.rawValue, at: 1)
            try update.bind(person.id, at: 2)
            try update.execute()
            return try recomputeBodyComposition(ofPerson: person.id)
        }
    }

    /// Sets the formula of the weighings of the device `identifier` (a BLE address, serial number
    /// or local identifier; nil: the person's choice again), and recomputes everybody's weighings.
    @discardableResult
    public func setBodyComposition(_ choice: BodyCompositionChoice?, ofDevice identifier: String) throws -> BodyCompositionRecomputation {
        let trimmed = identifier.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw PeopleError.emptyDeviceIdentifier }
        return try db.transaction(.immediate) {
            if let choice {
                let upsert = try db.prepare("INSERT OR REPLACE INTO device_body_composition(device, label, formula) VALUES (?, ?, ?)")
                try upsert.bind(Household.deviceKey(trimmed), at: 1)
                try upsert.bind(trimmed, at: 2)
                try upsert.bind(choice.rawValue, at: 3)
                try upsert.execute()
            } else {
                let delete = try db.prepare("DELETE FROM device_body_composition WHERE device = ?")
                try delete.bind(Household.deviceKey(trimmed), at: 1)
                try delete.execute()
            }
            var total = BodyCompositionRecomputation()
            for person in try people() { total.merge(try recomputeBodyComposition(ofPerson: person.id)) }
            return total
        }
    }

    /// Device key → formula, as `ingestd devices set` stored them.
    func deviceBodyComposition() throws -> [String: BodyCompositionChoice] {
        var result: [String: BodyCompositionChoice] = [:]
        try db.cachedStatement("SELECT device, formula FROM device_body_composition").forEachRow { row in
            if let device = row.string(at: 0), let choice = row.string(at: 1).flatMap(BodyCompositionChoice.init(rawValue:)) {
                result[device] = choice
            }
        }
        return result
    }

    /// Recomputes the derived body composition of every weighing of person `id` (after a
    /// profile or formula change), inside the caller's transaction.
    func recomputeBodyComposition(ofPerson id: Int64) throws -> BodyCompositionRecomputation {
        try recomputeBodyComposition(of: try weighings(person: id).map { ($0, id) })
    }

    /// The body masses of person `id` (of `source`) that derive or may have derived body
    /// composition: those with an impedance, and the others too when anybody chose `estimate`
    /// or estimates are stored (an `estimate` choice just left).
    private func weighings(person id: Int64, source: String? = nil) throws -> [QuantitySample] {
        let all = try samples(type: .bodyMass, source: source, person: .person(id))
        if try deviceBodyComposition().values.contains(.estimate) || people().contains(where: { $0.bodyComposition == .estimate })
            || hasEstimates() {
            return all
        }
        return all.filter { $0.metadata[MetadataKey.impedance] != nil }
    }

    /// Whether any derived sample was computed without an impedance (by `estimate`).
    private func hasEstimates() throws -> Bool {
        let derivedTypes = try BodyCompositionStage.derivedTypes.map { try typeID($0.identifier) }
        let probe = try db.cachedStatement("""
            SELECT 1 FROM samples WHERE type IN (\(derivedTypes.map(String.init).joined(separator: ",")))
              AND json_extract(metadata, '$.\(MetadataKey.bodyCompositionFormula)') = ?1 LIMIT 1
            """)
        try probe.bind(EstimateBodyComposition().name, at: 1)
        return try probe.firstRow { _ in true } != nil
    }

    /// After `source` was granted derived types: derives the values of its stored weighings that
    /// were refused for want of the grant, leaving every value already there (the weighing's
    /// own, and those derived before) as it is, so each appears once. Inside the caller's transaction.
    func deriveMissingBodyComposition(source: String) throws -> BodyCompositionRecomputation {
        var weighings: [(sample: QuantitySample, person: Int64)] = []
        for person in try people() {
            weighings += try self.weighings(person: person.id, source: source).map { ($0, person.id) }
        }
        return try recomputeBodyComposition(of: weighings, keepingDerived: true)
    }

    /// Recomputes the derived body composition of the stored samples `ids` that are weighings
    /// (after they moved to `person`), inside the caller's transaction.
    func recomputeBodyComposition(ofSampleIDs ids: [Int64], person: Int64) throws -> BodyCompositionRecomputation {
        guard let bodyMass = typeIDs[QuantityType.bodyMass.identifier], !ids.isEmpty else { return BodyCompositionRecomputation() }
        let read = try db.cachedStatement("""
            SELECT \(Self.sampleColumns) FROM samples x JOIN sources s ON s.id = x.source
            LEFT JOIN devices d ON d.id = x.device WHERE x.id = ? AND x.type = ?
            """)
        var weighings: [(sample: QuantitySample, person: Int64)] = []
        for id in ids {
            try read.bind(id, at: 1)
            try read.bind(bodyMass, at: 2)
            if let found = try read.firstRow({ try readSample($0, type: .bodyMass) }), let weighing = found {
                weighings.append((weighing, person))
            }
        }
        return try recomputeBodyComposition(of: weighings)
    }

    /// After a newer sync version of a weighing replaced the stored one: the derived samples of
    /// older versions that the new one did not replace (it derived fewer, or nothing) are
    /// removed, each a tombstone. Inside the write's transaction.
    func removeStaleDerivedSamples(_ batch: [NormalizedRecord], outcomes: [[WriteOutcome]]) throws {
        // Most batches replace nothing: one comparison per record before any sample is touched.
        for (index, outcome) in outcomes.enumerated() where outcome.first == .replaced && index < batch.count {
            guard case .sample(let weighing) = batch[index], weighing.type == .bodyMass, let sync = weighing.metadata.syncIdentifier,
                  let version = weighing.metadata.syncVersion else { continue }
            let derivedTypes = try BodyCompositionStage.derivedTypes.map { try typeID($0.identifier) }
            let stale = try db.cachedStatement("""
                SELECT x.id, x.uuid, x.type, x.source, x.person FROM samples x JOIN sources s ON s.id = x.source
                WHERE s.name = ?1 AND x.sync_id = ?2 AND x.sync_version < ?3
                  AND x.type IN (\(derivedTypes.map(String.init).joined(separator: ",")))
                  AND json_extract(x.metadata, '$.\(MetadataKey.bodyCompositionFormula)') IS NOT NULL
                """)
            try stale.bind(weighing.source, at: 1)
            try stale.bind(sync, at: 2)
            try stale.bind(Int64(version), at: 3)
            let doomed = try stale.mapRows { ($0.int64(at: 0), $0.bytes(at: 1) ?? [], $0.int64(at: 2), $0.int64(at: 3),
                                              $0.isNull(at: 4) ? nil : Optional($0.int64(at: 4))) }
            let delete = try db.cachedStatement("DELETE FROM samples WHERE id = ?")
            for (id, uuid, type, source, person) in doomed {
                try delete.bind(id, at: 1)
                try delete.execute()
                try writeTombstone(anchor: try nextAnchor(), uuid: uuid, type: type, source: source, person: person,
                                   at: Date().timeIntervalSince1970)
            }
        }
    }

    /// Removes the derived samples of each weighing (tombstones) and derives them again for the
    /// weighing's person with the current profile and formula; a (source, type) not granted
    /// gets no derived sample. With `keepingDerived`, the derived samples there stay and only the
    /// types missing are derived. Inside the caller's transaction; logs one commit for `watch`.
    func recomputeBodyComposition(of weighings: [(sample: QuantitySample, person: Int64)],
                                  keepingDerived: Bool = false) throws -> BodyCompositionRecomputation {
        var result = BodyCompositionRecomputation()
        guard !weighings.isEmpty else { return result }
        let everybody = try people()
        let household = Household(people: everybody, deviceBodyComposition: try deviceBodyComposition())
        let policy = try loadAuthorization()
        let now = Date()
        var writer = try BatchWriter(store: self, now: now)
        let derivedTypes = try BodyCompositionStage.derivedTypes.map { try typeID($0.identifier) }
        let inList = derivedTypes.map(String.init).joined(separator: ",")
        let bySync = try db.prepare("""
            SELECT x.id, x.uuid, x.type, x.source, x.person, json_extract(x.metadata, '$.\(MetadataKey.bodyCompositionFormula)')
            FROM samples x JOIN sources s ON s.id = x.source
            WHERE s.name = ?1 AND x.sync_id = ?2 AND x.type IN (\(inList))
            """)
        let byTime = try db.prepare("""
            SELECT x.id, x.uuid, x.type, x.source, x.person, json_extract(x.metadata, '$.\(MetadataKey.bodyCompositionFormula)')
            FROM samples x JOIN sources s ON s.id = x.source
            WHERE s.name = ?1 AND x.sync_id IS NULL AND x.start_time = ?2 AND x.end_time = ?3
              AND x.device_local_id IS ?4 AND x.type IN (\(inList))
            """)
        let delete = try db.cachedStatement("DELETE FROM samples WHERE id = ?")
        for (weighing, personID) in weighings {
            guard let person = everybody.first(where: { $0.id == personID }) else { continue }
            result.weighings += 1
            let companions: Statement
            if let sync = weighing.metadata.syncIdentifier {
                companions = bySync
                try companions.bind(weighing.source, at: 1)
                try companions.bind(sync, at: 2)
            } else {
                companions = byTime
                try companions.bind(weighing.source, at: 1)
                try companions.bind(weighing.start.timeIntervalSince1970, at: 2)
                try companions.bind(weighing.end.timeIntervalSince1970, at: 3)
                if let local = weighing.device?.localIdentifier { try companions.bind(local, at: 4) } else { try companions.bindNull(at: 4) }
            }
            var present: Set<QuantityType> = []
            var doomed: [(id: Int64, uuid: [UInt8], type: Int64, source: Int64, person: Int64?)] = []
            try companions.forEachRow { row in
                let type = row.int64(at: 2)
                if row.isNull(at: 5) || keepingDerived {
                    if let index = derivedTypes.firstIndex(of: type) { present.insert(BodyCompositionStage.derivedTypes[index]) }
                } else {
                    doomed.append((row.int64(at: 0), row.bytes(at: 1) ?? [], type, row.int64(at: 3),
                                   row.isNull(at: 4) ? nil : row.int64(at: 4)))
                }
            }
            for old in doomed {
                try delete.bind(old.id, at: 1)
                try delete.execute()
                try writeTombstone(anchor: try nextAnchor(), uuid: old.uuid, type: old.type, source: old.source,
                                   person: old.person, at: now.timeIntervalSince1970)
                result.removed += 1
            }
            switch BodyCompositionStage.derive(weighing: weighing, person: person, present: present,
                                               deviceChoice: household.bodyComposition(ofDeviceOf: weighing)) {
            case .success(let derived)?:
                var refused = false
                for sample in derived {
                    guard policy.decision(source: sample.source, type: sample.type) == .granted else {
                        refused = true
                        continue
                    }
                    if try writer.insert(sample, correlation: nil, person: personID) == .written { result.added += 1 }
                }
                if refused, let type = derived.first(where: { policy.decision(source: $0.source, type: $0.type) != .granted })?.type {
                    result.count(.notAuthorized(type: type.shortName))
                }
            case .failure(let skip)?:
                result.count(skip)
            case nil:
                break
            }
        }
        _ = try recordCommit(writer.counts, anchor: try currentAnchor(), now: now)
        return result
    }
}

extension BodyCompositionRecomputation {
    mutating func merge(_ other: BodyCompositionRecomputation) {
        weighings += other.weighings
        removed += other.removed
        added += other.added
        for (key, n) in other.skipped { skipped[key, default: 0] += n }
        for (key, text) in other.examples where examples[key] == nil { examples[key] = text }
    }

    mutating func count(_ skip: BodyCompositionSkip) {
        skipped[skip.key, default: 0] += 1
        if examples[skip.key] == nil { examples[skip.key] = skip.description }
    }
}
