import AdapterKit
import BuiltinAdapters
import ExternalAdapterProtocol
import Foundation
import TestSupport
import Testing
import Transport
import XiaomiScale

@Suite("ExternalDescriptorCodec")
struct ExternalDescriptorCodecTests {
    /// The example of the issue, with both match kinds.
    static let example = """
        {"protocol":1,"id":"acme-scale","name":"Acme scale","version":"2.1",\
        "produces":["HKQuantityTypeIdentifierBodyMass","heartRate"],\
        "matches":[{"ble":{"serviceUUIDs":["181D"],"companyIDs":[343],"namePattern":"^MI"}},\
        {"usb":{"vendorID":"0fcf","productID":"1008"}}]}
        """

    @Test("The protocol's example reads into a descriptor with both matches; short type names are accepted")
    func readsExample() throws {
        let descriptor = try ExternalDescriptorCodec.decode(Self.example, expectedID: "acme-scale")
        #expect(descriptor.id == "acme-scale")
        #expect(descriptor.name == "Acme scale")
        #expect(descriptor.version == "2.1")
        #expect(descriptor.summary == "")
        #expect(descriptor.produces == [.bodyMass, .heartRate])
        #expect(descriptor.matches == [
            .ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181D)], companyIDs: [343], namePattern: "^MI")),
            .usb(USBMatch(vendorID: 0x0FCF, productID: 0x1008)),
        ])
        let miScale = BLEDeviceTraits(address: try #require(BLEAddress("50:FB:19:1B:B5:DC")), name: "MI_SCALE",
                                      serviceUUIDs: [BLEUUID(0x181D)], companyIDs: [343])
        #expect(descriptor.matches(miScale))
        #expect(descriptor.matches(USBDeviceDescription(vendorID: 0x0FCF, productID: 0x1008)))
        #expect(!descriptor.matches(USBDeviceDescription(vendorID: 0x0FCF, productID: 0x1009)))
    }

    @Test("A built-in adapter's descriptor survives encode and decode")
    func roundTrip() throws {
        let original = XiaomiScaleAdapter().descriptor
        let text = ExternalDescriptorCodec.encode(original)
        #expect(text.hasPrefix("{\"protocol\":1,\"id\":\"xiaomi-scale\",\"name\":\"Xiaomi Mi scales\""))
        #expect(!text.contains("\n"))
        #expect(try ExternalDescriptorCodec.decode(text, expectedID: "xiaomi-scale") == original)
    }

    @Test("Every built-in adapter's descriptor, with how it reads and its models, survives encode and decode")
    func builtInDescriptorsRoundTrip() throws {
        for original in BuiltinAdapters.bluetooth.map(\.descriptor) + BuiltinAdapters.usb.map(\.descriptor) {
            let text = ExternalDescriptorCodec.encode(original)
            #expect(text.contains("\"how\":") && text.contains("\"models\":[{\"maker\":"), "\(text)")
            #expect(try ExternalDescriptorCodec.decode(text, expectedID: original.id) == original)
        }
    }

    @Test("A USB match without product id and a 128-bit UUID round-trip")
    func roundTripUSBWildcardAndLongUUID() throws {
        let uuid = try #require(BLEUUID("0000FE95-0000-1000-8000-00805F9B34FB"))
        let custom = try #require(BLEUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        let original = AdapterDescriptor(id: "acme", name: "Acme", version: "1", summary: "s",
                                         matches: [.usb(USBMatch(vendorID: 0x1234)), .ble(BLEMatch(serviceUUIDs: [uuid, custom]))],
                                         produces: [.stepCount])
        let text = ExternalDescriptorCodec.encode(original)
        #expect(text.contains("{\"usb\":{\"vendorID\":\"1234\"}}"))
        #expect(text.contains("\"6E400001-B5A3-F393-E0A9-E50E24DCCA9E\""))
        #expect(try ExternalDescriptorCodec.decode(text, expectedID: nil) == original)
    }

    static let invalid: [(json: String, error: ExternalDescriptorError)] = [
        ("Usage: frobnicate", .notJSON("not valid JSON")),
        ("[1,2]", .notJSON("expected a JSON object")),
        (#"{"id":"acme"}"#, .unsupportedProtocol(nil)),
        (#"{"protocol":3,"id":"acme"}"#, .unsupportedProtocol(3)),
        (#"{"protocol":true,"id":"acme"}"#, .unsupportedProtocol(nil)),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}}],"colour":"red"}"#,
         .unknownField("colour")),
        (#"{"protocol":1,"id":"Acme_Scale","name":"A","version":"1","produces":["bodyMass"],"matches":[]}"#, .invalidID("Acme_Scale")),
        (#"{"protocol":1,"id":"other","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}}]}"#,
         .idMismatch(expected: "acme", found: "other")),
        (#"{"protocol":1,"id":"acme","version":"1","produces":["bodyMass"],"matches":[]}"#, .missingField("name")),
        (#"{"protocol":1,"id":"acme","name":"","version":"1","produces":["bodyMass"],"matches":[]}"#, .emptyField("name")),
        (#"{"protocol":1,"id":"acme","name":"A","version":1,"produces":["bodyMass"],"matches":[]}"#,
         .wrongFieldType(field: "version", expected: "a string")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["unicornCount"],"matches":[]}"#, .unknownType("unicornCount")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":[],"matches":[]}"#, .producesNothing),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[]}"#, .noMatches),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"]}"#, .missingField("matches")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"serviceUUID":["181D"]}}]}"#,
         .invalidMatch(index: 0, reason: "unknown field \"ble.serviceUUID\"")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{}}]}"#,
         .invalidMatch(index: 0, reason: "ble must be at least one of serviceUUIDs, companyIDs, namePattern, serviceDataUUIDs")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"},"usb":{"vendorID":"0fcf"}}]}"#,
         .invalidMatch(index: 0, reason: "entry must be an object with exactly one of \"ble\", \"usb\"")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}},{"bluetooth":{}}]}"#,
         .invalidMatch(index: 1, reason: "unknown field \"bluetooth\"")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"serviceUUIDs":["18 1D"]}}]}"#,
         .invalidServiceUUID("18 1D")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"companyIDs":[70000]}}]}"#,
         .invalidCompanyID(70000)),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^(MI"}}]}"#,
         .invalidNamePattern("^(MI")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"usb":{"vendorID":"fcf"}}]}"#,
         .invalidUSBID(field: "vendorID", text: "fcf")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"usb":{"productID":"1008"}}]}"#,
         .invalidMatch(index: 0, reason: "missing field \"usb.vendorID\"")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}}],"models":[{"maker":"Acme","name":"S1","offers":"weight","reads":["heartRate"]}]}"#,
         .invalidModel(index: 0, reason: "reads heartRate, which produces does not list")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}}],"models":[{"maker":"Acme","offers":"weight","reads":[]}]}"#,
         .invalidModel(index: 0, reason: "missing field \"name\"")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}}],"models":[{"maker":"Acme","name":"S1","offers":"weight","reads":[],"colour":"red"}]}"#,
         .invalidModel(index: 0, reason: "unknown field \"colour\"")),
        (#"{"protocol":1,"id":"acme","name":"A","version":"1","produces":["bodyMass"],"matches":[{"ble":{"namePattern":"^A"}}],"models":[{"maker":"Acme","name":"S1","offers":"weight","reads":["unicornCount"]}]}"#,
         .invalidModel(index: 0, reason: "reads unknown type \"unicornCount\"")),
    ]

    @Test("Invalid descriptors are refused with the field at fault", arguments: invalid.indices)
    func refusesInvalid(_ index: Int) {
        let (json, expected) = Self.invalid[index]
        #expect(throws: expected) { try ExternalDescriptorCodec.decode(json, expectedID: "acme") }
    }

    @Test("Error texts read as a reason for 'broken: …'")
    func descriptions() {
        #expect(ExternalDescriptorError.unsupportedProtocol(3).description == "speaks protocol 3, this ingestd speaks protocols 1 to 2")
        #expect(ExternalDescriptorError.idMismatch(expected: "acme", found: "other").description
                == "id \"other\" does not match the file name's \"acme\"")
    }
}

