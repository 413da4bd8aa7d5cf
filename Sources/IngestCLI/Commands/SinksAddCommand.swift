import Delivery
import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import PostgresStore
import SQLiteStore

/// `ingestd sinks add NAME URL (--types T,… | --all-types) [--every D] [kind options]`.
struct SinksAddCommand: Command {
    static let configuration = CommandConfiguration(
        name: "add", abstract: "Add a sink: the URL's scheme (mqtt, mqtts, http, https, postgresql, ws, wss) picks the kind.",
        discussion: """
            Secrets (--password, header values) may be written as @/path (read from that file when \
            connecting) or env:NAME (an environment variable of the delivering process); they are \
            never printed. The sink starts with the whole stored feed of its types as backlog. A \
            postgresql:// sink creates or migrates its schema (--schema, default ingestd) on first contact \
            and upserts samples by (gateway id, uuid) with --gateway-id and the person, one transaction per batch. \
            A ws:// or wss:// sink imports hourly history into Home Assistant's long-term statistics \
            (ingestd:<gateway id>_<person>_<type>) through its WebSocket API with --token, a long-lived \
            access token of an administrator (give it as @/path).
            """,
        examples: [
            "ingestd sinks add alice-server https://health.example/alice --types stepCount,bodyMass --person alice",
            "ingestd sinks add ha-history ws://homeassistant.local:8123 --token @/etc/ingestd/ha-token --all-types --all-people",
        ]
    )
    static let signature = Signature {
        Positional("NAME", help: "The sink's name (letters, digits, '-', '_').")
        Positional("URL", help: "mqtt://host[:port], mqtts://host[:port], http(s)://host[:port]/path, postgresql://[user@]host[:port]/db, ws(s)://home-assistant[:port].")
        Option("types", valueName: "T,…", help: "Quantity types the sink may read, comma-separated (stepCount,bodyMass).")
        Flag("all-types", help: "Let the sink read every type.")
        Option("every", valueName: "DURATION", help: "Deliver on a schedule (30s, 15m, 1h, 1d) instead of right after commits.")
        Option("batch-size", valueName: "N",
               help: "Records per batch (HTTP: per request; PostgreSQL: per transaction, default 10000).", default: "1000")
        Option("mqtt-version", valueName: "3.1.1|5", help: "MQTT protocol level.", allowedValues: ["3.1.1", "5"])
        Option("ca-file", valueName: "PATH", help: "CA certificates (PEM) to verify the TLS server with.")
        Option("username", valueName: "USER", help: "MQTT user name.")
        Option("password", valueName: "SECRET", help: "MQTT or PostgreSQL password: @/path, env:NAME or the value.")
        Option("client-id", valueName: "ID", help: "MQTT client id (default: ingestd-<gateway id>-<sink name>).")
        Option("gateway-id", valueName: "ID",
               help: "This gateway's id in topics, Home Assistant and PostgreSQL rows (default: the host name).")
        Option("schema", valueName: "NAME", help: "PostgreSQL schema of ingestd's tables.", default: PostgresSchema.defaultName)
        Option("prefix", valueName: "TOPIC", help: "MQTT topic prefix (default: ingestd/<gateway id>).")
        Flag("home-assistant", help: "Publish Home Assistant discovery configs and states.")
        Option("discovery-prefix", valueName: "TOPIC", help: "Home Assistant's discovery prefix.", default: "homeassistant")
        Option("format", valueName: "samples|health-auto-export", help: "HTTP body format.", allowedValues: ["samples", "health-auto-export"])
        Option("header", valueName: "'NAME: VALUE'", help: "An HTTP header (repeatable); a value word @/path or env:NAME is a secret.",
               repeatable: true)
        Option("token", valueName: "SECRET", help: "Home Assistant's long-lived access token (ws://, wss://): @/path or env:NAME.")
        Option("timeout", valueName: "SECONDS", help: "HTTP request timeout.", default: "30")
        Option("person", valueName: "NAME",
               help: "Deliver only this person's samples (default: the only person; required when the store has several, or --all-people).")
        Flag("all-people", help: "Deliver every person's samples (MQTT: each person's own topics and Home Assistant device).")
        StoreOption.self
    }

    let definition: SinkDefinition
    let storePath: String?
    let person: PersonOption
    let allPeople: Bool

