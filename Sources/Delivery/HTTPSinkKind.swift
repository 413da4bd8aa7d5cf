import Foundation

/// HTTP receivers (`http://`, `https://`): batches POSTed as JSON (`HTTPSinkTransport`).
public enum HTTPSinkKind: SinkKindDescriptor {
    public typealias Options = HTTPSinkOptions

    public static let name = "http"
    public static var schemes: [SinkScheme] { [SinkScheme("http", defaultPort: 80), SinkScheme("https", defaultPort: 443, usesTLS: true)] }
    public static let urlForm = "http(s)://host[:port]/path"
    public static let batchUnit = "request"

    /// `--format samples|health-auto-export`.
    public static let format = SinkOption<HTTPBodyFormat>(choice: "format", help: "HTTP body format.")
    /// `--header 'NAME: VALUE'` (repeatable).
    public static let header = SinkOption<String>(SinkOptionDeclaration(
        "header", valueName: "'NAME: VALUE'", help: "An HTTP header (repeatable); a value word @/path or env:NAME is a secret.",
        repeatable: true)) { header throws(SinkConfigurationError) in
        guard let colon = header.firstIndex(of: ":"), header.startIndex < colon, !header.contains("\n"), !header.contains("\r") else {
            throw .invalidOption("--header", value: redactedHeader(header), reason: "expected 'Name: value'")
        }
        return header
    }

    /// A header for messages: its name only.
    public static func redactedHeader(_ header: String) -> String {
        (header.split(separator: ":", maxSplits: 1).first.map(String.init) ?? "") + ": ***"
    }

    public static var commandLineOptions: [SinkOptionDeclaration] {
        [SharedSinkOptions.caFile.declaration, format.declaration, header.declaration, SharedSinkOptions.timeout.declaration]
    }

    public static func options(from values: some SinkOptionValues, target: SinkTarget) throws(SinkConfigurationError) -> HTTPSinkOptions {
        var options = HTTPSinkOptions()
        options.caFile = try values.value(SharedSinkOptions.caFile)
        options.format = try values.value(format) ?? .samples
        options.headers = try values.values(header)
        options.timeoutSeconds = try values.seconds(SharedSinkOptions.timeout, in: SharedSinkOptions.timeoutRange) ?? options.timeoutSeconds
        return options
    }

    public static func describe(_ options: HTTPSinkOptions, target: SinkTarget) -> String {
        var text = ""
        if let user = target.username { text += " (user \(user))" }
        if options.format == .healthAutoExport { text += " health-auto-export" }
        return text
    }

    public static func makeTransport(_ configuration: SinkConfiguration, options: HTTPSinkOptions, secrets: SecretResolver,
                                     softwareVersion: String) -> any SinkTransport {
        HTTPSinkTransport(configuration, options: options, secrets: secrets)
    }
}

extension SinkKind {
    /// HTTP receivers.
    public static let http = HTTPSinkKind.kind
}

/// The body format of an HTTP sink.
public enum HTTPBodyFormat: String, Sendable, Codable, CaseIterable {
    /// `{"samples":[…],"deleted":[…]}` with samples in DESIGN.md's JSON.
    case samples
    /// The JSON the Health Auto Export app posts: `{"data":{"metrics":[…]}}`.
    case healthAutoExport = "health-auto-export"
}

/// An HTTP sink's options as stored. Header values may name secrets (`@/path`, `env:NAME`); never printed.
public struct HTTPSinkOptions: SinkKindOptions {
    public typealias Kind = HTTPSinkKind
    /// Records per request.
    public var batchSize: Int = 1000
    public var caFile: String?
    public var format: HTTPBodyFormat = .samples
    /// `Name: value` lines; a value word `@/path` or `env:NAME` is replaced by the secret.
    public var headers: [String] = []
    public var timeoutSeconds: Double = 30

    public init() {}

    public var secretHeaders: [String] { headers }
}
