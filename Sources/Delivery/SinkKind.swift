import Foundation

/// One kind of receiver (MQTT, HTTP, PostgreSQL, …) described in one type: its URL schemes with
/// their default ports, its typed options (stored, and given to `sinks add`), how a listing shows
/// it and its transport. A kind is its own file plus one line in `SinkKinds.all`.
public protocol SinkKindDescriptor {
    /// The kind's options as stored (JSON in the store) and read by its transport.
    associatedtype Options: SinkKindOptions where Options.Kind == Self
    /// The kind's name in listings and messages (`mqtt`).
    static var name: String { get }
    /// The URL schemes that pick this kind, each with its default port.
    static var schemes: [SinkScheme] { get }
    /// The URL's form for help: `mqtt://host[:port]`.
    static var urlForm: String { get }
    /// The `sinks add` options of this kind beside the common ones; an option of another kind
    /// given for this one is refused.
    static var commandLineOptions: [SinkOptionDeclaration] { get }
    /// The options `sinks add` stores, read from the command line (`values`) for `target`.
    static func options(from values: some SinkOptionValues, target: SinkTarget) throws(SinkConfigurationError) -> Options
    /// The target URL parsed (the default: a host is required, the port defaults to the scheme's).
    static func target(url: String, components: URLComponents, scheme: SinkScheme) throws(SinkConfigurationError) -> SinkTarget
    /// What `sinks list` shows after the target URL (` prefix ingestd/gw +home-assistant`).
    static func describe(_ options: Options, target: SinkTarget) -> String
    /// What `sinks add` says after the target URL of a sink it added (` (topics ingestd/gw/…)`);
    /// the default says nothing more.
    static func confirmation(_ options: Options, target: SinkTarget) -> String
    /// The kind's paragraph in `sinks add`'s help: what a sink of this kind does and needs (the
    /// default: none).
    static var notes: String { get }
    /// What one batch is for this kind, read after "per" (`request`), for `--batch-size`'s help.
    static var batchUnit: String { get }
    /// The connection to the receiver.
    static func makeTransport(_ configuration: SinkConfiguration, options: Options, secrets: SecretResolver,
                              softwareVersion: String) -> any SinkTransport
}

extension SinkKindDescriptor {
    /// The kind as a value.
    public static var kind: SinkKind { SinkKind(name: name) }

    public static func target(url: String, components: URLComponents, scheme: SinkScheme) throws(SinkConfigurationError) -> SinkTarget {
        try SinkTarget(hostRequired: url, components: components, scheme: scheme, kind: kind)
    }

    public static func confirmation(_ options: Options, target: SinkTarget) -> String { "" }

    public static var notes: String { "" }

    /// The batch size of a sink added without `--batch-size`.
    public static var defaultBatchSize: Int { Options().batchSize }

    /// The stored options text read as this kind's options.
    static func decodedOptions(_ text: String) throws(SinkConfigurationError) -> any SinkKindOptions {
        try Options.decoded(text)
    }

    /// The options `sinks add` stores, type-erased for the registry's callers.
    public static func anyOptions(from values: some SinkOptionValues, target: SinkTarget) throws(SinkConfigurationError) -> any SinkKindOptions {
        try options(from: values, target: target)
    }
}

/// A URL scheme of a sink kind and its default port (0: none, the library picks).
public struct SinkScheme: Sendable, Equatable {
    public var name: String
    public var defaultPort: Int
    /// Whether the scheme means TLS (`mqtts`, `https`).
    public var usesTLS: Bool
    /// Another spelling of a scheme (`postgres`): accepted, not listed in messages.
    public var isAlias: Bool

    public init(_ name: String, defaultPort: Int, usesTLS: Bool = false, isAlias: Bool = false) {
        self.name = name
        self.defaultPort = defaultPort
        self.usesTLS = usesTLS
        self.isAlias = isAlias
    }
}

/// A sink kind by name (`mqtt`); its descriptor is found in `SinkKinds.all`.
public struct SinkKind: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name: `SinkKindDescriptor.name`.
    public let rawValue: String

    public init(name: String) { rawValue = name }

    public var description: String { rawValue }

    /// The kind's descriptor (nil only for a name no registered kind has).
    public var descriptor: (any SinkKindDescriptor.Type)? { SinkKinds.all.first { $0.name == rawValue } }
}

/// A kind's options as stored: Codable (JSON in the store, flat keys) with every field defaulted,
/// so that options stored by an older version (fewer keys, or the keys of every kind) still load.
public protocol SinkKindOptions: Codable, Sendable, Equatable {
    /// The kind these options belong to.
    associatedtype Kind: SinkKindDescriptor where Kind.Options == Self
    /// The options of a sink added without any.
    init()
    /// Records per batch (what a batch is: the kind's `batchUnit`).
    var batchSize: Int { get set }
    /// Secret references (`@/path`, `env:NAME`, literal) the transport resolves: passwords.
    var secretReferences: [String] { get }
    /// Header lines whose `@/path` and `env:NAME` words are secrets (HTTP).
    var secretHeaders: [String] { get }
}

