import Foundation
import HealthModel
import Redaction
import Pipeline

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

    public init(kind: SinkKind, scheme: String, host: String, port: Int, urlWithoutCredentials: String,
                username: String?, password: String?) {
        self.kind = kind
        self.scheme = scheme
        self.host = host
        self.port = port
        self.urlWithoutCredentials = urlWithoutCredentials
        self.username = username
        self.password = password
    }

    /// Parses a URL whose scheme a kind of `SinkKinds.all` declares (`mqtt://`, `https://`, `postgresql://`, …).
    public init(url: String) throws(SinkConfigurationError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw .invalidURL(SinkTarget.redacted(url), reason: "not a URL")
        }
        guard let (kind, sinkScheme) = SinkKinds.kind(forScheme: scheme) else {
            throw .unsupportedScheme(scheme, reason: "use \(SinkKinds.schemeList)")
        }
        self = try kind.target(url: url, components: components, scheme: sinkScheme)
    }

    /// The usual parse: a host is required, the port defaults to the scheme's, credentials come from the user information.
    public init(hostRequired url: String, components: URLComponents, scheme: SinkScheme, kind: SinkKind) throws(SinkConfigurationError) {
        guard let host = components.host, !host.isEmpty else {
            throw .invalidURL(SinkTarget.redacted(url), reason: "no host")
        }
        self.kind = kind
        self.scheme = scheme.name
        self.host = host
        port = components.port ?? scheme.defaultPort
        guard (1...65535).contains(port) else {
            throw .invalidURL(SinkTarget.redacted(url), reason: "port \(port) is out of range")
        }
        username = components.user.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 }
        password = components.password.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 }
        var clean = components
        clean.user = nil
        clean.password = nil
        urlWithoutCredentials = clean.string ?? "\(scheme.name)://\(host):\(port)"
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
    public var usesTLS: Bool { SinkKinds.kind(forScheme: scheme)?.scheme.usesTLS ?? false }

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
    /// The options of the target's kind.
    public var options: any SinkKindOptions
    public var every: Double?
    /// Type identifiers, or `*`.
    public var readTypes: [String]
    /// The person whose samples the sink reads; nil for every person's.
    public var person: String?

    public init(_ definition: SinkDefinition) throws(SinkConfigurationError) {
        name = definition.name
        target = try SinkTarget(url: definition.url)
        guard let kind = target.kind.descriptor else {
            throw .unsupportedScheme(target.scheme, reason: "use \(SinkKinds.schemeList)")
        }
        options = try kind.decodedOptions(definition.options)
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
    /// A file an option names (`--ca-file`) cannot be read.
    case optionFileUnreadable(String, path: String, reason: String)
    /// An option of another kind given for this one.
    case optionNotApplicable(String, kind: String)
    /// An option this kind cannot do without (`--token` of a Home Assistant statistics sink).
    case optionRequired(String, kind: String, example: String)
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
        case .optionFileUnreadable(let option, let path, let reason): "\(path) (\(option)): \(reason)"
        case .optionNotApplicable(let option, let kind): "\(option) does not apply to a \(kind) sink"
        case .optionRequired(let option, let kind, let example): "a \(kind) sink needs \(option) \(example)"
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
        for reference in configuration.options.secretReferences + [configuration.target.password].compactMap({ $0 }) {
            _ = try? resolve(reference)
        }
        for value in configuration.target.credentialParameterValues { redactor.remember(value) }
        for header in configuration.options.secretHeaders {
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
        if let basic = try? basicAuthorization(configuration.target) { redactor.remember(basic) }
    }

    /// The password a sink connects with: its option (`--password`), else the URL's; resolved
    /// and remembered; nil when neither is given. The one resolution of every kind's password.
    public func password(option: String?, target: SinkTarget) throws(SinkDeliveryError) -> String? {
        guard let reference = option ?? target.password else { return nil }
        do {
            return try resolve(reference)
        } catch {
            throw .configuration(error)
        }
    }

    /// `user:password` of the URL base64-encoded (HTTP Basic), nil without a user; remembered.
    public func basicAuthorization(_ target: SinkTarget) throws(SinkDeliveryError) -> String? {
        guard let user = target.username else { return nil }
        let password = try self.password(option: nil, target: target) ?? ""
        let encoded = Data("\(user):\(password)".utf8).base64EncodedString()
        redactor.remember(encoded)
        return encoded
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
