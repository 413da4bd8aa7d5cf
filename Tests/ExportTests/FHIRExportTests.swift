import Export
import Foundation
import HealthModel
import Testing

/// The FHIR export, checked by an independent R4 implementation (`FHIRValidator`) and against
/// this table of LOINC codes and UCUM units written out by hand.
@Suite(.serialized, .offCooperativePool) struct FHIRExportTests {
    /// uuid → (LOINC, UCUM code, value in that unit) the export must produce.
    static let expected: [UUID: (loinc: String, ucum: String, value: Double)] = [
        FixtureID.steps: ("55423-8", "{steps}", 4312),
        FixtureID.weight: ("29463-7", "kg", 72.35),
        FixtureID.fat: ("41982-0", "%", 21.5),
        FixtureID.bmi: ("39156-5", "kg/m2", 23.1),
        FixtureID.otherWeight: ("29463-7", "kg", 72.5747792),
        FixtureID.heartRate: ("8867-4", "/min", 61),
        FixtureID.temperature: ("8310-5", "Cel", 37),
        FixtureID.oxygen: ("59408-5", "%", 97),
        FixtureID.height: ("8302-2", "cm", 178),
        FixtureID.glucose: ("2339-0", "mg/dL", 99.085734),
    ]

    func exportedBundle() throws -> (text: String, summary: ExportSummary) {
        let temp = try mixedStore()
        var writer = FHIRBundleWriter()
        let text = render(try temp.records(), with: &writer)
        return (text, writer.summary)
    }

    @Test func everyEntryIsAValidR4ObservationWithTheExpectedCodeAndUnit() throws {
        let (text, summary) = try exportedBundle()
        let result = try FHIRValidator.validate(text)
        #expect(result.valid, "fhir.resources rejected the Bundle: \(result.complaint)")
        let header = try #require(result.lines.first)
        #expect(header["type"] as? String == "transaction")
        #expect(header["entries"] as? Int == 11, "10 samples and one blood pressure panel; flights climbed skipped")
        #expect(summary.written == 11)
        #expect(summary.skipped == [.noLOINCCode: ["HKQuantityTypeIdentifierFlightsClimbed": 1]])

        var seen: Set<UUID> = []
        for entry in result.lines.dropFirst() {
            let identifier = try #require((entry["identifier"] as? [[String]])?.first)
            #expect(identifier[0] == "urn:ietf:rfc:3986")
            let uuid = try #require(UUID(uuidString: String(identifier[1].dropFirst("urn:uuid:".count))))
            seen.insert(uuid)
            #expect(entry["resourceType"] as? String == "Observation")
            #expect(entry["status"] as? String == "final")
            #expect(entry["fullUrl"] as? String == identifier[1])
            #expect(entry["request"] as? [String] == ["POST", "Observation", "identifier=urn:ietf:rfc:3986|" + identifier[1]])
            let coding = try #require((entry["code"] as? [[String]])?.first)
            #expect(coding[0] == "http://loinc.org")
            if uuid == FixtureID.pressure {
                #expect(coding[1] == "85354-9")
                #expect(entry["value"] is NSNull)
                let components = try #require(entry["components"] as? [[Any]])
                let pairs = components.compactMap { component -> (String, Double, String)? in
                    guard let code = (component.first as? [String])?[1], let quantity = component.last as? [String: Any],
                          let value = quantity["value"] as? Double, let unit = quantity["code"] as? String else { return nil }
                    return (code, value, unit)
                }
                #expect(pairs.map(\.0) == ["8480-6", "8462-4"])
                #expect(pairs.map(\.1) == [128, 84])
                #expect(pairs.allSatisfy { $0.2 == "mm[Hg]" })
                #expect(entry["device"] as? String == "BLESmart_0000021F (Omron, HEM-7322T, 28:FF:B2:00:00:01)")
                continue
            }
            let want = try #require(Self.expected[uuid], "unexpected Observation \(uuid)")
            #expect(coding[1] == want.loinc, "\(uuid)")
            let quantity = try #require(entry["value"] as? [String: Any])
            #expect(quantity["system"] as? String == "http://unitsofmeasure.org")
            #expect(quantity["code"] as? String == want.ucum)
            #expect(quantity["unit"] as? String == want.ucum)
            let value = try #require(quantity["value"] as? Double)
            #expect(abs(value - want.value) < 1e-4, "\(uuid): \(value) vs \(want.value)")
        }
        #expect(seen == Set(Self.expected.keys).union([FixtureID.pressure]))
    }

