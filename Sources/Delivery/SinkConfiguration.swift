import Foundation
import HealthModel
import PostgresStore
import Redaction
import Pipeline

/// What kind of receiver a sink talks to, chosen by its URL's scheme.
public enum SinkKind: String, Sendable, Codable {
    case mqtt
    case http
    case postgresql
    /// Home Assistant's long-term statistics over its WebSocket API (`ws://`, `wss://`).
    case homeAssistantStatistics = "home-assistant-statistics"
}

/// The body format of an HTTP sink.
public enum HTTPBodyFormat: String, Sendable, Codable, CaseIterable {
    /// `{"samples":[…],"deleted":[…]}` with samples in DESIGN.md's JSON.
    case samples
    /// The JSON the Health Auto Export app posts: `{"data":{"metrics":[…]}}`.
    case healthAutoExport = "health-auto-export"
}

/// The MQTT protocol level a sink speaks.
public enum MQTTProtocolVersion: String, Sendable, Codable, CaseIterable {
    case v311 = "3.1.1"
    case v5 = "5"
}

/// A sink's kind options as stored (JSON in the store). Secrets are kept as written on the
/// command line: a literal, `@/path` (read at connect time) or `env:NAME`; never printed.
public struct SinkOptions: Sendable, Codable, Equatable {
    /// Samples per batch (HTTP: per request; MQTT: messages acknowledged before the cursor moves).
    public var batchSize: Int = 1000
    // MQTT
    public var protocolVersion: MQTTProtocolVersion = .v311
    public var caFile: String?
    public var username: String?
    public var password: String?
    public var clientID: String?
    public var gatewayID: String = "gateway"
    public var topicPrefix: String?
    public var homeAssistant: Bool = false
    public var discoveryPrefix: String = "homeassistant"
    // HTTP
    public var format: HTTPBodyFormat = .samples
    /// `Name: value` lines; a value word `@/path` or `env:NAME` is replaced by the secret.
    public var headers: [String] = []
    public var timeoutSeconds: Double = 30
    // PostgreSQL
    /// The schema ingestd's tables live in (nil: `ingestd`).
    public var schema: String?
    // Home Assistant statistics
    /// Home Assistant's long-lived access token: `@/path`, `env:NAME` or the value.
    public var token: String?

    public init() {}

    /// The default batch of a PostgreSQL sink: one transaction per batch, so larger than HTTP's.
    public static let postgresBatchSize = 10_000

    /// The MQTT topic prefix: `--prefix`, or `ingestd/<gateway id>`, each level made safe by
    /// `MQTTTopicName` (simple levels unchanged).
    public var resolvedPrefix: String { MQTTTopicName.prefix(topicPrefix ?? "ingestd/\(gatewayID)") }

    /// The options as stored.
    public func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self), let text = String(data: data, encoding: .utf8) else { return "{}" }
        return text
    }

    /// Options read back from the store.
    public static func decoded(_ text: String) throws(SinkConfigurationError) -> SinkOptions {
        do {
            return try JSONDecoder().decode(SinkOptions.self, from: Data(text.utf8))
        } catch {
            throw .unreadableOptions(String(describing: error))
        }
    }
}

/// A sink's target parsed from its URL: kind, host, port, path, and credentials given in it.
public struct SinkTarget: Sendable, Equatable {
    public var kind: SinkKind
    public var scheme: String
    public var host: String
    public var port: Int
    /// For HTTP: the whole URL without user information; for PostgreSQL: the URL without its password.
    public var urlWithoutCredentials: String
    public var username: String?
    public var password: String?

