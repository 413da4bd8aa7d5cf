import AdapterKit
import Foundation
import HealthModel
import Transport

/// Why the output of `ingestd-adapter-<id> --describe` is not a usable descriptor. Each case
/// names the offending field or value; `description` is the "broken: …" reason users see.
public enum ExternalDescriptorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not one JSON object (with the decoder's reason).
    case notJSON(String)
    /// `protocol` is missing (nil) or a version this build does not speak.
    case unsupportedProtocol(Int?)
    /// A required field is missing.
    case missingField(String)
    /// A field holds the wrong kind of value.
    case wrongFieldType(field: String, expected: String)
    /// A field the protocol does not have (often a typo).
    case unknownField(String)
    /// `id` is not kebab-case.
    case invalidID(String)
    /// `id` differs from the `<id>` in the executable's name.
    case idMismatch(expected: String, found: String)
    /// An empty `name` or `version`.
    case emptyField(String)
    /// `produces` names a type that is not a known quantity type.
    case unknownType(String)
    /// `produces` is empty.
    case producesNothing
    /// `matches` is empty.
    case noMatches
    /// A match entry is not `{"ble":{…}}` or `{"usb":{…}}`, or its BLE match has no criterion.
    case invalidMatch(index: Int, reason: String)
    /// A service UUID that is neither 16-bit, 32-bit nor 128-bit.
    case invalidServiceUUID(String)
    /// A company identifier outside 0...65535.
    case invalidCompanyID(Int)
    /// A name pattern that is not a valid regular expression, or too long.
    case invalidNamePattern(String)
    /// A USB vendor or product id that is not four hex digits.
    case invalidUSBID(field: String, text: String)
    /// A `models` entry that is not a model (with the reason).
    case invalidModel(index: Int, reason: String)
    /// A field that a later protocol version brought (`connect` is version 2's), in an older one's descriptor.
    case fieldNeedsNewerProtocol(field: String, version: Int)

    public var description: String {
        switch self {
        case .notJSON(let reason): "--describe did not print one JSON object: \(reason)"
        case .unsupportedProtocol(let version?):
            "speaks protocol \(version), this ingestd speaks protocols \(ExternalAdapterProtocol.supportedVersions.lowerBound)"
                + " to \(ExternalAdapterProtocol.supportedVersions.upperBound)"
        case .unsupportedProtocol(nil):
            "missing field \"protocol\" (expected \(ExternalAdapterProtocol.supportedVersions.lowerBound)"
                + " or \(ExternalAdapterProtocol.supportedVersions.upperBound))"
        case .fieldNeedsNewerProtocol(let field, let version):
            "field \"\(field)\" needs protocol \(version) or later"
        case .missingField(let field): "missing field \"\(field)\""
        case .wrongFieldType(let field, let expected): "\(field) must be \(expected)"
        case .unknownField(let field): "unknown field \"\(field)\""
        case .invalidID(let id): "id \"\(id)\" is not kebab-case (lowercase letters, digits, single hyphens)"
        case .idMismatch(let expected, let found): "id \"\(found)\" does not match the file name's \"\(expected)\""
        case .emptyField(let field): "\(field) is empty"
        case .unknownType(let name): "produces unknown type \"\(name)\""
        case .producesNothing: "produces no types"
        case .noMatches: "matches no devices (\"matches\" is empty)"
        case .invalidMatch(let index, let reason): "matches[\(index)]: \(reason)"
        case .invalidModel(let index, let reason): "models[\(index)]: \(reason)"
        case .invalidServiceUUID(let text): "\"\(text)\" is not a Bluetooth UUID"
        case .invalidCompanyID(let value): "company id \(value) is outside 0...65535"
        case .invalidNamePattern(let pattern): "name pattern \"\(pattern)\" is not a usable regular expression"
        case .invalidUSBID(let field, let text): "\(field) \"\(text)\" is not four hex digits"
        }
    }
}

/// Writes and reads the JSON object `ingestd-adapter-<id> --describe` prints:
/// `{"protocol":1,"id":…,"name":…,"version":…,"summary":…,"produces":[…],"matches":[{"ble":{…}},{"usb":{…}}]}`.
///
/// Reading is strict (unknown fields are errors, so a typo does not silently widen or narrow what
/// the plugin gets) because the output comes from an untrusted executable.
public enum ExternalDescriptorCodec {
    /// The descriptor as one line of JSON, keys in protocol order (version 1, advertisements only).
    public static func encode(_ descriptor: AdapterDescriptor) -> String {
        encode(ExternalPluginDescription(descriptor: descriptor, protocolVersion: 1, connects: false))
    }

