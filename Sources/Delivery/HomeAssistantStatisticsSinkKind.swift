import Foundation

/// Home Assistant's long-term statistics over its WebSocket API (`ws://`, `wss://`): hourly
/// history imported with `recorder/import_statistics` (`HomeAssistantStatisticsTransport`).
public enum HomeAssistantStatisticsSinkKind: SinkKindDescriptor {
    public typealias Options = HomeAssistantStatisticsSinkOptions

    public static let name = "home-assistant-statistics"
    public static var schemes: [SinkScheme] { [SinkScheme("ws", defaultPort: 80), SinkScheme("wss", defaultPort: 443, usesTLS: true)] }
    public static let urlForm = "ws(s)://home-assistant[:port]"
    public static let notes = """
        A ws:// or wss:// sink imports hourly history into Home Assistant's long-term statistics \
        (ingestd:<gateway id>_<person>_<type>) through its WebSocket API with --token, a long-lived \
        access token of an administrator (give it as @/path).
        """
    public static let batchUnit = "WebSocket connection"

    /// `--token SECRET`: a long-lived access token of an administrator.
    public static let token = SinkOption<String>(SinkOptionDeclaration(
        "token", valueName: "SECRET", help: "Home Assistant's long-lived access token (ws://, wss://): @/path or env:NAME."))

    public static var commandLineOptions: [SinkOptionDeclaration] {
        [SharedSinkOptions.caFile.declaration, SharedSinkOptions.gatewayID.declaration, token.declaration]
    }

    public static func options(from values: some SinkOptionValues, target: SinkTarget) throws(SinkConfigurationError)
        -> HomeAssistantStatisticsSinkOptions {
        var options = HomeAssistantStatisticsSinkOptions()
        options.caFile = try values.value(SharedSinkOptions.caFile)
        options.gatewayID = try SharedSinkOptions.gatewayID(from: values)
        guard let token = try values.value(token) else {
            throw .optionRequired("--token", kind: "Home Assistant statistics", example: "@/path (a long-lived access token)")
        }
        options.token = token
        return options
    }

    public static func describe(_ options: HomeAssistantStatisticsSinkOptions, target: SinkTarget) -> String {
        " statistics ingestd:\(options.gatewayID)_…"
    }

    public static func makeTransport(_ configuration: SinkConfiguration, options: HomeAssistantStatisticsSinkOptions,
                                     secrets: SecretResolver, softwareVersion: String) -> any SinkTransport {
        HomeAssistantStatisticsTransport(configuration, options: options, secrets: secrets)
    }
}

extension SinkKind {
    /// Home Assistant's long-term statistics.
    public static let homeAssistantStatistics = HomeAssistantStatisticsSinkKind.kind
}

/// A Home Assistant statistics sink's options as stored; the token is kept as written (`@/path`,
/// `env:NAME` or the value) and never printed.
public struct HomeAssistantStatisticsSinkOptions: SinkKindOptions {
    public typealias Kind = HomeAssistantStatisticsSinkKind
    /// Records per batch: one WebSocket connection each (hours re-imported per batch).
    public var batchSize: Int = 10_000
    public var caFile: String?
    public var gatewayID: String = "gateway"
    /// The long-lived access token's reference.
    public var token: String?

    public init() {}

    public var secretReferences: [String] { [token].compactMap { $0 } }
}
