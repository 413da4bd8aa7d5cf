import Testing
@testable import HealthModel

@Suite struct MetadataTests {
    @Test func typedKeysGoToTypedFields() throws {
        var metadata = Metadata()
        try metadata.set(.string("scale-42/2026-01-01T08:00:00Z"), forKey: "HKMetadataKeySyncIdentifier")
        try metadata.set(.number(3), forKey: "HKMetadataKeySyncVersion")
        try metadata.set(.string("A1"), forKey: "HKExternalUUID")
        try metadata.set(.bool(true), forKey: "HKWasUserEntered")
        try metadata.set(.string("Europe/Berlin"), forKey: "HKTimeZone")
        try metadata.set(.string("SN123"), forKey: "HKDeviceSerialNumber")
        try metadata.set(.number(2), forKey: "HKHeartRateSensorLocation")
        #expect(metadata.syncIdentifier == "scale-42/2026-01-01T08:00:00Z")
        #expect(metadata.syncVersion == 3)
        #expect(metadata.externalUUID == "A1")
        #expect(metadata.wasUserEntered == true)
        #expect(metadata.timeZone == "Europe/Berlin")
        #expect(metadata.deviceSerialNumber == "SN123")
        #expect(metadata.entries == ["HKHeartRateSensorLocation": .number(2)])
        #expect(metadata[MetadataKey.syncVersion] == .number(3))
        #expect(metadata["HKMetadataKeyTimeZone"] == .string("Europe/Berlin"))
    }

    @Test func longSpellingsAreAccepted() throws {
        var metadata = Metadata()
        try metadata.set(.string("A1"), forKey: "HKMetadataKeyExternalUUID")
        try metadata.set(.number(1), forKey: "HKMetadataKeyWasUserEntered")
        try metadata.set(.string("UTC"), forKey: "HKMetadataKeyTimeZone")
        try metadata.set(.string("SN9"), forKey: "HKMetadataKeyDeviceSerialNumber")
        #expect(metadata == Metadata(externalUUID: "A1", wasUserEntered: true, timeZone: "UTC", deviceSerialNumber: "SN9"))
        #expect(metadata.orderedEntries.map(\.key) == ["HKExternalUUID", "HKWasUserEntered", "HKTimeZone", "HKDeviceSerialNumber"])
    }

    @Test func wrongValueTypesAreRefused() {
        var metadata = Metadata()
        #expect(throws: MetadataError.wrongValueType(key: "HKMetadataKeySyncVersion", expected: "an integer", found: .number(1.5))) {
            try metadata.set(.number(1.5), forKey: "HKMetadataKeySyncVersion")
        }
        #expect(throws: MetadataError.wrongValueType(key: "HKMetadataKeySyncVersion", expected: "an integer", found: .string("1"))) {
            try metadata.set(.string("1"), forKey: "HKMetadataKeySyncVersion")
        }
        #expect(throws: MetadataError.wrongValueType(key: "HKWasUserEntered", expected: "a boolean", found: .number(2))) {
            try metadata.set(.number(2), forKey: "HKMetadataKeyWasUserEntered")
        }
        #expect(throws: MetadataError.wrongValueType(key: "HKMetadataKeySyncIdentifier", expected: "a string", found: .number(7))) {
            try metadata.set(.number(7), forKey: "HKMetadataKeySyncIdentifier")
        }
        #expect(throws: MetadataError.unknownTimeZone("Mars/Olympus_Mons")) {
            try metadata.set(.string("Mars/Olympus_Mons"), forKey: "HKTimeZone")
        }
        #expect(metadata.isEmpty)
    }

    @Test func orderedEntriesPutTypedKeysFirstAndSortTheRest() {
        let metadata = Metadata(
            syncIdentifier: "s", syncVersion: 1, wasUserEntered: false,
            entries: ["zeta": .bool(true), "HKFoodType": .string("Apple"), "alpha": .number(0.5),
                      // Shadowed by the typed field; never written twice.
                      "HKMetadataKeySyncVersion": .number(9), "HKMetadataKeyTimeZone": .string("UTC")])
        #expect(metadata.orderedEntries.map(\.key) == [
            "HKMetadataKeySyncIdentifier", "HKMetadataKeySyncVersion", "HKWasUserEntered", "HKFoodType", "alpha", "zeta",
        ])
        #expect(metadata.orderedEntries[1].value == .number(1))
    }

    @Test func emptiness() {
        #expect(Metadata().isEmpty)
        #expect(!Metadata(wasUserEntered: false).isEmpty)
        #expect(!Metadata(entries: ["x": .string("")]).isEmpty)
        // An entry under a typed key is shadowed by the (nil) typed field and never encoded.
        #expect(Metadata(entries: ["HKMetadataKeyTimeZone": .string("UTC")]).isEmpty)
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        // Copies share one box until one of them changes (copy on write); empty metadata
        // shares one box among all values.
        var first = Metadata()
        first.syncIdentifier = "a"
        first.entries["k"] = .number(1)
        #expect(Metadata().isEmpty && Metadata().syncIdentifier == nil && Metadata().entries.isEmpty)
        var second = first
        #expect(second.sharesStorage(with: first))
        second.entries["k"] = .number(2)
        second.syncVersion = 3
        #expect(!second.sharesStorage(with: first))
        #expect(first.entries == ["k": .number(1)] && first.syncVersion == nil)
        #expect(second.entries == ["k": .number(2)] && second.syncVersion == 3 && second.syncIdentifier == "a")
        #expect(first != second && first == Metadata(syncIdentifier: "a", entries: ["k": .number(1)]))
        #expect(Set([first, second, Metadata(syncIdentifier: "a", entries: ["k": .number(1)])]).count == 2)
    }

    @Test func spelledAlikeIsByteEquality() {
        let composed = Metadata(timeZone: "UTC", entries: ["name": .string("caf\u{E9}")])
        let decomposed = Metadata(timeZone: "UTC", entries: ["name": .string("cafe\u{301}")])
        // Canonically equal (==), but they encode to different bytes.
        #expect(composed == decomposed)
        #expect(!composed.isSpelledAlike(decomposed))
        #expect(composed.isSpelledAlike(Metadata(timeZone: "UTC", entries: ["name": .string("caf\u{E9}")])))
        #expect(!composed.isSpelledAlike(Metadata(timeZone: "UTC", entries: ["name": .number(1)])))
        #expect(Metadata().isSpelledAlike(Metadata()))
    }
}