    @Test func instantsHaveEffectiveDateTimeAndIntervalsAPeriod() throws {
        let result = try FHIRValidator.validate(try exportedBundle().text)
        #expect(result.valid, "\(result.complaint)")
        for entry in result.lines.dropFirst() {
            let identifier = (entry["identifier"] as? [[String]])?.first?[1] ?? ""
            if identifier == "urn:uuid:" + FixtureID.steps.uuidString.lowercased() {
                #expect(entry["effectivePeriod"] as? [String] == ["2026-11-29T06:00:00+00:00", "2026-11-29T07:00:00+00:00"])
                #expect(entry["effectiveDateTime"] is NSNull)
                #expect(entry["category"] as? [String] == ["activity"])
                #expect(entry["device"] as? String == "HJ-720IT (Omron, HJ-720IT)")
            } else {
                #expect(entry["effectivePeriod"] is NSNull)
                #expect(entry["effectiveDateTime"] is String)
            }
        }
    }

    @Test func theValidatorRejectsABrokenObservation() throws {
        // Without status (required in R4) and with a string where a decimal belongs: a validator that
        // accepted this would make the tests above worthless.
        var text = try exportedBundle().text
        text = text.replacingOccurrences(of: "\"status\":\"final\",", with: "")
        let result = try FHIRValidator.validate(text)
        #expect(!result.valid)
        #expect(result.complaint.contains("status"))
    }

    @Test func anEmptyStoreIsAnEmptyValidBundle() throws {
        var writer = FHIRBundleWriter()
        let text = render([], with: &writer)
        // JSON FHIR forbids empty arrays: no entries, no `entry`.
        #expect(text == "{\"resourceType\":\"Bundle\",\"type\":\"transaction\"}\n")
        let result = try FHIRValidator.validate(text)
        #expect(result.valid, "\(result.complaint)")
    }

    @Test func everyCodedTypeConvertsToItsUCUMUnit() throws {
        // The table's HKUnits must be compatible with each type's canonical unit (a typo would
        // silently fall back to the canonical unit and write a wrong number).
        for type in FHIRObservationCodes.exportedTypes {
            let code = try #require(FHIRObservationCodes.code(for: type))
            #expect(code.unit.isCompatible(with: type.canonicalUnit), "\(type.shortName): \(code.unit) vs \(type.canonicalUnit)")
        }
        #expect(FHIRObservationCodes.exportedTypes.count == 16, "15 and lean body mass (91557-9)")
        #expect(FHIRObservationCodes.code(for: .flightsClimbed) == nil)
        #expect(FHIRObservationCodes.code(for: .leanBodyMass)?.loinc == "91557-9")
        #expect(FHIRObservationCodes.code(for: .boneMass) == nil, "no LOINC code for the ingestd types")
        #expect(FHIRObservationCodes.code(for: .basalBodyTemperature) == nil)
    }
}

/// Device text is untrusted: whatever a device calls itself, the Observation stays valid R4.
@Suite(.serialized, .offCooperativePool) struct FHIRDeviceTextTests {
    @Test func controlCharactersAndBlankNamesStillMakeValidObservations() throws {
        let named = Device(name: "Scale\u{1}\u{7F}\tA ", manufacturer: "  ", model: "M\u{0}")
        let blank = Device(name: " \n ", localIdentifier: "AA:BB")
        let samples = [
            try quantitySample(FixtureID.uuid(50), .bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z", source: "s", device: named),
            try quantitySample(FixtureID.uuid(51), .bodyMass, 71, "kg", start: "2026-11-29T08:01:00Z", source: "s", device: blank),
        ]
        var writer = FHIRBundleWriter()
        let result = try FHIRValidator.validate(render(samples.map { .sample($0) }, with: &writer))
        #expect(result.valid, "\(result.complaint)")
        #expect(result.lines.dropFirst().map { $0["device"] as? String } == ["Scale\u{FFFD}\u{FFFD}\u{FFFD}A (M\u{FFFD})", "s (AA:BB)"])
    }
}