    /// A plugin's whole description as one line of JSON: `connect` only when true (version 2).
    public static func encode(_ description: ExternalPluginDescription) -> String {
        let descriptor = description.descriptor
        var text = "{\"protocol\":\(description.protocolVersion),\"id\":"
        JSONText.appendQuoted(descriptor.id, to: &text)
        text += ",\"name\":"
        JSONText.appendQuoted(descriptor.name, to: &text)
        text += ",\"version\":"
        JSONText.appendQuoted(descriptor.version, to: &text)
        if !descriptor.summary.isEmpty {
            text += ",\"summary\":"
            JSONText.appendQuoted(descriptor.summary, to: &text)
        }
        text += ",\"produces\":["
        text += descriptor.produces.map { JSONText.quoted($0.identifier) }.joined(separator: ",")
        text += "],\"matches\":["
        text += descriptor.matches.map(encode).joined(separator: ",")
        text += "]"
        if !descriptor.how.isEmpty {
            text += ",\"how\":"
            JSONText.appendQuoted(descriptor.how, to: &text)
        }
        if !descriptor.models.isEmpty { text += ",\"models\":[" + descriptor.models.map(\.jsonObject).joined(separator: ",") + "]" }
        if description.connects { text += ",\"connect\":true" }
        return text + "}"
    }

    static func encode(_ match: DeviceMatch) -> String {
        switch match {
        case .ble(let ble):
            var fields: [String] = []
            if !ble.serviceUUIDs.isEmpty {
                fields.append("\"serviceUUIDs\":[" + ble.serviceUUIDs.map { JSONText.quoted($0.description) }.joined(separator: ",") + "]")
            }
            if !ble.companyIDs.isEmpty {
                fields.append("\"companyIDs\":[" + ble.companyIDs.map(String.init).joined(separator: ",") + "]")
            }
            if let pattern = ble.namePattern { fields.append("\"namePattern\":" + JSONText.quoted(pattern)) }
            if !ble.serviceDataUUIDs.isEmpty {
                fields.append("\"serviceDataUUIDs\":[" + ble.serviceDataUUIDs.map { JSONText.quoted($0.description) }.joined(separator: ",") + "]")
            }
            if !ble.serviceDataLengths.isEmpty {
                fields.append("\"serviceDataLengths\":[" + ble.serviceDataLengths.map(String.init).joined(separator: ",") + "]")
            }
            return "{\"ble\":{" + fields.joined(separator: ",") + "}}"
        case .usb(let usb):
            var text = "{\"usb\":{\"vendorID\":\"" + String(format: "%04x", usb.vendorID) + "\""
            if let product = usb.productID { text += ",\"productID\":\"" + String(format: "%04x", product) + "\"" }
            return text + "}}"
        }
    }

    /// Reads a descriptor. `expectedID` (the `<id>` of the executable's name) must equal `id`.
    public static func decode(_ data: Data, expectedID: String?) throws(ExternalDescriptorError) -> AdapterDescriptor {
        try decodeDescription(data, expectedID: expectedID).descriptor
    }

    /// Reads a plugin's whole description: its descriptor, protocol version and `connect`.
    public static func decodeDescription(_ data: Data, expectedID: String?) throws(ExternalDescriptorError)
        -> ExternalPluginDescription
    {
        let document: DescribeDocument
        do {
            document = try JSONDecoder().decode(DescribeDocument.self, from: data)
        } catch let error as ExternalDescriptorError {
            throw error
        } catch let error as DecodingError {
            throw .notJSON(error.pathAndReason)
        } catch {
            throw .notJSON("\(error)")
        }
        if let expectedID, document.id != expectedID {
            throw .idMismatch(expected: expectedID, found: document.id)
        }
        let descriptor = AdapterDescriptor(id: document.id, name: document.name, version: document.version,
                                           summary: document.summary, matches: document.matches, produces: document.produces,
                                           how: document.how, models: document.models)
        return ExternalPluginDescription(descriptor: descriptor, protocolVersion: document.protocolVersion,
                                         connects: document.connects)
    }

    /// Reads a descriptor from text.
    public static func decode(_ text: String, expectedID: String?) throws(ExternalDescriptorError) -> AdapterDescriptor {
        try decode(Data(text.utf8), expectedID: expectedID)
    }
}