extension SinkKindOptions {
    public var secretReferences: [String] { [] }
    public var secretHeaders: [String] { [] }

    /// The options as stored.
    public func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self), let text = String(data: data, encoding: .utf8) else { return "{}" }
        return text
    }

    /// Options read back from the store: each key absent from `text` keeps its default (`init()`),
    /// keys of other kinds are ignored.
    public static func decoded(_ text: String) throws(SinkConfigurationError) -> Self {
        do {
            guard let stored = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw SinkConfigurationError.unreadableOptions("not a JSON object")
            }
            let defaults = try JSONSerialization.jsonObject(with: Data(Self().encoded().utf8)) as? [String: Any] ?? [:]
            let merged = defaults.merging(stored.filter { !($0.value is NSNull) }) { _, stored in stored }
            return try JSONDecoder().decode(Self.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch let error as SinkConfigurationError {
            throw error
        } catch {
            throw .unreadableOptions(String(describing: error))
        }
    }

    /// The kind's name.
    public var kind: SinkKind { Kind.kind }

    /// What `sinks list` shows after the target URL.
    public func describe(target: SinkTarget) -> String { Kind.describe(self, target: target) }

    /// What `sinks add` says after the target URL of the sink it added.
    public func confirmation(target: SinkTarget) -> String { Kind.confirmation(self, target: target) }

    /// The transport of a sink with these options.
    func makeTransport(_ configuration: SinkConfiguration, secrets: SecretResolver, softwareVersion: String) -> any SinkTransport {
        Kind.makeTransport(configuration, options: self, secrets: secrets, softwareVersion: softwareVersion)
    }
}

/// The sink kinds ingestd knows, in the order help lists their schemes. Adding a kind is its file
/// and one line here.
public enum SinkKinds {
    public static var all: [any SinkKindDescriptor.Type] {
        [MQTTSinkKind.self, HTTPSinkKind.self, PostgresSinkKind.self, HomeAssistantStatisticsSinkKind.self]
    }

    /// The kind a URL scheme picks, with the scheme.
    public static func kind(forScheme name: String) -> (kind: any SinkKindDescriptor.Type, scheme: SinkScheme)? {
        for kind in all {
            if let scheme = kind.schemes.first(where: { $0.name == name }) { return (kind, scheme) }
        }
        return nil
    }

    /// Every scheme but aliases, for messages: `mqtt://, mqtts://, http://, https:// or postgresql://`.
    public static var schemeList: String {
        let names = all.flatMap { $0.schemes }.filter { !$0.isAlias }.map { "\($0.name)://" }
        guard names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }

    /// Every kind's `sinks add` options, each once (in the kinds' order).
    public static var commandLineOptions: [SinkOptionDeclaration] {
        var seen: Set<String> = []
        return all.flatMap { $0.commandLineOptions }.filter { seen.insert($0.name).inserted }
    }

    /// Every kind's paragraph for `sinks add`'s help, in the kinds' order.
    public static var notes: String {
        all.map { $0.notes }.filter { !$0.isEmpty }.joined(separator: "\n\n")
    }

    /// `--batch-size`'s help: each kind's batch and its default.
    public static var batchSizeHelp: String {
        "Records per batch (" + all.map { "\($0.name): \($0.defaultBatchSize) per \($0.batchUnit)" }.joined(separator: "; ") + ")."
    }

    /// The kinds that accept `option`, for messages.
    public static func kinds(accepting option: SinkOptionDeclaration) -> [String] {
        all.filter { $0.commandLineOptions.contains { $0.name == option.name } }.map { $0.name }
    }
}

// MARK: Options on the command line

/// A `sinks add` option of one or more kinds: declared once, read through typed handles
/// (`SinkOption`), never by a string key elsewhere.
public struct SinkOptionDeclaration: Sendable, Hashable {
    /// The long name without dashes (`mqtt-version`).
    public var name: String
    /// Shown in usage (`3.1.1|5`); nil for a flag.
    public var valueName: String?
    public var help: String
    /// The value used when the option is absent, shown in help.
    public var defaultValue: String?
    public var allowedValues: [String]?
    public var repeatable: Bool

    public init(_ name: String, valueName: String?, help: String, default defaultValue: String? = nil,
                allowedValues: [String]? = nil, repeatable: Bool = false) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.allowedValues = allowedValues
        self.repeatable = repeatable
    }

    /// `--name`, for messages.
    public var label: String { "--" + name }
    /// Whether the option is a flag (no value).
    public var isFlag: Bool { valueName == nil }
}

/// A typed handle on a `sinks add` option: its declaration and how a value converts.
public struct SinkOption<Value>: Sendable {
    public let declaration: SinkOptionDeclaration
    let convert: @Sendable (String) throws(SinkConfigurationError) -> Value

    public init(_ declaration: SinkOptionDeclaration, convert: @escaping @Sendable (String) throws(SinkConfigurationError) -> Value) {
        self.declaration = declaration
        self.convert = convert
    }
}

