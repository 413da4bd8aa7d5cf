import Foundation
import Testing
import HealthModel
import Pipeline
@testable import SQLiteStore

/// The body-composition stage (issue 27) against a real store, fed with what the adapters decode
/// from real captures (`Tests/AdapterTests/Captures/*/…expected.jsonl`, each checked against its
/// capture by the adapter tests). Expected values are computed by hand from the published
/// equations (the arithmetic is in `BodyCompositionTests` and in the comments), rounded as the
/// stage stores them (0.01 % fat and water, 10 g, 0.1 rating, whole kcal).
@Suite struct BodyCompositionPipelineTests {
    let temp: TemporaryStore
    /// The Mi scale capture's weighing is 2025-01-15; the ingest clock is a day later.
    static let clock = ISO8601DateTime.date(from: "2025-01-16T12:00:00Z")!

    init() throws {
        temp = try TemporaryStore()
        for source in ["xiaomi-scale", "beurer-sanitas", "yunmai-scale", "qn-gatt-scale", "xiaomi-mibeacon"] {
            try temp.store.grant(source: source, types: [], all: true)
        }
    }

    static func capture(_ folder: String, _ file: String) throws -> [HealthRecord] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AdapterTests/Captures/\(folder)/\(file)")
        let decoder = HealthRecordDecoder(defaultSource: "test")
        // The expected files give every sample the zero uuid; a device's samples have their own.
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line in
            guard case .sample(var sample) = try decoder.decodeLine(line) else { throw CocoaError(.coderReadCorrupt) }
            sample.uuid = UUID()
            return .sample(sample)
        }
    }

    /// A man of 30 on the day of the Mi capture, 180 cm.
    static let man = UserProfile(dateOfBirth: CalendarDate(year: 1994, month: 6, day: 1), biologicalSex: .male,
                                 height: Quantity(value: 1.8, unit: .meter))
    /// A woman of 45 on the day of the Beurer and Yunmai captures, 165 cm.
    static let woman = UserProfile(dateOfBirth: CalendarDate(year: 1979, month: 6, day: 1), biologicalSex: .female,
                                   height: Quantity(value: 1.65, unit: .meter))

    private func me() throws -> Person { try temp.store.person(named: HealthStore.firstPersonName) }

    /// value and formula of every stored sample of `type`.
    private func stored(_ type: QuantityType) throws -> [(Double, String?)] {
        try temp.store.samples(type: type).map { sample in
            guard case .string(let formula)? = sample.metadata[MetadataKey.bodyCompositionFormula] else { return (sample.quantity.value, nil) }
            return (sample.quantity.value, formula)
        }
    }

    private func expectStored(_ type: QuantityType, _ value: Double, _ formula: String?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try stored(type)
        #expect(found.count == 1, "\(type.shortName): \(found)", sourceLocation: sourceLocation)
        #expect(found.first?.0 == value && found.first?.1 == formula, "\(type.shortName): \(found)", sourceLocation: sourceLocation)
    }

    @Test func aMiScaleWeighingWithTheVendorFormulaDerivesEveryValue() throws {
        try temp.store.setProfile(Self.man, of: try me())
        try temp.store.setBodyComposition(.vendor, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(report.totals.written == 9, "the weighing and 8 derived values")
        // Xiaomi (BodyCompositionTests.xiaomiFormulaForAMan): fat 1 − 63.48552 / 85.15 = 25.44 %.
        try expectStored(.bodyFatPercentage, 0.2544, "xiaomi")
        try expectStored(.leanBodyMass, 63.49, "xiaomi")
        // 85.15 / 1.8² = 26.28.
        try expectStored(.bodyMassIndex, 26.28, "xiaomi")
        try expectStored(.bodyWaterPercentage, 0.5115, "xiaomi")
        try expectStored(.boneMass, 3.24, "xiaomi")
        try expectStored(.visceralFatRating, 11.4, "xiaomi")
        try expectStored(.basalMetabolicRate, 1748, "xiaomi")
        // Xiaomi's formula has no skeletal muscle: Janssen's, 0.401·180²/428 + 3.825 − 0.071·30 + 5.102 = 37.153 kg.
        try expectStored(.skeletalMuscleMass, 37.15, "standard")
        let fat = try #require(try temp.store.samples(type: .bodyFatPercentage).first)
        #expect(fat.metadata[MetadataKey.impedance] == .number(428))
        #expect(fat.metadata[MetadataKey.bodyCompositionFormulaVersion] == .number(1))
        #expect(fat.metadata.syncIdentifier == "50:FB:19:1B:B5:DC/1970-05-04T15:02:01/17030", "the weighing's sync identity")
        #expect(fat.source == "xiaomi-scale" && fat.device?.localIdentifier == "50:FB:19:1B:B5:DC")

        // The same capture again: nothing new, nothing duplicated.
        let again = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(again.totals.written == 0 && again.totals.duplicate == 9)
    }

    /// The stage finds the weighing among the batch's records by its type's slot: behind a
    /// correlation (two members) and other samples, it is still the one derived from.
    @Test func aWeighingBehindACorrelationAndOtherSamplesDerivesItsValues() throws {
        try temp.store.setProfile(Self.man, of: try me())
        try temp.store.grant(source: "gatt-blood-pressure", types: [], all: true)
        let at = Self.clock.addingTimeInterval(-3600)
        let systolic = QuantitySample(type: .bloodPressureSystolic, quantity: Quantity(value: 121, unit: .millimeterOfMercury),
                                      start: at, end: at, source: "gatt-blood-pressure")
        let diastolic = QuantitySample(type: .bloodPressureDiastolic, quantity: Quantity(value: 79, unit: .millimeterOfMercury),
                                       start: at, end: at, source: "gatt-blood-pressure")
        let pressure = HealthRecord.correlation(Correlation(type: .bloodPressure, start: at, end: at, objects: [systolic, diastolic],
                                                            source: "gatt-blood-pressure"))
        let pulse = HealthRecord.sample(QuantitySample(type: .heartRate, quantity: Quantity(value: 61, unit: QuantityType.heartRate.canonicalUnit),
                                                       start: at, end: at, source: "gatt-blood-pressure"))
        let batch = [pressure, pulse] + (try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(batch)
        #expect(report.totals.written == 2 + 1 + 7, "the pressure's two members, the pulse, the weighing and 6 derived values")
        try expectStored(.bodyFatPercentage, 0.187, "standard")
        try expectStored(.leanBodyMass, 69.22, "standard")
    }

    @Test func theStandardFormulaIsTheDefault() throws {
        try temp.store.setProfile(Self.man, of: try me())
        _ = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        // Sun 2003, men: H²/R = 180²/428 = 75.70093; FFM = −10.68 + 0.65·75.70093 + 0.26·85.15 + 0.02·428 = 69.2246 kg.
        try expectStored(.leanBodyMass, 69.22, "standard")
        // Fat (85.15 − 69.2246) / 85.15 = 18.70 %.
        try expectStored(.bodyFatPercentage, 0.187, "standard")
        // TBW 1.20 + 0.45·75.70093 + 0.18·85.15 = 50.5924 L × 0.9934 / 85.15 = 59.02 %.
        try expectStored(.bodyWaterPercentage, 0.5902, "standard")
        // Katch–McArdle 370 + 21.6·69.2246 = 1865.25.
        try expectStored(.basalMetabolicRate, 1865, "standard")
        // No standard equation for bone or visceral fat.
        #expect(try temp.store.samples(type: .boneMass).isEmpty && temp.store.samples(type: .visceralFatRating).isEmpty)
    }

    @Test func aScaleThatSendsItsOwnBodyFatKeepsItAndTheRestIsDerived() throws {
        try temp.store.setProfile(Self.woman, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("beurer-sanitas", "download.expected.jsonl"))
        #expect(report.rejections.isEmpty, "\(report.examples)")
        // The Beurer's own fat and BMI, not derived ones beside them.
        try expectStored(.bodyFatPercentage, 0.235, nil)
        try expectStored(.bodyMassIndex, 24.3, nil)
        // Sun 2003, women: H²/R = 165²/512 = 53.17383; FFM = −9.53 + 0.69·53.17383 + 0.17·75.3 + 0.02·512 = 50.2009 kg.
        try expectStored(.leanBodyMass, 50.2, "standard")
        // TBW 3.75 + 0.45·53.17383 + 0.11·75.3 = 35.9612 L × 0.9934 / 75.3 = 47.44 %.
        try expectStored(.bodyWaterPercentage, 0.4744, "standard")
        // Janssen: 0.401·53.17383 − 0.071·45 + 5.102 = 23.2297 kg.
        try expectStored(.skeletalMuscleMass, 23.23, "standard")
        // 370 + 21.6·50.2009 = 1454.34.
        try expectStored(.basalMetabolicRate, 1454, "standard")
    }

    @Test func aYunmaiWeighingDerivesWhatTheScaleDidNotSend() throws {
        try temp.store.setProfile(Self.woman, of: try me())
        try temp.store.setBodyComposition(.vendor, of: try me())
        _ = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("yunmai-scale", "weighing.expected.jsonl"))
        try expectStored(.bodyFatPercentage, 0.235, nil)
        // Yunmai (hand-computed): r = √((512 − 100) / 100) = 2.02978; fat = 1.5·75.3 / 1.65² + 0.08·45 − 7.4 + r = 39.7174 %.
        // BMI 75.3 / 1.65² = 27.66; lean 75.3 · 60.2826 % = 45.39 kg; water 60.2826 · 0.726 = 43.77 %;
        // skeletal muscle 75.3 · 60.2826 · 0.53 % = 24.06 kg; bone 75.3 · 40.389 % · 4/7 · 0.34 · 0.45 − 0.05 = 2.61 kg;
        // visceral (39.7174 − 35) / 1.1 + 9.5 = 13.8.
        try expectStored(.bodyMassIndex, 27.66, "yunmai")
        try expectStored(.leanBodyMass, 45.39, "yunmai")
        try expectStored(.bodyWaterPercentage, 0.4377, "yunmai")
        try expectStored(.skeletalMuscleMass, 24.06, "yunmai")
        try expectStored(.boneMass, 2.61, "yunmai")
        try expectStored(.visceralFatRating, 13.8, "yunmai")
        // No published Yunmai BMR: the standard one, 370 + 21.6 · 50.2009 (Sun 2003, as for the Beurer weighing).
        try expectStored(.basalMetabolicRate, 1454, "standard")
    }

    /// The change feed after `anchor`: (added or deleted, type short name).
    private func feed(after anchor: Int64) throws -> [(Bool, String)] {
        try temp.store.changes(since: anchor).entries.map { entry in
            switch entry {
            case .added(let sample, _): (true, sample.type.shortName)
            case .deleted(_, let type, _): (false, QuantityType.named(type)?.shortName ?? type)
            }
        }
    }

    @Test func aProfileChangeReplacesTheDerivedValuesInTheChangeFeed() throws {
        try temp.store.setProfile(Self.man, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        let anchor = try #require(report.anchor)
        let before = try temp.store.samples(type: .leanBodyMass)
        var taller = Self.man
        taller.height = Quantity(value: 1.9, unit: .meter)
        let recomputed = try temp.store.setProfile(taller, of: try me())
        #expect(recomputed.weighings == 1 && recomputed.removed == 6 && recomputed.added == 6)
        let changes = try feed(after: anchor)
        let derived = ["bodyFatPercentage", "leanBodyMass", "bodyMassIndex", "bodyWaterPercentage", "skeletalMuscleMass", "basalMetabolicRate"]
        #expect(changes.filter { !$0.0 }.map(\.1).sorted() == derived.sorted(), "one tombstone per old derived value")
        #expect(changes.filter { $0.0 }.map(\.1).sorted() == derived.sorted(), "one new sample per derived value")
        #expect(!changes.contains { $0.1 == "bodyMass" }, "the weighing itself does not move")
        // Sun 2003 with 190 cm: H²/R = 84.34579; FFM = −10.68 + 0.65·84.34579 + 22.139 + 8.56 = 74.8436 kg.
        try expectStored(.leanBodyMass, 74.84, "standard")
        #expect(try temp.store.samples(type: .leanBodyMass).map(\.uuid) != before.map(\.uuid))

        // --body-composition none: the derived values go, nothing replaces them.
        let none = try temp.store.setBodyComposition(.none, of: try me())
        #expect(none.removed == 6 && none.added == 0)
        #expect(try temp.store.samples(type: .leanBodyMass).isEmpty)
        try expectStored(.bodyMass, 85.15, nil)
    }

    @Test func reassigningTheWeighingRecomputesItForItsNewPerson() throws {
        let alice = try temp.store.addPerson(name: "alice", profile: Self.woman, bodyMassKilograms: 60)
        let bob = try temp.store.addPerson(name: "bob", profile: Self.man, bodyMassKilograms: 84)
        try temp.store.removePerson(named: HealthStore.firstPersonName, samples: .refuse)
        // 85.15 kg is within 10 % of bob's 84 kg only.
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(report.unassigned == 0)
        #expect(try temp.store.samples(type: .leanBodyMass, person: .person(bob.id)).map(\.quantity.value) == [69.22])
        let anchor = try #require(report.anchor)
        let weighing = try #require(try temp.store.samples(type: .bodyMass).first)
        #expect(try temp.store.assign([weighing.uuid], to: alice) == 1)
        let changes = try feed(after: anchor)
        // The weighing moves (delete + add), bob's 6 derived values become tombstones, alice gets 6 new ones.
        #expect(changes.filter { !$0.0 }.count == 7 && changes.filter { $0.0 }.count == 7)
        #expect(try temp.store.samples(type: .leanBodyMass, person: .person(bob.id)).isEmpty)
        // Sun 2003 for alice (woman, 45, 165 cm): H²/R = 165²/428 = 63.6098; FFM = −9.53 + 43.8908 + 14.4755 + 8.56 = 57.3963 kg.
        #expect(try temp.store.samples(type: .leanBodyMass, person: .person(alice.id)).map(\.quantity.value) == [57.4])
        let tombstones = try temp.store.changes(since: anchor, person: .person(bob.id)).entries.filter {
            if case .deleted = $0 { true } else { false }
        }
        #expect(tombstones.count == 7, "bob's feed shows his weighing and its derived values leaving")
    }

    @Test func aDeviceFormulaWinsOverThePersonsAndFollowsChanges() throws {
        try temp.store.setProfile(Self.man, of: try me())
        // The person chose none; the scale (its BLE address, any case) says vendor.
        try temp.store.setBodyComposition(.none, of: try me())
        try temp.store.setBodyComposition(.vendor, ofDevice: "50:fb:19:1b:b5:dc")
        _ = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        try expectStored(.bodyFatPercentage, 0.2544, "xiaomi")
        // Back to the person's choice: the derived values go, in the change feed.
        let back = try temp.store.setBodyComposition(nil, ofDevice: "50:FB:19:1B:B5:DC")
        #expect(back.removed == 8 && back.added == 0)
        #expect(try temp.store.samples(type: .bodyFatPercentage).isEmpty)
        // Standard for the device: recomputed at once.
        let standard = try temp.store.setBodyComposition(.standard, ofDevice: "50:FB:19:1B:B5:DC")
        #expect(standard.added == 6)
        try expectStored(.leanBodyMass, 69.22, "standard")
    }

    @Test func aNewerSyncVersionOfTheWeighingReplacesItsDerivedValues() throws {
        try temp.store.setProfile(Self.man, of: try me())
        let pipeline = try Pipeline(store: temp.store, now: { Self.clock })
        var records = try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl")
        _ = try pipeline.ingest(records)
        guard case .sample(var weighing) = records[0] else { Issue.record("no weighing"); return }
        weighing.uuid = UUID()
        weighing.quantity = Quantity(value: 85.35, unit: weighing.quantity.unit)
        weighing.metadata.syncVersion = 3
        records[0] = .sample(weighing)
        let report = try pipeline.ingest(records)
        #expect(report.totals.replaced == 7, "the weighing and its 6 derived values")
        #expect(try temp.store.samples(type: .bodyMass).map(\.quantity.value) == [85.35])
        #expect(try temp.store.samples(type: .leanBodyMass).count == 1)
    }

    @Test func aNewerSyncVersionThatDerivesNothingRemovesTheOldDerivedValues() throws {
        try temp.store.setProfile(Self.man, of: try me())
        let pipeline = try Pipeline(store: temp.store, now: { Self.clock })
        var records = try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl")
        let first = try pipeline.ingest(records)
        guard case .sample(var weighing) = records[0] else { Issue.record("no weighing"); return }
        weighing.uuid = UUID()
        weighing.metadata.syncVersion = 3
        weighing.metadata.entries[MetadataKey.impedance] = .number(65535)
        records[0] = .sample(weighing)
        let report = try pipeline.ingest(records)
        #expect(report.totals.replaced == 1, "the weighing alone")
        #expect(try temp.store.samples(type: .leanBodyMass).isEmpty, "no value of the old version is left")
        let deleted = try temp.store.changes(since: try #require(first.anchor)).entries.filter { if case .deleted = $0 { true } else { false } }
        #expect(deleted.count == 7, "the old weighing and its 6 derived values")
    }

    @Test(arguments: [
        ("height 0", UserProfile(dateOfBirth: CalendarDate(year: 1994, month: 6, day: 1), biologicalSex: .male,
                                 height: Quantity(value: 0, unit: .meter)), "not-derived-height-outside-formula"),
        ("born after the weighing", UserProfile(dateOfBirth: CalendarDate(year: 2026, month: 1, day: 1), biologicalSex: .male,
                                                height: Quantity(value: 1.8, unit: .meter)), "not-derived-born-after-weighing"),
        ("no sex", UserProfile(dateOfBirth: CalendarDate(year: 1994, month: 6, day: 1), height: Quantity(value: 1.8, unit: .meter)),
         "not-derived-profile-incomplete"),
        ("a child", UserProfile(dateOfBirth: CalendarDate(year: 2015, month: 1, day: 1), biologicalSex: .male,
                                height: Quantity(value: 1.3, unit: .meter)), "not-derived-age-outside-formula"),
    ])
    func aHostileProfileDerivesNothingAndSaysWhy(_ name: String, _ profile: UserProfile, _ reason: String) throws {
        try temp.store.setProfile(profile, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(report.totals.written == 1, "\(name): the weighing alone")
        let key = RejectionKey(source: "xiaomi-scale", type: QuantityType.bodyFatPercentage.identifier, reason: reason)
        #expect(report.rejections[key] == 1, "\(name): \(report.rejections)")
        #expect(try temp.store.rejections(since: Date(timeIntervalSince1970: 0))[key] == 1, "\(name): counted in the store for 'ingestd status'")
        #expect(report.examples[key]?.isEmpty == false)
    }

    @Test(arguments: [0.0, 65535.0])
    func aNoContactImpedanceDerivesNothingAndSaysWhy(_ ohms: Double) throws {
        try temp.store.setProfile(Self.man, of: try me())
        var records = try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl")
        guard case .sample(var weighing) = records[0] else { Issue.record("no weighing"); return }
        weighing.metadata.entries[MetadataKey.impedance] = .number(ohms)
        records[0] = .sample(weighing)
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(records)
        #expect(report.totals.written == 1)
        let key = RejectionKey(source: "xiaomi-scale", type: QuantityType.bodyFatPercentage.identifier,
                               reason: "not-derived-impedance-outside-formula")
        #expect(report.rejections[key] == 1)
        #expect(report.examples[key]?.contains("impedance \(Int(ohms)) Ω is outside") == true, "\(report.examples)")
    }

    @Test func aTypeNotGrantedToTheScaleIsNotDerived() throws {
        try temp.store.revoke(source: "xiaomi-scale", types: [], all: true)
        try temp.store.grant(source: "xiaomi-scale", types: [.bodyMass, .bodyFatPercentage])
        try temp.store.setProfile(Self.man, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(report.totals.written == 2, "the weighing and its body fat")
        #expect(try temp.store.samples(type: .leanBodyMass).isEmpty)
        #expect(report.rejections[RejectionKey(source: "xiaomi-scale", type: QuantityType.bodyFatPercentage.identifier,
                                               reason: "not-derived-not-authorized")] == 1)
    }

    @Test func anImportedBodyFatIsAStoredValueNotADerivedOne() throws {
        try temp.store.setProfile(Self.man, of: try me())
        try temp.store.grant(source: "Health", types: [], all: true)
        let fat = try sample(.bodyFatPercentage, 0.2, "%", start: "2025-01-15T08:00:00Z", source: "Health")
        let lean = try sample(.leanBodyMass, 60, "kg", start: "2025-01-15T08:00:00Z", source: "Health")
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest([.sample(fat), .sample(lean)])
        #expect(report.totals.written == 2)
        #expect(try temp.store.samples(type: .bodyFatPercentage).map { BodyCompositionStage.isDerived($0) } == [false])
        #expect(try temp.store.samples(type: .leanBodyMass).map(\.quantity.value) == [60])
    }

    @Test func aQNWeighingWithTheVendorFormulaUsesTheTrisaEquations() throws {
        try temp.store.setProfile(Self.woman, of: try me())
        try temp.store.setBodyComposition(.vendor, of: try me())
        _ = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("qn-gatt-scale", "es30m.expected.jsonl"))
        // MoreBodyCompositionFormulasTests.qnFormulaConvertsTheRawResistanceFirst (60 kg, 509 Ω, woman 45, 165 cm).
        try expectStored(.bodyFatPercentage, 0.2514, "qn")
        try expectStored(.bodyWaterPercentage, 0.5513, "qn")
        try expectStored(.skeletalMuscleMass, 18.07, "qn")
        try expectStored(.boneMass, 4.2, "qn")
        try expectStored(.leanBodyMass, 44.92, "qn")
        try expectStored(.bodyMassIndex, 22.04, "qn")
        // No QN BMR: Sun 2003, women, 165²/509 = 53.48723; FFM = −9.53 + 36.90619 + 10.2 + 10.18 = 47.7562; 370 + 21.6·FFM = 1401.5.
        try expectStored(.basalMetabolicRate, 1402, "standard")
    }

    @Test func anS400WeighingWithTheVendorFormulaUsesBothImpedances() throws {
        try temp.store.setProfile(Self.man, of: try me())
        try temp.store.setBodyComposition(.vendor, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-mibeacon", "s400.expected.jsonl"))
        #expect(report.rejections.isEmpty, "\(report.examples)")
        // MoreBodyCompositionFormulasTests.s400WithTheRealCapture (man of 30, 180 cm).
        try expectStored(.bodyFatPercentage, 0.2101, "xiaomi-s400")
        try expectStored(.leanBodyMass, 55.22, "xiaomi-s400")
        try expectStored(.bodyWaterPercentage, 0.5782, "xiaomi-s400")
        try expectStored(.skeletalMuscleMass, 30.53, "xiaomi-s400")
        try expectStored(.boneMass, 2.96, "xiaomi-s400")
        try expectStored(.visceralFatRating, 8.4, "xiaomi-s400")
        try expectStored(.basalMetabolicRate, 1563, "xiaomi-s400")
        let fat = try #require(try temp.store.samples(type: .bodyFatPercentage).first)
        #expect(fat.metadata[MetadataKey.impedance] == .number(543.2))
        #expect(fat.metadata[MetadataKey.highFrequencyImpedance] == .number(497.6))
    }

    @Test func aWeighingWithoutImpedanceDerivesEstimatesOnlyWhenChosen() throws {
        try temp.store.setProfile(Self.man, of: try me())
        let pipeline = try Pipeline(store: temp.store, now: { Self.clock })
        // The S400 weighed in socks: no impedance. standard derives nothing from it.
        let first = try pipeline.ingest(try Self.capture("xiaomi-mibeacon", "s400-socks.expected.jsonl"))
        #expect(first.totals.written == 1 && first.rejections.isEmpty)
        let anchor = try #require(first.anchor)
        // estimate: derived at once (74.7 kg, man of 30, 180 cm).
        let chosen = try temp.store.setBodyComposition(.estimate, of: try me())
        #expect(chosen.weighings == 1 && chosen.added == 4 && chosen.removed == 0)
        // Gallagher: BMI 23.05556; 64.5 − 36.781 + 2.37 − 16.4 + 1.5 + 1.6916 = 16.88 %.
        try expectStored(.bodyFatPercentage, 0.1688, "estimate")
        // Boer 0.407·74.7 + 0.267·180 − 19.2 = 59.26 kg; Mifflin-St Jeor 747 + 1125 − 150 + 5 = 1727.
        try expectStored(.leanBodyMass, 59.26, "estimate")
        try expectStored(.basalMetabolicRate, 1727, "estimate")
        try expectStored(.bodyMassIndex, 23.06, "estimate")
        #expect(try temp.store.samples(type: .bodyWaterPercentage).isEmpty)
        let fat = try #require(try temp.store.samples(type: .bodyFatPercentage).first)
        #expect(fat.metadata[MetadataKey.impedance] == nil && fat.metadata[MetadataKey.bodyCompositionFormulaVersion] == .number(1))
        // A second socks weighing comes in derived by the pipeline.
        var records = try Self.capture("xiaomi-mibeacon", "s400-socks.expected.jsonl")
        guard case .sample(var weighing) = records[0] else { Issue.record("no weighing"); return }
        weighing.metadata.syncIdentifier = "04:AE:47:67:C6:7C/114/1736935200"
        weighing.start = weighing.start.addingTimeInterval(3600)
        weighing.end = weighing.start
        records[0] = .sample(weighing)
        #expect(try pipeline.ingest(records).totals.written == 5)
        // Back to standard: the estimates leave through the change feed.
        let back = try temp.store.setBodyComposition(.standard, of: try me())
        #expect(back.removed == 8 && back.added == 0)
        #expect(try temp.store.samples(type: .bodyFatPercentage).isEmpty)
        #expect(try temp.store.changes(since: anchor).entries.filter { if case .deleted = $0 { true } else { false } }.count == 8)
    }

    @Test func aHeldWeighingBroughtInByAGrantDerivesOnce() throws {
        let source = "xiaomi-scale"
        try temp.store.revoke(source: source, types: [], all: true)
        try temp.store.setProfile(Self.man, of: try me())
        let held = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(held.totals.written == 0 && held.totals.held == 1)
        try temp.store.grant(source: source, types: [], all: true)
        let release = try temp.store.releaseHeld(source: source, types: [], all: true,
                                                 through: try Pipeline(store: temp.store, now: { Self.clock }))
        #expect(release.released == 1 && release.report.totals.written == 7, "the weighing and its 6 derived values")
        try expectStored(.leanBodyMass, 69.22, "standard")
        // Granting again derives nothing more.
        #expect(try temp.store.grant(source: source, types: [], all: true).added == 0)
        try expectStored(.leanBodyMass, 69.22, "standard")
    }

    @Test func aGrantOfTheDerivedTypesAfterTheWeighingDerivesThemThenOnce() throws {
        let source = "xiaomi-scale"
        try temp.store.revoke(source: source, types: [], all: true)
        try temp.store.grant(source: source, types: [.bodyMass])
        try temp.store.setProfile(Self.man, of: try me())
        let report = try Pipeline(store: temp.store, now: { Self.clock }).ingest(try Self.capture("xiaomi-scale", "mi-scale-v2.expected.jsonl"))
        #expect(report.totals.written == 1)
        let anchor = try #require(report.anchor)
        #expect(try temp.store.samples(type: .leanBodyMass).isEmpty)
        // Two of the types now: those two appear.
        let some = try temp.store.grant(source: source, types: [.bodyFatPercentage, .leanBodyMass])
        #expect(some.added == 2 && some.removed == 0)
        try expectStored(.bodyFatPercentage, 0.187, "standard")
        try expectStored(.leanBodyMass, 69.22, "standard")
        // Every type: the other four; the first two stay as they are.
        let fat = try temp.store.samples(type: .bodyFatPercentage).map(\.uuid)
        let rest = try temp.store.grant(source: source, types: [], all: true)
        #expect(rest.added == 4 && rest.removed == 0)
        #expect(try temp.store.samples(type: .bodyFatPercentage).map(\.uuid) == fat)
        try expectStored(.basalMetabolicRate, 1865, "standard")
        let changes = try feed(after: anchor)
        #expect(changes.allSatisfy(\.0) && changes.count == 6, "six additions, no tombstone: \(changes)")
        // Again: nothing.
        #expect(try temp.store.grant(source: source, types: [], all: true).added == 0)
        #expect(try feed(after: anchor).count == 6)
    }
}