/// What `--describe` says about a plugin: its descriptor, the protocol version it speaks and,
/// from version 2, whether it holds conversations with the connectable devices it matches.
public struct ExternalPluginDescription: Sendable, Hashable {
    public var descriptor: AdapterDescriptor
    /// 1 or 2; the daemon speaks this version with the plugin.
    public var protocolVersion: Int
    /// `"connect":true`: the daemon connects to matched connectable BLE devices and the plugin
    /// holds the conversation (protocol 2); the plugin then gets no advertisement lines.
    public var connects: Bool

    public init(descriptor: AdapterDescriptor, protocolVersion: Int, connects: Bool) {
        self.descriptor = descriptor
        self.protocolVersion = protocolVersion
        self.connects = connects
    }
}

/// The top-level object; checks run in an order that gives the most useful first error
/// (an unknown protocol version before anything that version might have changed).
private struct DescribeDocument: Decodable {
    var id: String
    var name: String
    var version: String
    var summary: String
    var produces: [QuantityType]
    var matches: [DeviceMatch]
    var protocolVersion: Int
    var connects: Bool
    var how: String
    var models: [AdapterModel]

    static let fields: Set<String> = ["protocol", "id", "name", "version", "summary", "produces", "matches", "connect",
                                      "how", "models"]
    /// Bounds on what a plugin may say about its models (untrusted output).
    static let maximumModels = 256
    static let maximumTextLength = 512

    init(from decoder: any Decoder) throws {
        let object: KeyedDecodingContainer<AnyJSONKey>
        do {
            object = try decoder.container(keyedBy: AnyJSONKey.self)
        } catch {
            throw ExternalDescriptorError.notJSON("expected a JSON object")
        }
        // A missing or non-integer `protocol` reads as nil.
        let version: Int? = (try? object.decodeIfPresent(Int.self, forKey: AnyJSONKey("protocol"))) ?? nil
        guard let version, ExternalAdapterProtocol.supportedVersions.contains(version) else {
            throw ExternalDescriptorError.unsupportedProtocol(version)
        }
        protocolVersion = version
        if let unknown = object.allKeys.map(\.stringValue).sorted().first(where: { !Self.fields.contains($0) }) {
            throw ExternalDescriptorError.unknownField(unknown)
        }
        connects = try Self.optional(object, "connect", Bool.self, expected: "true or false") ?? false
        if object.contains(AnyJSONKey("connect")) && version < 2 {
            throw ExternalDescriptorError.fieldNeedsNewerProtocol(field: "connect", version: 2)
        }
        id = try Self.string(object, "id")
        guard ExternalAdapterProtocol.isValidID(id) else { throw ExternalDescriptorError.invalidID(id) }
        name = try Self.string(object, "name")
        guard !name.isEmpty else { throw ExternalDescriptorError.emptyField("name") }
        self.version = try Self.string(object, "version")
        guard !self.version.isEmpty else { throw ExternalDescriptorError.emptyField("version") }
        summary = try Self.optional(object, "summary", String.self, expected: "a string") ?? ""

        guard let typeNames = try Self.optional(object, "produces", [String].self, expected: "an array of type identifiers")
        else { throw ExternalDescriptorError.missingField("produces") }
        var types: [QuantityType] = []
        for typeName in typeNames {
            guard let type = QuantityType.named(typeName) else { throw ExternalDescriptorError.unknownType(typeName) }
            if !types.contains(type) { types.append(type) }
        }
        guard !types.isEmpty else { throw ExternalDescriptorError.producesNothing }
        produces = types

        guard object.contains(AnyJSONKey("matches")) else { throw ExternalDescriptorError.missingField("matches") }
        var list: UnkeyedDecodingContainer
        do {
            list = try object.nestedUnkeyedContainer(forKey: AnyJSONKey("matches"))
        } catch {
            throw ExternalDescriptorError.wrongFieldType(field: "matches", expected: "an array")
        }
        var matches: [DeviceMatch] = []
        while !list.isAtEnd {
            let index = list.currentIndex
            let entry: MatchEntry
            do {
                entry = try list.decode(MatchEntry.self)
            } catch let error as ExternalDescriptorError {
                throw Self.located(error, index: index)
            } catch {
                throw ExternalDescriptorError.invalidMatch(index: index, reason: "expected {\"ble\":{…}} or {\"usb\":{…}}")
            }
            matches.append(entry.match)
        }
        guard !matches.isEmpty else { throw ExternalDescriptorError.noMatches }
        self.matches = matches

        how = try Self.optional(object, "how", String.self, expected: "a string") ?? ""
        guard how.utf8.count <= Self.maximumTextLength else {
            throw ExternalDescriptorError.wrongFieldType(field: "how", expected: "at most \(Self.maximumTextLength) bytes")
        }
        var models: [AdapterModel] = []
        if object.contains(AnyJSONKey("models")) {
            var entries: UnkeyedDecodingContainer
            do {
                entries = try object.nestedUnkeyedContainer(forKey: AnyJSONKey("models"))
            } catch {
                throw ExternalDescriptorError.wrongFieldType(field: "models", expected: "an array")
            }
            while !entries.isAtEnd {
                let index = entries.currentIndex
                guard index < Self.maximumModels else {
                    throw ExternalDescriptorError.wrongFieldType(field: "models", expected: "at most \(Self.maximumModels) entries")
                }
                let entry: ModelEntry
                do {
                    entry = try entries.decode(ModelEntry.self)
                } catch let error as ExternalDescriptorError {
                    throw Self.locatedModel(error, index: index)
                } catch {
                    throw ExternalDescriptorError.invalidModel(index: index, reason: "expected an object")
                }
                let foreign = entry.model.reads.filter { !types.contains($0) }
                guard foreign.isEmpty else {
                    throw ExternalDescriptorError.invalidModel(
                        index: index, reason: "reads \(foreign.map(\.shortName).joined(separator: ", ")), which produces does not list")
                }
                models.append(entry.model)
            }
        }
        self.models = models
    }