extension SinkOption where Value == String {
    /// An option whose value is the text given.
    public init(_ declaration: SinkOptionDeclaration) {
        self.init(declaration) { $0 }
    }
}

extension SinkOption where Value: RawRepresentable, Value.RawValue == String, Value: CaseIterable {
    /// An option naming one case of `Value` (its allowed values are the raw values).
    public init(choice name: String, valueName: String? = nil, help: String) {
        let allowed = Value.allCases.map(\.rawValue)
        self.init(SinkOptionDeclaration(name, valueName: valueName ?? allowed.joined(separator: "|"), help: help, allowedValues: allowed)) {
            raw throws(SinkConfigurationError) in
            guard let value = Value(rawValue: raw) else {
                throw .invalidOption("--" + name, value: raw, reason: "use " + allowed.joined(separator: " or "))
            }
            return value
        }
    }
}

/// What `sinks add` was given: the strings of each option, in command-line order.
public protocol SinkOptionValues {
    /// The strings given for `option` (defaults not included); a flag given is one empty string.
    func given(_ option: SinkOptionDeclaration) -> [String]
    /// This machine's host name (the default gateway id).
    var hostName: String { get }
    /// A duration in seconds as the command line writes them (`30`, `0.5`, `15m`), or the reason it is not one.
    func duration(_ text: String) -> Result<Double, SinkOptionValueRefusal>
}

/// Why a command-line value was refused (`not a duration such as 30, 0.5, 30s, …`).
public struct SinkOptionValueRefusal: Error, Sendable, Equatable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}

extension SinkOptionValues {
    /// Whether `option` was given.
    public func isGiven<Value>(_ option: SinkOption<Value>) -> Bool { !given(option.declaration).isEmpty }

    /// The last value given for `option`, else its default converted; nil when neither.
    public func value<Value>(_ option: SinkOption<Value>) throws(SinkConfigurationError) -> Value? {
        guard let raw = given(option.declaration).last ?? option.declaration.defaultValue else { return nil }
        return try option.convert(raw)
    }

    /// Every value given for a repeatable `option`, converted.
    public func values<Value>(_ option: SinkOption<Value>) throws(SinkConfigurationError) -> [Value] {
        var converted: [Value] = []
        for raw in given(option.declaration) { converted.append(try option.convert(raw)) }
        return converted
    }

    /// The duration given for `option` (or its default) in seconds, refused outside `range`.
    public func seconds(_ option: SinkOption<String>, in range: ClosedRange<Double>) throws(SinkConfigurationError) -> Double? {
        guard let raw = try value(option) else { return nil }
        switch duration(raw) {
        case .success(let seconds):
            guard range.contains(seconds) else {
                throw .invalidOption(option.declaration.label, value: raw, reason: "must be \(Self.bound(range.lowerBound))...\(Self.bound(range.upperBound))")
            }
            return seconds
        case .failure(let refusal):
            throw .invalidOption(option.declaration.label, value: raw, reason: refusal.reason)
        }
    }

    private static func bound(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? "\(Int(seconds))s" : "\(seconds)s"
    }

    /// Whether the flag `option` was given.
    public func flag(_ option: SinkOption<Bool>) -> Bool { isGiven(option) }
}

/// The options several kinds share, declared once.
public enum SharedSinkOptions {
    /// A password or other secret: `@/path`, `env:NAME` or the value.
    public static let password = SinkOption<String>(SinkOptionDeclaration(
        "password", valueName: "SECRET", help: "The receiver's password: @/path, env:NAME or the value."))
    /// CA certificates a TLS server is verified with; must be readable when the sink is added.
    public static let caFile = SinkOption<String>(SinkOptionDeclaration(
        "ca-file", valueName: "PATH", help: "CA certificates (PEM) to verify the TLS server with.")) { path throws(SinkConfigurationError) in
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .optionFileUnreadable("--ca-file", path: path, reason: "the CA file cannot be read")
        }
        return path
    }
    /// Seconds a receiver may take to answer (read with `SinkOptionValues.seconds(_:in:)`).
    public static let timeout = SinkOption<String>(SinkOptionDeclaration(
        "timeout", valueName: "SECONDS", help: "Seconds to wait for the receiver.", default: "30"))
    /// The range of `timeout`.
    public static let timeoutRange: ClosedRange<Double> = 0.001...3600
    /// This gateway's id (default: the host name), checked to be usable in MQTT topics.
    public static let gatewayID = SinkOption<String>(SinkOptionDeclaration(
        "gateway-id", valueName: "ID", help: "This gateway's id in what its sinks write (default: the host name)."))

    /// The gateway id given, else the host name; refused when a topic level cannot hold it.
    public static func gatewayID(from values: some SinkOptionValues) throws(SinkConfigurationError) -> String {
        let given = try values.value(gatewayID)
        let id = given ?? values.hostName
        if let problem = MQTTTopicName.problem(withGatewayID: id) {
            throw .invalidOption(given == nil ? "the host name (give --gateway-id)" : "--gateway-id", value: id, reason: problem)
        }
        return id
    }
}
