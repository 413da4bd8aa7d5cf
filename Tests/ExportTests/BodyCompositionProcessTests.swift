import Foundation
import Testing
import TestSupport

/// Issue 27 end to end with the built binary: the Mi Body Composition Scale capture replayed for
/// a person with a profile gives body fat, lean mass, water, muscle, bone, visceral fat and BMR
/// in `samples`, `body`, the openScale CSV and FHIR (LOINC); a formula change moves them through
/// the change feed. Values are the hand-computed ones of `BodyCompositionPipelineTests`.
@Suite(.serialized, .offCooperativePool) struct BodyCompositionProcessTests {
    static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AdapterTests/Captures/xiaomi-scale/mi-scale-v2.btsnoop").path
    let directory: URL
    let store: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-body-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = directory.appendingPathComponent("health.sqlite").path
    }

    private func ingestd(_ arguments: [String]) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", store])
    }

    @Test func aMiScaleWeighingGoesEverywhereAndFollowsTheFormula() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = try ingestd(["profile", "set", "--date-of-birth", "1994-06-01", "--biological-sex", "male",
                                   "--height", "180", "--unit", "cm"])
        #expect(profile.status == 0, "\(profile.stderr)")
        #expect(try ingestd(["people", "set", "me", "--body-composition", "vendor"]).status == 0)
        #expect(try ingestd(["auth", "grant", "xiaomi-scale", "--all"]).status == 0)
        let replay = try ingestd(["replay", Self.capture, "--tz", "Europe/Berlin"])
        #expect(replay.status == 0, "\(replay.stderr)")

        let fat = try ingestd(["samples", "bodyFatPercentage", "--json"])
        #expect(fat.stdout.contains("\"value\":0.2544"), "\(fat.stdout)")
        #expect(fat.stdout.contains("\"IngestBodyCompositionFormula\":\"xiaomi\""), "\(fat.stdout)")

        let body = try ingestd(["body", "--person", "me"])
        #expect(body.status == 0, "\(body.stderr)")
        for line in ["Body mass", "85.15 kg", "Body fat", "25.4 %", "derived: xiaomi v1", "Lean body mass", "63.5 kg",
                     "Body water", "51.2 %", "Skeletal muscle", "37.2 kg", "derived: standard v1", "Bone mass", "3.2 kg",
                     "Visceral fat rating", "11.4", "Basal metabolic rate", "1748 kcal/day", "impedance 428 Ω"] {
            #expect(body.stdout.contains(line), "\(line) missing from:\n\(body.stdout)")
        }

        let csv = directory.appendingPathComponent("scale.csv").path
        let export = try ingestd(["export", "--format", "csv", "--layout", "openscale", "--tz", "UTC", "--out", csv])
        #expect(export.status == 0, "\(export.stderr)")
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(whereSeparator: \.isNewline)
        #expect(rows.first == "dateTime,weight,fat,water,muscle,lbm,bone,visceralFat,waist,comment")
        // muscle is openScale's percentage of the weight: 37.15 / 85.15 = 43.63 %.
        #expect(rows.dropFirst().first == "15.01.2025 09:00,85.15,25.44,51.15,43.63,63.49,3.24,11.4,,ingestd xiaomi-scale", "\(rows)")

        let fhir = try ingestd(["export", "--format", "fhir"])
        #expect(fhir.status == 0, "\(fhir.stderr)")
        #expect(fhir.stdout.contains("\"code\":\"41982-0\"") && fhir.stdout.contains("\"code\":\"91557-9\""))
        let valid = try FHIRValidator.validate(fhir.stdout)
        #expect(valid.valid, "\(valid.complaint)")

        // Standard instead: the change feed shows 8 derived values deleted and 6 added.
        let before = try ingestd(["changes", "--json"]).lines.count
        let change = try ingestd(["people", "set", "me", "--body-composition", "standard"])
        #expect(change.status == 0, "\(change.stderr)")
        #expect(change.stderr.contains("8 derived values removed, 6 added"), "\(change.stderr)")
        let after = try ingestd(["changes", "--json"]).lines
        #expect(after.count == before - 8 + 6 + 8, "added rows replaced, tombstones listed: \(after.count) vs \(before)")
        #expect(try ingestd(["samples", "boneMass", "--json"]).stdout.isEmpty, "no standard equation for bone")
    }
}