    private static func locatedModel(_ error: ExternalDescriptorError, index: Int) -> ExternalDescriptorError {
        switch error {
        case .unknownField(let field): .invalidModel(index: index, reason: "unknown field \"\(field)\"")
        case .wrongFieldType(let field, let expected): .invalidModel(index: index, reason: "\(field) must be \(expected)")
        case .missingField(let field): .invalidModel(index: index, reason: "missing field \"\(field)\"")
        case .unknownType(let name): .invalidModel(index: index, reason: "reads unknown type \"\(name)\"")
        default: error
        }
    }

    /// Errors that are about a whole match entry get its index; value errors stay as they are.
    private static func located(_ error: ExternalDescriptorError, index: Int) -> ExternalDescriptorError {
        switch error {
        case .unknownField(let field): .invalidMatch(index: index, reason: "unknown field \"\(field)\"")
        case .wrongFieldType(let field, let expected): .invalidMatch(index: index, reason: "\(field) must be \(expected)")
        case .missingField(let field): .invalidMatch(index: index, reason: "missing field \"\(field)\"")
        default: error
        }
    }

    static func string(_ object: KeyedDecodingContainer<AnyJSONKey>, _ key: String) throws -> String {
        guard let value = try optional(object, key, String.self, expected: "a string") else {
            throw ExternalDescriptorError.missingField(key)
        }
        return value
    }

    static func optional<T: Decodable>(_ object: KeyedDecodingContainer<AnyJSONKey>, _ key: String, _ type: T.Type,
                                       expected: String) throws -> T? {
        do {
            return try object.decodeIfPresent(type, forKey: AnyJSONKey(key))
        } catch {
            throw ExternalDescriptorError.wrongFieldType(field: key, expected: expected)
        }
    }
}

/// One `models` entry: `maker`, `name`, `offers` (strings), `reads` (type identifiers), `note`
/// and `capture` (optional strings); every string at most `DescribeDocument.maximumTextLength` bytes.
private struct ModelEntry: Decodable {
    var model: AdapterModel

    init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyJSONKey.self)
        let allowed: Set<String> = ["maker", "name", "offers", "reads", "note", "capture"]
        if let unknown = object.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw ExternalDescriptorError.unknownField(unknown)
        }
        func text(_ key: String) throws -> String? {
            let value = try DescribeDocument.optional(object, key, String.self, expected: "a string")
            if let value, value.utf8.count > DescribeDocument.maximumTextLength {
                throw ExternalDescriptorError.wrongFieldType(field: key, expected: "at most \(DescribeDocument.maximumTextLength) bytes")
            }
            return value
        }
        func required(_ key: String) throws -> String {
            guard let value = try text(key) else { throw ExternalDescriptorError.missingField(key) }
            return value
        }
        guard let names = try DescribeDocument.optional(object, "reads", [String].self, expected: "an array of type identifiers")
        else { throw ExternalDescriptorError.missingField("reads") }
        var reads: [QuantityType] = []
        for name in names {
            guard let type = QuantityType.named(name) else { throw ExternalDescriptorError.unknownType(name) }
            reads.append(type)
        }
        model = AdapterModel(maker: try required("maker"), name: try required("name"), offers: try required("offers"),
                             reads: reads, note: try text("note"), capture: try text("capture"))
    }
}