    init(_ arguments: ParsedValues) throws {
        let name: String = try arguments.required("name")
        let url: String = try arguments.required("url")
        storePath = try StoreOption(arguments).path
        person = try PersonOption(arguments)
        allPeople = arguments.flag("all-people")
        if allPeople, person.name != nil { throw UsageError.invalid("give --person NAME or --all-people, not both") }
        let target: SinkTarget
        do {
            try SinkConfigurationError.validateName(name)
            target = try SinkTarget(url: url)
        } catch {
            throw UsageError.invalid(error.description)
        }
        let typeList: String? = try arguments.value("types")
        let allTypes = arguments.flag("all-types")
        if allTypes == (typeList != nil) { throw UsageError.invalid("give --types T,… or --all-types (exactly one)") }
        var readTypes = ["*"]
        if let typeList {
            readTypes = try typeList.split(separator: ",").map { try CommonArguments.quantityType(String($0)).identifier }
            if readTypes.isEmpty { throw UsageError.invalidValue(typeList, argument: "--types", reason: "no type named") }
        }
        var options = SinkOptions()
        var batchSize: Int = try arguments.count("batch-size", in: CommonArguments.batchSizes) ?? 1000
        if target.kind == .postgresql || target.kind == .homeAssistantStatistics, !arguments.isPresent("batch-size") {
            batchSize = SinkOptions.postgresBatchSize
        }
        options.batchSize = batchSize
        let applicable: Set<String> = switch target.kind {
        case .mqtt: ["mqtt-version", "username", "password", "client-id", "prefix", "gateway-id"]
        case .http: ["format", "header"]
        case .postgresql: ["password", "gateway-id", "schema"]
        case .homeAssistantStatistics: ["token", "gateway-id"]
        }
        for option in ["mqtt-version", "username", "password", "client-id", "prefix", "gateway-id", "format", "header", "schema", "token"]
        where !applicable.contains(option) && arguments.isPresent(option) {
            throw UsageError.invalid("--\(option) does not apply to a \(target.kind.rawValue) sink")
        }
        if target.kind != .mqtt, arguments.flag("home-assistant") {
            throw UsageError.invalid("--home-assistant does not apply to a \(target.kind.rawValue) sink")
        }
        if target.kind == .postgresql, let schema: String = try arguments.value("schema") {
            do {
                options.schema = try PostgresSchema(name: schema).name
            } catch {
                throw UsageError.invalidValue(schema, argument: "--schema", reason: error.description)
            }
        }
        if let version: String = try arguments.value("mqtt-version") { options.protocolVersion = MQTTProtocolVersion(rawValue: version) ?? .v311 }
        options.caFile = try arguments.value("ca-file")
        if let caFile = options.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw CommandFailure.noInput(path: caFile, reason: "the CA file cannot be read")
        }
        options.username = try arguments.value("username")
        options.password = try arguments.value("password")
        options.clientID = try arguments.value("client-id")
        options.token = try arguments.value("token")
        if target.kind == .homeAssistantStatistics, options.token == nil {
            throw UsageError.invalid("a Home Assistant statistics sink needs --token @/path (a long-lived access token)")
        }
        let gatewayID: String? = try arguments.value("gateway-id")
        options.gatewayID = gatewayID ?? Self.hostName()
        if let problem = MQTTTopicName.problem(withGatewayID: options.gatewayID) {
            throw UsageError.invalidValue(options.gatewayID, argument: gatewayID == nil ? "the host name (give --gateway-id)" : "--gateway-id",
                                          reason: problem)
        }
        options.topicPrefix = try arguments.value("prefix")
        options.homeAssistant = arguments.flag("home-assistant")
        options.discoveryPrefix = try arguments.value("discovery-prefix") ?? "homeassistant"
        for (argument, value) in [("--prefix", options.topicPrefix), ("--discovery-prefix", options.discoveryPrefix)] {
            if let value, let problem = MQTTTopicName.problem(withPrefix: value) {
                throw UsageError.invalidValue(value, argument: argument, reason: problem)
            }
        }
        if let format: String = try arguments.value("format") { options.format = HTTPBodyFormat(rawValue: format) ?? .samples }
        options.headers = try arguments.values("header")
        for header in options.headers {
            guard let colon = header.firstIndex(of: ":"), header.startIndex < colon,
                  !header.contains("\n"), !header.contains("\r") else {
                throw UsageError.invalidValue(SinksAddCommand.redactedHeader(header), argument: "--header", reason: "expected 'Name: value'")
            }
        }
        options.timeoutSeconds = try arguments.seconds("timeout", in: 0.001...3600) ?? 30
        let every = try arguments.seconds("every", in: 1...(366 * 86_400))
        definition = SinkDefinition(name: name, url: url, options: options.encoded(), every: every, readTypes: readTypes)
    }

    /// A header for messages: its name only.
    static func redactedHeader(_ header: String) -> String {
        (header.split(separator: ":", maxSplits: 1).first.map(String.init) ?? "") + ": ***"
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "gateway" }
        let name = String(cString: buffer)
        return name.isEmpty ? "gateway" : name
    }

    func run(_ context: CommandContext) async throws {
        let store = try CommonArguments.openStore(storePath, context: context)
        defer { store.close() }
        var definition = self.definition
        if !allPeople {
            do {
                definition.person = try person.resolve(in: store).name
            } catch let error as UsageError where person.name == nil {
                throw UsageError.invalid("\(error.description); or --all-people to deliver everybody's")
            }
        }
        try SinksCommand.mapErrors { try store.addSink(definition) }
        let parsed = try? SinkTarget(url: definition.url)
        var target = parsed?.displayURL ?? ""
        if parsed?.kind == .mqtt, let options = try? SinkOptions.decoded(definition.options) {
            target += " (topics \(options.resolvedPrefix)/…)"
        }
        let types = definition.readsAllTypes ? "every type" : definition.readTypes.compactMap { QuantityType.named($0)?.shortName }.joined(separator: ", ")
        let whose = definition.person.map { "\($0)'s" } ?? "every person's"
        context.stderr.writeLine("added sink \(definition.name) → \(target), reading \(whose) \(types); a running ingestd picks it up on SIGHUP, or run 'ingestd sinks deliver \(definition.name)'")
    }
}