    /// Parses `mqtt://`, `mqtts://`, `http://` or `https://` URLs.
    public init(url: String) throws(SinkConfigurationError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw .invalidURL(SinkTarget.redacted(url), reason: "not a URL")
        }
        switch scheme {
        case "mqtt", "mqtts": kind = .mqtt
        case "http", "https": kind = .http
        case "postgresql", "postgres": kind = .postgresql
        case "ws", "wss": kind = .homeAssistantStatistics
        default:
            throw .unsupportedScheme(scheme, reason: "use mqtt://, mqtts://, http://, https://, postgresql://, or ws:// or wss:// (Home Assistant statistics)")
        }
        if kind == .postgresql {
            // libpq reads the URL itself; the host may be empty (a Unix socket named by ?host=/dir).
            self.scheme = scheme
            host = components.host ?? ""
            port = components.port ?? 5432
            username = components.user.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 }
            let split = PostgresURL.splittingPassword(url)
            password = split.password.flatMap { $0.isEmpty ? nil : $0 }
            urlWithoutCredentials = split.url
            return
        }
        guard let host = components.host, !host.isEmpty else {
            throw .invalidURL(SinkTarget.redacted(url), reason: "no host")
        }
        self.scheme = scheme
        self.host = host
        let defaultPort = ["mqtt": 1883, "mqtts": 8883, "http": 80, "https": 443, "ws": 80, "wss": 443][scheme] ?? 0
        port = components.port ?? defaultPort
        guard (1...65535).contains(port) else {
            throw .invalidURL(SinkTarget.redacted(url), reason: "port \(port) is out of range")
        }
        username = components.user.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 }
        password = components.password.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 }
        var clean = components
        clean.user = nil
        clean.password = nil
        urlWithoutCredentials = clean.string ?? "\(scheme)://\(host):\(port)"
    }

    /// The values of the URL's credential query parameters (`?password=`, `?token=`, …).
    public var credentialParameterValues: [String] {
        guard let items = URLComponents(string: urlWithoutCredentials)?.queryItems else { return [] }
        return items.compactMap { item in
            SecretRedactor.credentialParameters.contains(item.name.lowercased()) ? item.value.flatMap { $0.isEmpty ? nil : $0 } : nil
        }
    }

    /// The URL for messages and listings: without user information's password and with every
    /// credential parameter's value replaced by `SecretRedactor.marker`.
    public var displayURL: String { SecretRedactor.redactingCredentials(urlWithoutCredentials) }

    /// Whether TLS is used (`mqtts://`, `https://`).
    public var usesTLS: Bool { scheme == "mqtts" || scheme == "https" || scheme == "wss" }

    /// `url` with any password (userinfo or credential parameter) replaced, for messages.
    public static func redacted(_ url: String) -> String {
        SecretRedactor.redactingCredentials(userinfoRedacted(url))
    }

    private static func userinfoRedacted(_ url: String) -> String {
        guard let components = URLComponents(string: url) else {
            // Not parseable: show only the part before any '@' credentials could hide in.
            if let at = url.lastIndex(of: "@") { return "***" + url[at...] }
            return url
        }
        var clean = components
        if clean.password != nil { clean.password = "***" }
        return clean.string ?? url
    }
}

/// Everything the delivery engine needs to know about one sink, parsed from its stored form.
public struct SinkConfiguration: Sendable {
    public var name: String
    public var target: SinkTarget
    public var options: SinkOptions
    public var every: Double?
    /// Type identifiers, or `*`.
    public var readTypes: [String]
    /// The person whose samples the sink reads; nil for every person's.
    public var person: String?

    public init(_ definition: SinkDefinition) throws(SinkConfigurationError) {
        name = definition.name
        target = try SinkTarget(url: definition.url)
        options = try SinkOptions.decoded(definition.options)
        every = definition.every
        readTypes = definition.readTypes
        person = definition.person
    }

    /// The quantity types the sink may read.
    public var grantedTypes: [QuantityType] {
        readTypes.contains("*") ? QuantityType.catalogue : readTypes.compactMap { QuantityType.named($0) }
    }
}

/// Why a sink's configuration cannot be used; never contains a secret.
public enum SinkConfigurationError: Error, Equatable, CustomStringConvertible {
    case invalidURL(String, reason: String)
    case unsupportedScheme(String, reason: String)
    case invalidName(String)
    case unreadableOptions(String)
    case invalidOption(String, value: String, reason: String)
    case secretFileUnreadable(path: String, reason: String)
    case secretEnvironmentMissing(String)

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): "invalid sink URL '\(url)': \(reason)"
        case .unsupportedScheme(let scheme, let reason): "unsupported sink scheme '\(scheme)://': \(reason)"
        case .invalidName(let name):
            "invalid sink name '\(name)': use 1-64 letters, digits, '-' or '_', starting with a letter or digit"
        case .unreadableOptions(let reason): "the stored sink options cannot be read: \(reason)"
        case .invalidOption(let option, let value, let reason): "invalid \(option) '\(value)': \(reason)"
        case .secretFileUnreadable(let path, let reason): "cannot read the secret file \(path): \(reason)"
        case .secretEnvironmentMissing(let name): "the environment variable \(name) (named as a secret) is not set"
        }
    }

    /// Checks a sink name: letters, digits, `-` and `_`, 1 to 64 characters.
    public static func validateName(_ name: String) throws(SinkConfigurationError) {
        let allowed = name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
        guard !name.isEmpty, name.count <= 64, allowed, name.first != "-", name.first != "_" else {
            throw .invalidName(name)
        }
    }
}