@Suite("ExternalAdapterProtocol")
struct ExternalAdapterProtocolTests {
    @Test("Adapter ids are kebab-case", arguments: [
        ("xiaomi-scale", true), ("a", true), ("acme-bp-2", true), ("0", true),
        ("", false), ("-a", false), ("a-", false), ("a--b", false), ("A", false), ("a_b", false), ("a.py", false),
        ("a b", false), (String(repeating: "a", count: 64), true), (String(repeating: "a", count: 65), false),
    ])
    func validIDs(_ id: String, _ valid: Bool) {
        #expect(ExternalAdapterProtocol.isValidID(id) == valid)
    }

    @Test("The id comes from the executable name")
    func idFromName() {
        #expect(ExternalAdapterProtocol.id(fromExecutableName: "ingestd-adapter-acme") == "acme")
        #expect(ExternalAdapterProtocol.id(fromExecutableName: "ingestd-adapter-") == "")
        #expect(ExternalAdapterProtocol.id(fromExecutableName: "acme") == nil)
        #expect(ExternalAdapterProtocol.executableName(for: "acme") == "ingestd-adapter-acme")
    }

    @Test("Compact hex round-trips and refuses odd lengths and non-digits")
    func compactHex() {
        #expect(CompactHex.encode([0x0A, 0x1B, 0xFF]) == "0a1bff")
        #expect(CompactHex.decode("0a1BfF") == [0x0A, 0x1B, 0xFF])
        #expect(CompactHex.decode("") == [])
        #expect(CompactHex.decode("abc") == nil)
        #expect(CompactHex.decode("zz") == nil)
    }
}
