import Delivery
import Foundation
import HealthModel
import Pipeline
import TestSupport
import Testing

/// The sink kinds' registry: schemes, typed options, stored options of older versions, `sinks add`
/// and `sinks list` driven by the kinds' descriptors.
@Suite(.offCooperativePool) struct SinkKindRegistryTests {
    /// The options every sink had before kinds had their own (one flat struct for every kind), as
    /// its synthesized Codable wrote them into the store's `sinks.options` column (sorted keys,
    /// nil optionals left out). ORIGIN: the `SinkOptions` struct of Sources/Delivery/SinkConfiguration.swift
    /// at commit dba117b, copied field for field.
    struct LegacySinkOptions: Codable {
        var batchSize: Int = 1000
        var protocolVersion: String = "3.1.1"
        var caFile: String?
        var username: String?
        var password: String?
        var clientID: String?
        var gatewayID: String = "gateway"
        var topicPrefix: String?
        var homeAssistant: Bool = false
        var discoveryPrefix: String = "homeassistant"
        var format: String = "samples"
        var headers: [String] = []
        var timeoutSeconds: Double = 30
        var schema: String?

        func encoded() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try #require(String(data: encoder.encode(self), encoding: .utf8))
        }
    }

    @Test func sinkRowsStoredBeforeKindsHadTheirOwnOptionsStillLoad() throws {
        var mqtt = LegacySinkOptions()
        mqtt.protocolVersion = "5"
        mqtt.username = "gateway"
        mqtt.password = "env:MQTT_PASSWORD"
        mqtt.gatewayID = "pi"
        mqtt.topicPrefix = "home/health"
        mqtt.homeAssistant = true
        mqtt.discoveryPrefix = "ha"
        mqtt.batchSize = 50
        var http = LegacySinkOptions()
        http.format = "health-auto-export"
        http.headers = ["Authorization: Bearer env:TOKEN"]
        http.timeoutSeconds = 2.5
        var postgres = LegacySinkOptions()
        postgres.batchSize = 10_000
        postgres.schema = "fleet"
        postgres.gatewayID = "ward-3"
        postgres.password = "@/etc/ingestd/pg"
        // The exact text of the MQTT row, as the old encoder wrote it.
        #expect(try mqtt.encoded() == """
            {"batchSize":50,"discoveryPrefix":"ha","format":"samples","gatewayID":"pi","headers":[],"homeAssistant":true,\
            "password":"env:MQTT_PASSWORD","protocolVersion":"5","timeoutSeconds":30,"topicPrefix":"home\\/health","username":"gateway"}
            """)

        let directory = try TemporaryDirectory("legacy-sinks")
        let fixture = try StoreFixture(directory: directory)
        try fixture.withStore { store in
            try store.addSink(SinkDefinition(name: "ha", url: "mqtt://broker.example", options: mqtt.encoded(), every: nil, readTypes: ["*"]))
            try store.addSink(SinkDefinition(name: "hook", url: "https://x.example/in", options: http.encoded(), every: 60,
                                             readTypes: [QuantityType.stepCount.identifier]))
            try store.addSink(SinkDefinition(name: "fleet", url: "postgresql://ingest@db.example/health", options: postgres.encoded(),
                                             every: nil, readTypes: ["*"]))
        }
        let loaded = try fixture.withStore { store in try store.sinks().map { try SinkConfiguration($0.definition) } }
        let byName = Dictionary(uniqueKeysWithValues: loaded.map { ($0.name, $0) })

        let ha = try #require(byName["ha"]?.options as? MQTTSinkOptions)
        #expect(byName["ha"]?.target.kind == .mqtt)
        #expect(ha.protocolVersion == .v5 && ha.username == "gateway" && ha.password == "env:MQTT_PASSWORD")
        #expect(ha.gatewayID == "pi" && ha.resolvedPrefix == "home/health" && ha.homeAssistant && ha.discoveryPrefix == "ha")
        #expect(ha.batchSize == 50 && ha.secretReferences == ["env:MQTT_PASSWORD"])

        let hook = try #require(byName["hook"]?.options as? HTTPSinkOptions)
        #expect(hook.format == .healthAutoExport && hook.headers == ["Authorization: Bearer env:TOKEN"] && hook.timeoutSeconds == 2.5)
        #expect(hook.batchSize == 1000 && hook.caFile == nil)

        let fleet = try #require(byName["fleet"]?.options as? PostgresSinkOptions)
        #expect(fleet.schema == "fleet" && fleet.gatewayID == "ward-3" && fleet.password == "@/etc/ingestd/pg" && fleet.batchSize == 10_000)

        // The listing shows them as before.
        let list = try IngestdBinary.run(["sinks", "list", "--store", fixture.path])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("mqtt://broker.example (user gateway) prefix home/health +home-assistant"))
        #expect(list.stdout.contains("https://x.example/in health-auto-export"))
        #expect(list.stdout.contains("postgresql://ingest@db.example/health (user ingest) schema fleet gateway ward-3"))
    }

    @Test func optionsMissingFromAStoredRowKeepTheirDefaults() throws {
        // A row written by a version that knew fewer options (or by hand): each absent key keeps its default.
        let options = try MQTTSinkOptions.decoded(#"{"batchSize":7,"homeAssistant":true,"someFutureOption":1}"#)
        #expect(options.batchSize == 7 && options.homeAssistant && options.discoveryPrefix == "homeassistant" && options.protocolVersion == .v311)
        #expect(try PostgresSinkOptions.decoded("{}") == PostgresSinkOptions())
        #expect(try PostgresSinkOptions.decoded("{}").batchSize == PostgresSinkOptions.defaultBatchSize)
        #expect(try HTTPSinkOptions.decoded(#"{"schema":null,"format":"samples"}"#) == HTTPSinkOptions())
        #expect(throws: SinkConfigurationError.self) { try HTTPSinkOptions.decoded(#"{"format":"xml"}"#) }
        #expect(throws: SinkConfigurationError.unreadableOptions("not a JSON object")) { try HTTPSinkOptions.decoded("[]") }
        // What is stored now holds the kind's own keys only.
        var mqtt = MQTTSinkOptions()
        mqtt.gatewayID = "gw"
        #expect(mqtt.encoded() == #"{"batchSize":1000,"discoveryPrefix":"homeassistant","gatewayID":"gw","homeAssistant":false,"protocolVersion":"3.1.1"}"#)
        #expect(try MQTTSinkOptions.decoded(mqtt.encoded()) == mqtt)
    }

    @Test func everySchemePicksOneKindAndItsDefaultPort() throws {
        let schemes = SinkKinds.all.flatMap { $0.schemes }.map { $0.name }
        #expect(Set(schemes).count == schemes.count)
        #expect(Set(SinkKinds.all.map { $0.name }) == ["mqtt", "http", "postgresql", "home-assistant-statistics"])
        for (url, kind, port, tls) in [("mqtt://b", SinkKind.mqtt, 1883, false), ("mqtts://b", .mqtt, 8883, true), ("http://h/x", .http, 80, false),
                                       ("https://h/x", .http, 443, true), ("postgres://u@h/db", .postgresql, 5432, false),
                                       ("ws://ha:8123", .homeAssistantStatistics, 8123, false), ("wss://ha", .homeAssistantStatistics, 443, true)] {
            let target = try SinkTarget(url: url)
            #expect(target.kind == kind && target.port == port && target.usesTLS == tls, "\(url)")
            #expect(target.kind.descriptor?.name == kind.rawValue)
        }
        #expect(SinkKinds.schemeList == "mqtt://, mqtts://, http://, https://, postgresql://, ws:// or wss://")
        // Every option of the command line is declared once, by name.
        let names = SinkKinds.commandLineOptions.map { $0.name }
        #expect(Set(names).count == names.count && names.contains("mqtt-version") && names.contains("schema"))
        #expect(SinkKinds.kinds(accepting: SharedSinkOptions.password.declaration) == ["mqtt", "postgresql"])
    }

    /// The words that name a kind: its name (also with spaces), its schemes as URLs, and Home
    /// Assistant, which more than one kind speaks to.
    static let kindWords: Set<String> = Set(SinkKinds.all.flatMap { kind in
        [kind.name, kind.name.replacingOccurrences(of: "-", with: " ")] + kind.schemes.map { $0.name + "://" }
    } + ["postgres", "home assistant"])

    /// Text shared by kinds names none of them, and the command line names no kind's types: a
    /// kind's own words (its notes, what `sinks add` confirms, its batch) live in its descriptor,
    /// so adding a kind is its file plus one line in `SinkKinds.all`.
    @Test func sharedTextAndTheCommandLineNameNoKind() throws {
        let shared = SinkKinds.commandLineOptions.filter { SinkKinds.kinds(accepting: $0).count > 1 }
        #expect(Set(shared.map(\.name)).isSuperset(of: ["password", "timeout", "gateway-id", "ca-file"]))
        for option in shared {
            let leaked = Self.kindWords.filter { option.help.lowercased().contains($0) }.sorted()
            #expect(leaked.isEmpty, "--\(option.name) is shared by \(SinkKinds.kinds(accepting: option)) but its help names \(leaked): \(option.help)")
        }
        // The `sinks add` and `sinks list` commands reach a kind only through the registry.
        let commands = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/IngestCLI")
        let files = try #require(FileManager.default.subpathsOfDirectory(atPath: commands.path).filter { $0.hasSuffix(".swift") })
        #expect(files.count > 20)
        let kindTypes = SinkKinds.all.flatMap { kind -> [String] in
            let descriptor = String(describing: kind)
            return [descriptor, descriptor.replacingOccurrences(of: "SinkKind", with: "SinkOptions")]
        }
        #expect(kindTypes.contains("MQTTSinkOptions") && kindTypes.contains("PostgresSinkKind"))
        for file in files {
            let text = try String(contentsOf: commands.appendingPathComponent(file), encoding: .utf8)
            let named = kindTypes.filter { text.contains($0) }
            #expect(named.isEmpty, "Sources/IngestCLI/\(file) names \(named)")
        }
        // Each kind's own words reach the help through the registry.
        let help = try IngestdBinary.run(["help", "sinks", "add"])
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for kind in SinkKinds.all {
            #expect(kind.notes.isEmpty || flat.contains(kind.notes.split(whereSeparator: \.isWhitespace).joined(separator: " ")),
                    "the help of sinks add lacks \(kind.name)'s notes:\n\(help.stdout)")
            #expect(flat.contains("\(kind.name): \(kind.defaultBatchSize) per \(kind.batchUnit)"), "\(help.stdout)")
        }
        // What `sinks add` confirms is the kind's: MQTT names its topics, HTTP adds nothing.
        var mqtt = MQTTSinkOptions()
        mqtt.gatewayID = "pi"
        #expect(mqtt.confirmation(target: try SinkTarget(url: "mqtt://b")) == " (topics ingestd/pi/…)")
        #expect(HTTPSinkOptions().confirmation(target: try SinkTarget(url: "http://h/x")) == "")
    }

    @Test func sinksAddRefusesAnotherKindsOptionsAndBadValuesNamingThem() throws {
        let directory = try TemporaryDirectory("sinks-add-kinds")
        let fixture = try StoreFixture(directory: directory)
        func add(_ arguments: [String]) throws -> IngestdBinary.Output {
            try IngestdBinary.run(["sinks", "add"] + arguments + ["--all-types", "--store", fixture.path])
        }
        let wrongKind = try add(["h", "http://127.0.0.1:1/in", "--mqtt-version", "5"])
        #expect(wrongKind.status == 64 && wrongKind.stderr.contains("--mqtt-version does not apply to a http sink"), "\(wrongKind.stderr)")
        let flag = try add(["p", "postgresql://u@127.0.0.1/db", "--home-assistant"])
        #expect(flag.status == 64 && flag.stderr.contains("--home-assistant does not apply to a postgresql sink"), "\(flag.stderr)")
        let schema = try add(["p", "postgresql://u@127.0.0.1/db", "--schema", "bad schema"])
        #expect(schema.status == 64 && schema.stderr.contains("invalid value 'bad schema' for --schema"), "\(schema.stderr)")
        let timeout = try add(["h", "http://127.0.0.1:1/in", "--timeout", "2h"])
        #expect(timeout.status == 64 && timeout.stderr.contains("invalid value '2h' for --timeout: must be 0.001s...3600s"), "\(timeout.stderr)")
        let header = try add(["h", "http://127.0.0.1:1/in", "--header", "no colon secret"])
        #expect(header.status == 64 && header.stderr.contains("for --header: expected 'Name: value'"),
                "\(header.stderr)")
        let ca = try add(["m", "mqtts://127.0.0.1", "--ca-file", directory.path("missing.pem")])
        #expect(ca.status == 66 && ca.stderr.contains("the CA file cannot be read"), "\(ca.stderr)")

        #expect(try add(["m", "mqtt://127.0.0.1:1", "--mqtt-version", "5", "--gateway-id", "pi", "--home-assistant"]).status == 0)
        #expect(try add(["p", "postgresql://u@127.0.0.1/db", "--gateway-id", "pi", "--timeout", "5s"]).status == 0)
        let stored = try fixture.withStore { store in try store.sinks().map { try SinkConfiguration($0.definition) } }
        let mqtt = try #require(stored.first { $0.name == "m" }?.options as? MQTTSinkOptions)
        #expect(mqtt.protocolVersion == .v5 && mqtt.homeAssistant && mqtt.gatewayID == "pi" && mqtt.batchSize == 1000)
        let postgres = try #require(stored.first { $0.name == "p" }?.options as? PostgresSinkOptions)
        #expect(postgres.timeoutSeconds == 5 && postgres.batchSize == PostgresSinkOptions.defaultBatchSize && postgres.schema == "ingestd")
    }
}
