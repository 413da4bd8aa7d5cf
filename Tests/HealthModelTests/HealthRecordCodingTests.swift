import Foundation
import Testing
@testable import HealthModel

// Foundation also declares `Unit` (NSUnit).
fileprivate typealias Unit = HealthModel.Unit

@Suite struct HealthRecordCodingTests {
    let decoder = HealthRecordDecoder(defaultSource: "stdin")
    let encoder = HealthRecordEncoder()

    /// The sample line of DESIGN.md "Command line", with its placeholders filled in.
    let designExample = #"{"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","type":"HKQuantityTypeIdentifierBodyMass","value":72.35,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","source":"gatt-weight-scale","device":{"name":"MIBFS","manufacturer":"Huami","model":"XMTZC05HM","localIdentifier":"C8:47:8C:00:11:22"},"metadata":{"HKMetadataKeySyncIdentifier":"C8:47:8C:00:11:22/2026-01-01T08:00:00Z","HKMetadataKeySyncVersion":1}}"#

    func sample(from line: String) throws -> QuantitySample {
        guard case .sample(let sample) = try decoder.decodeLine(line) else {
            Issue.record("not a sample: \(line)")
            throw RecordDecodingError.emptyLine
        }
        return sample
    }

    func decodingError(_ line: String) -> RecordDecodingError? {
        do {
            _ = try decoder.decodeLine(line)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Samples

    @Test func decodesTheDesignExample() throws {
        let sample = try sample(from: designExample)
        #expect(sample.uuid == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(sample.type == .bodyMass)
        #expect(sample.quantity == Quantity(value: 72.35, unit: try Unit(from: "kg")))
        #expect(sample.start == Date(timeIntervalSince1970: 1_767_254_400))
        #expect(sample.end == sample.start)
        #expect(sample.source == "gatt-weight-scale")
        #expect(sample.device == Device(name: "MIBFS", manufacturer: "Huami", model: "XMTZC05HM", localIdentifier: "C8:47:8C:00:11:22"))
        #expect(sample.metadata == Metadata(syncIdentifier: "C8:47:8C:00:11:22/2026-01-01T08:00:00Z", syncVersion: 1))
    }

    @Test func reencodesTheDesignExampleByteForByte() throws {
        #expect(encoder.encode(try decoder.decodeLine(designExample)) == designExample)
        // The design's literal placeholders (non-ASCII) survive as well.
        let withPlaceholders = designExample
            .replacingOccurrences(of: "MIBFS", with: "…")
            .replacingOccurrences(of: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", with: "00000000-0000-0000-0000-000000000001")
        #expect(encoder.encode(try decoder.decodeLine(withPlaceholders)) == withPlaceholders)
    }

    @Test func encodesAMinimalSampleWithoutDeviceOrMetadata() throws {
        let sample = QuantitySample(
            uuid: try #require(UUID(uuidString: "7D9B0A46-5C1B-4E0E-9E43-2C1E1D7A3B10")), type: .stepCount,
            quantity: Quantity(value: 1200, unit: .count), start: Date(timeIntervalSince1970: 1_767_254_400),
            end: Date(timeIntervalSince1970: 1_767_255_300.25), source: "omron-pedometer")
        let line = encoder.encode(sample)
        #expect(line == #"{"uuid":"7D9B0A46-5C1B-4E0E-9E43-2C1E1D7A3B10","type":"HKQuantityTypeIdentifierStepCount","value":1200,"unit":"count","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:15:00.25Z","source":"omron-pedometer"}"#)
        #expect(try decoder.decodeLine(line) == .sample(sample))
    }

    @Test func valuesUseTheShortestRoundTripText() throws {
        let cases: [(Double, String)] = [
            (72.35, "72.35"), (72, "72"), (0, "0"), (-3, "-3"), (0.97, "0.97"), (0.1, "0.1"), (1e-7, "1e-07"),
            (123_456_789_012, "123456789012"), (1.2000000000000002, "1.2000000000000002"), (1e300, "1e+300"),
        ]
        for (value, text) in cases {
            let sample = QuantitySample(
                type: .bodyTemperature, quantity: Quantity(value: value, unit: QuantityType.bodyTemperature.canonicalUnit),
                start: .init(timeIntervalSince1970: 0), end: .init(timeIntervalSince1970: 0), source: "s")
            let line = encoder.encode(sample)
            #expect(line.contains(#""value":\#(text),"unit""#), "\(value) -> \(line)")
            #expect(try decoder.decodeLine(line) == .sample(sample), "\(value)")
        }
    }

    @Test func aSourceWithAControlCharacterIsRefused() throws {
        let line = #"{"type":"stepCount","value":1,"unit":"count","start":"2026-11-01T10:00:00Z","end":"2026-11-01T10:00:00Z","source":"a\u0000b"}"#
        #expect(throws: RecordDecodingError.controlCharacterInSource(field: "source", scalar: 0)) { try decoder.decodeLine(line) }
    }

    @Test func anEmptySyncIdentifierIsRefusedAndASyncVersionIsKeptExactly() throws {
        let base = #"{"type":"stepCount","value":1,"unit":"count","start":"2026-11-01T10:00:00Z","end":"2026-11-01T10:00:00Z","#
        #expect(throws: RecordDecodingError.invalidMetadata(field: "metadata.HKMetadataKeySyncIdentifier", error: .emptySyncIdentifier)) {
            try decoder.decodeLine(base + #""metadata":{"HKMetadataKeySyncIdentifier":""}}"#)
        }
        let record = try decoder.decodeLine(base + #""metadata":{"HKMetadataKeySyncIdentifier":"r","HKMetadataKeySyncVersion":9223372036854775807}}"#)
        let sample = try #require(record.samples.first)
        #expect(sample.metadata.syncVersion == Int.max)
        #expect(encoder.encode(sample).contains(#""HKMetadataKeySyncVersion":9223372036854775807"#))
    }

    @Test func nonFiniteValuesAreWrittenAsNullAndRefusedOnInput() throws {
        let sample = QuantitySample(
            type: .bodyMass, quantity: Quantity(value: .nan, unit: QuantityType.bodyMass.canonicalUnit),
            start: .init(timeIntervalSince1970: 0), end: .init(timeIntervalSince1970: 0), source: "s")
        let line = encoder.encode(sample)
        #expect(line.contains(#""value":null,"#))
        #expect(throws: RecordDecodingError.missingField("value")) { try decoder.decodeLine(line) }
    }

    @Test func roundTripsEveryFieldAndAwkwardStrings() throws {
        let awkward = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} nul \u{00} é 😀 \u{2028}"
        let sample = QuantitySample(
            type: .bloodGlucose, quantity: Quantity(value: 5.4, unit: try Unit(from: "mmol<180.15588000005408>/L")),
            start: Date(timeIntervalSince1970: 1_767_254_400.123456), end: Date(timeIntervalSince1970: 1_767_254_400.123456),
            // A source id may not hold control characters (issue 10); everything else round-trips.
            source: "quote \" backslash \\ slash / é 😀 \u{2028}",
            device: Device(name: awkward, manufacturer: "Roche", model: "Accu-Chek Guide", hardwareVersion: "1",
                           firmwareVersion: "2.0", softwareVersion: "3", localIdentifier: "id", udiDeviceIdentifier: "(01)1"),
            metadata: Metadata(syncIdentifier: awkward, syncVersion: 7, externalUUID: "x", wasUserEntered: false,
                               timeZone: "Europe/Berlin", deviceSerialNumber: "SN",
                               entries: ["custom": .number(2.5), "flag": .bool(true), awkward: .string(awkward)]))
        let line = encoder.encode(sample)
        #expect(!line.contains("\n"))
        #expect(line.contains(#"quote \" backslash \\ slash / newline \n tab \t bell \u0007 nul \u0000 é 😀"#))
        #expect(try decoder.decodeLine(line) == .sample(sample))
        #expect(try decoder.decodeLine(Data(line.utf8)) == .sample(sample))
        #expect(encoder.encode(try decoder.decodeLine(line)) == line)
    }

    @Test func acceptsShortNamesOffsetsAndEscapesOnInput() throws {
        let line = #"  {"type":"bodyTemperature","value":98.6,"unit":"degF","start":"2026-01-01T09:00:00.5+01:00","end":"2026-01-01T08:00:00.5Z","source":"temp\u00e9r","metadata":{"HKMetadataKeyWasUserEntered":1}}"# + "\r\n"
        let fixedUUID = try #require(UUID(uuidString: "11111111-2222-3333-4444-555555555555"))
        let decoder = HealthRecordDecoder(defaultSource: "stdin", makeUUID: { fixedUUID })
        guard case .sample(let sample) = try decoder.decodeLine(line) else {
            Issue.record("not a sample")
            return
        }
        #expect(sample.uuid == fixedUUID)
        #expect(sample.type == .bodyTemperature)
        #expect(sample.quantity.unit == (try Unit(from: "degF")))
        #expect(sample.start == Date(timeIntervalSince1970: 1_767_254_400.5))
        #expect(sample.source == "tempér")
        #expect(sample.metadata.wasUserEntered == true)
        #expect(encoder.encode(sample) == #"{"uuid":"11111111-2222-3333-4444-555555555555","type":"HKQuantityTypeIdentifierBodyTemperature","value":98.6,"unit":"degF","start":"2026-01-01T08:00:00.5Z","end":"2026-01-01T08:00:00.5Z","source":"tempér","metadata":{"HKWasUserEntered":true}}"#)
    }

    @Test func missingSourceAndUUIDUseDefaults() throws {
        let line = #"{"type":"HKQuantityTypeIdentifierStepCount","value":10,"unit":"count","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:01:00Z"}"#
        let first = try sample(from: line)
        let second = try sample(from: line)
        #expect(first.source == "stdin")
        #expect(first.uuid != second.uuid)
        // null counts as absent for optional fields.
        let withNulls = #"{"uuid":null,"type":"stepCount","value":10,"unit":"count","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:01:00Z","source":null,"device":null,"metadata":null}"#
        let third = try sample(from: withNulls)
        #expect(third.source == "stdin")
        #expect(third.device == nil)
        #expect(third.metadata.isEmpty)
    }

    @Test func endBeforeStartIsNotADecodingError() throws {
        let line = #"{"type":"bodyMass","value":72,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T07:00:00Z"}"#
        let sample = try sample(from: line)
        #expect(sample.end < sample.start)
    }

    // MARK: Correlations

    @Test func roundTripsABloodPressureCorrelation() throws {
        let line = #"{"correlation":"HKCorrelationTypeIdentifierBloodPressure","uuid":"0E7C3A34-8E2B-4E2F-9C59-3A6A4B1F8D21","start":"2026-01-01T07:30:00Z","end":"2026-01-01T07:30:00Z","source":"gatt-blood-pressure","device":{"manufacturer":"OMRON","model":"BP7250"},"metadata":{"HKMetadataKeySyncIdentifier":"omron/17","HKMetadataKeySyncVersion":1},"objects":[{"uuid":"A2B2C7A4-1D3E-4F50-8A6B-7C8D9E0F1A2B","type":"HKQuantityTypeIdentifierBloodPressureSystolic","value":121,"unit":"mmHg","start":"2026-01-01T07:30:00Z","end":"2026-01-01T07:30:00Z","source":"gatt-blood-pressure"},{"uuid":"B3C4D5E6-F708-4192-A3B4-C5D6E7F80912","type":"HKQuantityTypeIdentifierBloodPressureDiastolic","value":79,"unit":"mmHg","start":"2026-01-01T07:30:00Z","end":"2026-01-01T07:30:00Z","source":"gatt-blood-pressure"}]}"#
        let record = try decoder.decodeLine(line)
        guard case .correlation(let correlation) = record else {
            Issue.record("not a correlation")
            return
        }
        #expect(correlation.type == .bloodPressure)
        #expect(correlation.objects.map(\.type) == [.bloodPressureSystolic, .bloodPressureDiastolic])
        #expect(correlation.objects.map(\.quantity.value) == [121, 79])
        #expect(correlation.device == Device(manufacturer: "OMRON", model: "BP7250"))
        #expect(correlation.metadata.syncIdentifier == "omron/17")
        try correlation.validate()
        #expect(record.samples.count == 2)
        #expect(encoder.encode(record) == line)
    }

    @Test func correlationMembersInheritTheCorrelationSource() throws {
        let line = #"{"correlation":"food","start":"2026-01-01T12:00:00Z","end":"2026-01-01T12:00:00Z","source":"food-log","metadata":{"HKFoodType":"Porridge"},"objects":[{"type":"dietaryEnergyConsumed","value":250,"unit":"kcal","start":"2026-01-01T12:00:00Z","end":"2026-01-01T12:00:00Z"},{"type":"dietaryProtein","value":9.5,"unit":"g","start":"2026-01-01T12:00:00Z","end":"2026-01-01T12:00:00Z","source":"other"}]}"#
        guard case .correlation(let correlation) = try decoder.decodeLine(line) else {
            Issue.record("not a correlation")
            return
        }
        #expect(correlation.type == .food)
        #expect(correlation.metadata.entries[MetadataKey.foodType] == .string("Porridge"))
        #expect(correlation.objects.map(\.source) == ["food-log", "other"])
        try correlation.validate()
        let reencoded = encoder.encode(correlation)
        #expect(try decoder.decodeLine(reencoded) == .correlation(correlation))
    }

    // MARK: Errors

    let validFields = #""type":"bodyMass","value":72,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z""#

    @Test func missingFieldsAreNamed() {
        #expect(decodingError(#"{"type":"bodyMass","value":72,"unit":"kg","end":"2026-01-01T08:00:00Z"}"#) == .missingField("start"))
        #expect(decodingError(#"{"type":"bodyMass","unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#) == .missingField("value"))
        #expect(decodingError(#"{"value":72,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#) == .missingField("type"))
        #expect(decodingError(#"{"type":"bodyMass","value":72,"start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#) == .missingField("unit"))
        #expect(RecordDecodingError.missingField("start").description == #"missing field "start""#)
    }

    @Test func unknownTypeIsNamed() throws {
        let error = try #require(decodingError(#"{"type":"HKQuantityTypeIdentifierFoo","value":1,"unit":"count","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#))
        #expect(error == .unknownType(field: "type", name: "HKQuantityTypeIdentifierFoo"))
        #expect(error.description == #"unknown type "HKQuantityTypeIdentifierFoo""#)
    }

    @Test func nonNumericOrInfiniteValues() throws {
        let asString = try #require(decodingError(#"{"type":"bodyMass","value":"72","unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#))
        #expect(asString == .notAFiniteNumber(field: "value", found: #""72""#))
        #expect(asString.description == #"value is not a finite number: "72""#)
        #expect(decodingError(#"{"type":"bodyMass","value":1e999,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#)
            == .notAFiniteNumber(field: "value", found: "1e999"))
        #expect(decodingError(#"{"type":"bodyMass","value":null,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#)
            == .missingField("value"))
    }

    @Test func badUnitWrapsTheUnitError() throws {
        let error = try #require(decodingError(#"{"type":"bodyMass","value":72,"unit":"kg/","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#))
        guard case .invalidUnit(let field, let unit, let unitError) = error else {
            Issue.record("wrong error \(error)")
            return
        }
        #expect(field == "unit")
        #expect(unit == "kg/")
        #expect(throws: unitError) { try Unit(from: "kg/") }
        #expect(error.description.hasPrefix(#"unit "kg/" is not a valid unit: "#))
    }

    @Test func badDatesUUIDsAndSources() {
        #expect(decodingError(#"{"type":"bodyMass","value":72,"unit":"kg","start":"2026-01-01 08:00","end":"2026-01-01T08:00:00Z"}"#)
            == .invalidDate(field: "start", text: "2026-01-01 08:00"))
        #expect(decodingError(#"{"type":"bodyMass","value":72,"unit":"kg","start":"2026-01-01T08:00:00Z","end":1767254400}"#)
            == .wrongFieldType(field: "end", expected: "a string", found: "1767254400"))
        #expect(decodingError(#"{"uuid":"not-a-uuid",\#(validFields)}"#) == .invalidUUID(field: "uuid", text: "not-a-uuid"))
        #expect(decodingError(#"{\#(validFields),"source":""}"#) == .emptySource(field: "source"))
    }

    @Test func unknownFieldsAreRefused() {
        #expect(decodingError(#"{\#(validFields),"strat":"2026-01-01T08:00:00Z"}"#) == .unknownField("strat"))
        #expect(decodingError(#"{\#(validFields),"device":{"serial":"1"}}"#) == .unknownField("device.serial"))
        #expect(decodingError(#"{\#(validFields),"device":"scale"}"#)
            == .wrongFieldType(field: "device", expected: "an object", found: #""scale""#))
    }

    @Test func badMetadataIsNamed() {
        #expect(decodingError(#"{\#(validFields),"metadata":{"HKMetadataKeySyncVersion":1.5}}"#)
            == .invalidMetadata(field: "metadata.HKMetadataKeySyncVersion",
                                error: .wrongValueType(key: "HKMetadataKeySyncVersion", expected: "an integer", found: .number(1.5))))
        #expect(decodingError(#"{\#(validFields),"metadata":{"nested":{"a":1}}}"#)
            == .unsupportedMetadataValue(field: "metadata.nested", found: "an object"))
        #expect(decodingError(#"{\#(validFields),"metadata":{"HKTimeZone":"Nowhere/Town"}}"#)
            == .invalidMetadata(field: "metadata.HKTimeZone", error: .unknownTimeZone("Nowhere/Town")))
    }

    @Test func malformedLines() throws {
        #expect(decodingError("") == .emptyLine)
        #expect(decodingError(" \n") == .emptyLine)
        #expect(decodingError("[1,2]") == .notAnObject(found: "an array"))
        #expect(decodingError(#"{"type":"bodyMass","type":"stepCount"}"#) == .invalidJSON(offset: 19, reason: #"duplicate key "type""#))
        #expect(decodingError(#"{"type":"bodyMass",}"#) == .invalidJSON(offset: 19, reason: "expected a string key"))
        #expect(decodingError(#"{"type":"bodyMass"} x"#) == .invalidJSON(offset: 20, reason: "unexpected text after the JSON value"))
        #expect(decodingError(#"{"value":01}"#) == .invalidJSON(offset: 10, reason: "leading zero in a number"))
        #expect(decodingError(#"{"source":"\ud800"}"#) == .invalidJSON(offset: 11, reason: "unpaired surrogate escape"))
        #expect(decodingError("{\"source\":\"a\u{01}\"}") == .invalidJSON(offset: 12, reason: "control character in a string"))
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        guard case .invalidJSON(_, let reason) = try #require(decodingError(deep)) else {
            Issue.record("deep nesting accepted")
            return
        }
        #expect(reason.hasPrefix("nesting deeper"))
    }

    @Test func invalidUTF8InData() throws {
        var bytes = Array(#"{"source":"x"}"#.utf8)
        bytes[11] = 0xFF
        #expect(throws: RecordDecodingError.invalidJSON(offset: 11, reason: "invalid UTF-8 in a string")) {
            try decoder.decodeLine(Data(bytes))
        }
    }

    @Test func badCorrelations() {
        let header = #""start":"2026-01-01T07:30:00Z","end":"2026-01-01T07:30:00Z""#
        #expect(decodingError(#"{"correlation":"HKCorrelationTypeIdentifierSleep",\#(header),"objects":[]}"#)
            == .unknownCorrelationType("HKCorrelationTypeIdentifierSleep"))
        #expect(decodingError(#"{"correlation":"bloodPressure",\#(header)}"#) == .missingField("objects"))
        #expect(decodingError(#"{"correlation":"bloodPressure",\#(header),"objects":{}}"#)
            == .wrongFieldType(field: "objects", expected: "an array", found: "{…}"))
        #expect(decodingError(#"{"correlation":"bloodPressure",\#(header),"objects":[{\#(validFields)},{"type":"bloodPressureDiastolic","value":79,"unit":"mmHg","end":"2026-01-01T07:30:00Z"}]}"#)
            == .missingField("objects[1].start"))
        #expect(decodingError(#"{"correlation":"bloodPressure",\#(header),"objects":[7]}"#)
            == .wrongFieldType(field: "objects[0]", expected: "an object", found: "7"))
        #expect(decodingError(#"{"correlation":"bloodPressure",\#(header),"objects":[{\#(validFields),"unit":"kg"}]}"#)
            == .invalidJSON(offset: 204, reason: #"duplicate key "unit""#))
    }

    @Test func separateDeviceAndMetadataDocuments() throws {
        let device = Device(name: "Scale", localIdentifier: "C8:47:8C:00:11:22")
        let deviceJSON = encoder.encode(device)
        #expect(deviceJSON == #"{"name":"Scale","localIdentifier":"C8:47:8C:00:11:22"}"#)
        #expect(try decoder.decodeDevice(deviceJSON) == device)
        let metadata = Metadata(syncIdentifier: "x", syncVersion: 2, entries: ["HKFoodType": .string("Apple")])
        let metadataJSON = encoder.encode(metadata)
        #expect(metadataJSON == #"{"HKMetadataKeySyncIdentifier":"x","HKMetadataKeySyncVersion":2,"HKFoodType":"Apple"}"#)
        #expect(try decoder.decodeMetadata(metadataJSON) == metadata)
        #expect(encoder.encode(Metadata()) == "{}")
    }
}