/// `{"ble":{…}}` or `{"usb":{…}}`.
private struct MatchEntry: Decodable {
    var match: DeviceMatch

    init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyJSONKey.self)
        let keys = object.allKeys.map(\.stringValue).sorted()
        guard keys.count == 1, let kind = keys.first else {
            throw ExternalDescriptorError.wrongFieldType(field: "entry", expected: "an object with exactly one of \"ble\", \"usb\"")
        }
        switch kind {
        case "ble":
            let fields = try object.nestedContainer(keyedBy: AnyJSONKey.self, forKey: AnyJSONKey("ble"))
            match = .ble(try Self.bleMatch(fields))
        case "usb":
            let fields = try object.nestedContainer(keyedBy: AnyJSONKey.self, forKey: AnyJSONKey("usb"))
            match = .usb(try Self.usbMatch(fields))
        default:
            throw ExternalDescriptorError.unknownField(kind)
        }
    }

    static func bleMatch(_ fields: KeyedDecodingContainer<AnyJSONKey>) throws -> BLEMatch {
        let allowed: Set<String> = ["serviceUUIDs", "companyIDs", "namePattern", "serviceDataUUIDs", "serviceDataLengths"]
        if let unknown = fields.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw ExternalDescriptorError.unknownField("ble." + unknown)
        }
        let uuidTexts = try DescribeDocument.optional(fields, "serviceUUIDs", [String].self, expected: "an array of strings") ?? []
        var uuids: [BLEUUID] = []
        for text in uuidTexts {
            guard let uuid = BLEUUID(text) else { throw ExternalDescriptorError.invalidServiceUUID(text) }
            uuids.append(uuid)
        }
        let companyValues = try DescribeDocument.optional(fields, "companyIDs", [Int].self, expected: "an array of integers") ?? []
        var companies: [UInt16] = []
        for value in companyValues {
            guard let company = UInt16(exactly: value) else { throw ExternalDescriptorError.invalidCompanyID(value) }
            companies.append(company)
        }
        let pattern = try DescribeDocument.optional(fields, "namePattern", String.self, expected: "a string")
        if let pattern {
            guard pattern.utf8.count <= ExternalAdapterProtocol.maximumNamePatternLength,
                  (try? NSRegularExpression(pattern: pattern)) != nil
            else { throw ExternalDescriptorError.invalidNamePattern(pattern) }
        }
        let dataTexts = try DescribeDocument.optional(fields, "serviceDataUUIDs", [String].self, expected: "an array of strings") ?? []
        var dataUUIDs: [BLEUUID] = []
        for text in dataTexts {
            guard let uuid = BLEUUID(text) else { throw ExternalDescriptorError.invalidServiceUUID(text) }
            dataUUIDs.append(uuid)
        }
        let lengths = try DescribeDocument.optional(fields, "serviceDataLengths", [Int].self, expected: "an array of integers") ?? []
        guard lengths.allSatisfy({ (0...255).contains($0) }) else {
            throw ExternalDescriptorError.wrongFieldType(field: "ble.serviceDataLengths", expected: "lengths from 0 to 255")
        }
        let match = BLEMatch(serviceUUIDs: uuids, companyIDs: companies, namePattern: pattern,
                             serviceDataUUIDs: dataUUIDs, serviceDataLengths: lengths)
        if uuids.isEmpty && companies.isEmpty && pattern == nil && dataUUIDs.isEmpty {
            throw ExternalDescriptorError.wrongFieldType(
                field: "ble", expected: "at least one of serviceUUIDs, companyIDs, namePattern, serviceDataUUIDs")
        }
        return match
    }

    static func usbMatch(_ fields: KeyedDecodingContainer<AnyJSONKey>) throws -> USBMatch {
        let allowed: Set<String> = ["vendorID", "productID"]
        if let unknown = fields.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw ExternalDescriptorError.unknownField("usb." + unknown)
        }
        guard let vendorText = try DescribeDocument.optional(fields, "vendorID", String.self, expected: "a string of four hex digits")
        else { throw ExternalDescriptorError.missingField("usb.vendorID") }
        let productText = try DescribeDocument.optional(fields, "productID", String.self, expected: "a string of four hex digits")
        return USBMatch(vendorID: try usbID(vendorText, field: "vendorID"),
                        productID: try productText.map { try usbID($0, field: "productID") })
    }

    static func usbID(_ text: String, field: String) throws -> UInt16 {
        guard text.utf8.count == 4, let value = UInt16(text, radix: 16) else {
            throw ExternalDescriptorError.invalidUSBID(field: field, text: text)
        }
        return value
    }
}