/// Resolves secret references: `@/path` (the file's content, trailing newline removed), `env:NAME`
/// (the environment variable), anything else literally. Every value it resolves is remembered by
/// its `redactor`, which every error text of the sinks using it passes through.
public struct SecretResolver: Sendable {
    /// At most this many bytes are read from a secret file.
    public static let maximumFileSize = 64 * 1024
    public var environment: [String: String]
    /// Learns every resolved secret; shared by reference.
    public let redactor: SecretRedactor

    public init(environment: [String: String] = ProcessInfo.processInfo.environment,
                redactor: SecretRedactor = SecretRedactor()) {
        self.environment = environment
        self.redactor = redactor
    }

    /// The secret a reference names (remembered by `redactor`).
    public func resolve(_ reference: String) throws(SinkConfigurationError) -> String {
        let secret = try resolveUnremembered(reference)
        redactor.remember(secret)
        return secret
    }

    /// Resolves every secret `configuration` names (its password options, the URL's password and
    /// credential parameters, its secret and authorization header values) so that `redactor`
    /// knows them before anything is sent; unresolvable ones are left for the send to report.
    public func learnSecrets(of configuration: SinkConfiguration) {
        for reference in [configuration.options.password, configuration.target.password, configuration.options.token].compactMap({ $0 }) {
            _ = try? resolve(reference)
        }
        for value in configuration.target.credentialParameterValues { redactor.remember(value) }
        for header in configuration.options.headers {
            guard let colon = header.firstIndex(of: ":") else { continue }
            let name = header[..<colon].lowercased()
            guard let resolved = try? resolveHeader(header), let split = resolved.firstIndex(of: ":") else { continue }
            if ["authorization", "token", "key", "secret", "password", "cookie", "auth"].contains(where: { name.contains($0) }) {
                let value = resolved[resolved.index(after: split)...].trimmingCharacters(in: .whitespaces)
                redactor.remember(value)
                // `Bearer xyz`, `Basic abc`: the credential alone too.
                if let space = value.lastIndex(of: " ") { redactor.remember(String(value[value.index(after: space)...])) }
            }
        }
        if configuration.target.kind == .http, let user = configuration.target.username {
            let password = configuration.target.password.flatMap { try? resolve($0) } ?? ""
            redactor.remember(Data("\(user):\(password)".utf8).base64EncodedString())
        }
    }

    private func resolveUnremembered(_ reference: String) throws(SinkConfigurationError) -> String {
        if reference.hasPrefix("@") {
            let path = String(reference.dropFirst())
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw .secretFileUnreadable(path: path, reason: FileManager.default.fileExists(atPath: path)
                                            ? "permission denied" : "no such file")
            }
            defer { try? handle.close() }
            let data = (try? handle.read(upToCount: Self.maximumFileSize + 1)) ?? Data()
            guard data.count <= Self.maximumFileSize else {
                throw .secretFileUnreadable(path: path, reason: "larger than \(Self.maximumFileSize) bytes")
            }
            guard var text = String(data: data, encoding: .utf8) else {
                throw .secretFileUnreadable(path: path, reason: "not UTF-8 text")
            }
            while text.last == "\n" || text.last == "\r" { text.removeLast() }
            return text
        }
        if reference.hasPrefix("env:") {
            let name = String(reference.dropFirst(4))
            guard let value = environment[name] else { throw .secretEnvironmentMissing(name) }
            return value
        }
        return reference
    }

    /// A header line with each `@/path` or `env:NAME` word replaced by its secret.
    public func resolveHeader(_ line: String) throws(SinkConfigurationError) -> String {
        var words: [String] = []
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            if word.hasPrefix("@/") || word.hasPrefix("env:") {
                words.append(try resolve(String(word)))
            } else {
                words.append(String(word))
            }
        }
        return words.joined(separator: " ")
    }
}
