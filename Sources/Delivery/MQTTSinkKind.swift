import Foundation

/// MQTT brokers (`mqtt://`, `mqtts://`): one QoS 1 message per sample, optionally with Home
/// Assistant discovery and states (`MQTTSinkTransport`).
public enum MQTTSinkKind: SinkKindDescriptor {
    public typealias Options = MQTTSinkOptions

    public static let name = "mqtt"
    public static var schemes: [SinkScheme] { [SinkScheme("mqtt", defaultPort: 1883), SinkScheme("mqtts", defaultPort: 8883, usesTLS: true)] }
    public static let urlForm = "mqtt://host[:port], mqtts://host[:port]"
    public static let notes = """
        An mqtt:// or mqtts:// sink publishes one QoS 1 message per sample under --prefix; with --all-people each \
        person has their own topics and Home Assistant device.
        """
    public static let batchUnit = "cursor move once all are acknowledged"

    /// `--mqtt-version 3.1.1|5`.
    public static let protocolVersion = SinkOption<MQTTProtocolVersion>(choice: "mqtt-version", help: "MQTT protocol level.")
    /// `--username USER`.
    public static let username = SinkOption<String>(SinkOptionDeclaration("username", valueName: "USER", help: "MQTT user name."))
    /// `--client-id ID`.
    public static let clientID = SinkOption<String>(SinkOptionDeclaration(
        "client-id", valueName: "ID", help: "MQTT client id (default: ingestd-<gateway id>-<sink name>)."))
    /// `--prefix TOPIC`.
    public static let prefix = SinkOption<String>(SinkOptionDeclaration(
        "prefix", valueName: "TOPIC", help: "MQTT topic prefix (default: ingestd/<gateway id>).")) { value throws(SinkConfigurationError) in
        try checkedPrefix(value, option: "--prefix")
    }
    /// `--home-assistant`.
    public static let homeAssistant = SinkOption<Bool>(SinkOptionDeclaration(
        "home-assistant", valueName: nil, help: "Publish Home Assistant discovery configs and states.")) { _ in true }
    /// `--discovery-prefix TOPIC`.
    public static let discoveryPrefix = SinkOption<String>(SinkOptionDeclaration(
        "discovery-prefix", valueName: "TOPIC", help: "Home Assistant's discovery prefix.", default: "homeassistant")) {
        value throws(SinkConfigurationError) in try checkedPrefix(value, option: "--discovery-prefix")
    }

    public static var commandLineOptions: [SinkOptionDeclaration] {
        [protocolVersion.declaration, SharedSinkOptions.caFile.declaration, username.declaration, SharedSinkOptions.password.declaration,
         clientID.declaration, SharedSinkOptions.gatewayID.declaration, prefix.declaration, homeAssistant.declaration,
         discoveryPrefix.declaration]
    }

    private static func checkedPrefix(_ value: String, option: String) throws(SinkConfigurationError) -> String {
        if let problem = MQTTTopicName.problem(withPrefix: value) { throw .invalidOption(option, value: value, reason: problem) }
        return value
    }

    public static func options(from values: some SinkOptionValues, target: SinkTarget) throws(SinkConfigurationError) -> MQTTSinkOptions {
        var options = MQTTSinkOptions()
        options.protocolVersion = try values.value(protocolVersion) ?? .v311
        options.caFile = try values.value(SharedSinkOptions.caFile)
        options.username = try values.value(username)
        options.password = try values.value(SharedSinkOptions.password)
        options.clientID = try values.value(clientID)
        options.gatewayID = try SharedSinkOptions.gatewayID(from: values)
        options.topicPrefix = try values.value(prefix)
        options.homeAssistant = values.flag(homeAssistant)
        options.discoveryPrefix = try values.value(discoveryPrefix) ?? options.discoveryPrefix
        return options
    }

    public static func describe(_ options: MQTTSinkOptions, target: SinkTarget) -> String {
        var text = ""
        if let user = options.username ?? target.username { text += " (user \(user))" }
        text += " prefix \(options.resolvedPrefix)"
        if options.homeAssistant { text += " +home-assistant" }
        return text
    }

    public static func confirmation(_ options: MQTTSinkOptions, target: SinkTarget) -> String {
        " (topics \(options.resolvedPrefix)/…)"
    }

    public static func makeTransport(_ configuration: SinkConfiguration, options: MQTTSinkOptions, secrets: SecretResolver,
                                     softwareVersion: String) -> any SinkTransport {
        MQTTSinkTransport(configuration, options: options, secrets: secrets, softwareVersion: softwareVersion)
    }
}

extension SinkKind {
    /// MQTT brokers.
    public static let mqtt = MQTTSinkKind.kind
}

/// The MQTT protocol level a sink speaks.
public enum MQTTProtocolVersion: String, Sendable, Codable, CaseIterable {
    case v311 = "3.1.1"
    case v5 = "5"
}

/// An MQTT sink's options as stored. The password is kept as written: a literal, `@/path` (read
/// at connect time) or `env:NAME`; never printed.
public struct MQTTSinkOptions: SinkKindOptions {
    public typealias Kind = MQTTSinkKind
    /// Messages acknowledged before the cursor moves.
    public var batchSize: Int = 1000
    public var protocolVersion: MQTTProtocolVersion = .v311
    public var caFile: String?
    public var username: String?
    public var password: String?
    public var clientID: String?
    public var gatewayID: String = "gateway"
    public var topicPrefix: String?
    public var homeAssistant: Bool = false
    public var discoveryPrefix: String = "homeassistant"

    public init() {}

    public var secretReferences: [String] { [password].compactMap { $0 } }

    /// The MQTT topic prefix: `--prefix`, or `ingestd/<gateway id>`, each level made safe by
    /// `MQTTTopicName` (simple levels unchanged).
    public var resolvedPrefix: String { MQTTTopicName.prefix(topicPrefix ?? "ingestd/\(gatewayID)") }
}
