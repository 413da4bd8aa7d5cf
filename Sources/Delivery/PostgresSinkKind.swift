import Foundation
import PostgresStore

/// A fleet's shared PostgreSQL database (`postgresql://`, `postgres://`): samples upserted by
/// (gateway id, uuid), one transaction per batch (`PostgresSinkTransport`).
public enum PostgresSinkKind: SinkKindDescriptor {
    public typealias Options = PostgresSinkOptions

    public static let name = "postgresql"
    public static var schemes: [SinkScheme] { [SinkScheme("postgresql", defaultPort: 5432), SinkScheme("postgres", defaultPort: 5432, isAlias: true)] }
    public static let urlForm = "postgresql://[user@]host[:port]/db"
    public static let notes = """
        A postgresql:// sink creates or migrates its schema (--schema, default ingestd) on first contact \
        and upserts samples by (gateway id, uuid) with --gateway-id and the person, one transaction per batch.
        """
    public static let batchUnit = "transaction"

    /// `--schema NAME`.
    public static let schema = SinkOption<String>(SinkOptionDeclaration(
        "schema", valueName: "NAME", help: "PostgreSQL schema of ingestd's tables.", default: PostgresSchema.defaultName)) {
        name throws(SinkConfigurationError) in
        do {
            return try PostgresSchema(name: name).name
        } catch {
            throw .invalidOption("--schema", value: name, reason: String(describing: error))
        }
    }

    public static var commandLineOptions: [SinkOptionDeclaration] {
        [SharedSinkOptions.password.declaration, SharedSinkOptions.gatewayID.declaration, schema.declaration,
         SharedSinkOptions.timeout.declaration]
    }

    /// libpq reads the URL itself: the host may be empty (a Unix socket named by `?host=/dir`) and
    /// the password is split off so that it is never shown.
    public static func target(url: String, components: URLComponents, scheme: SinkScheme) throws(SinkConfigurationError) -> SinkTarget {
        let split = PostgresURL.splittingPassword(url)
        return SinkTarget(kind: kind, scheme: scheme.name, host: components.host ?? "", port: components.port ?? scheme.defaultPort,
                          urlWithoutCredentials: split.url,
                          username: components.user.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding ?? $0 },
                          password: split.password.flatMap { $0.isEmpty ? nil : $0 })
    }

    public static func options(from values: some SinkOptionValues, target: SinkTarget) throws(SinkConfigurationError) -> PostgresSinkOptions {
        var options = PostgresSinkOptions()
        options.password = try values.value(SharedSinkOptions.password)
        options.gatewayID = try SharedSinkOptions.gatewayID(from: values)
        options.schema = try values.value(schema)
        options.timeoutSeconds = try values.seconds(SharedSinkOptions.timeout, in: SharedSinkOptions.timeoutRange) ?? options.timeoutSeconds
        return options
    }

    public static func describe(_ options: PostgresSinkOptions, target: SinkTarget) -> String {
        (target.username.map { " (user \($0))" } ?? "") + " schema \(options.schema ?? PostgresSchema.defaultName) gateway \(options.gatewayID)"
    }

    public static func makeTransport(_ configuration: SinkConfiguration, options: PostgresSinkOptions, secrets: SecretResolver,
                                     softwareVersion: String) -> any SinkTransport {
        PostgresSinkTransport(configuration, options: options, secrets: secrets)
    }
}

extension SinkKind {
    /// PostgreSQL databases.
    public static let postgresql = PostgresSinkKind.kind
}

/// A PostgreSQL sink's options as stored. The password is kept as written (`@/path`, `env:NAME`
/// or literal); never printed.
public struct PostgresSinkOptions: SinkKindOptions {
    public typealias Kind = PostgresSinkKind
    /// Samples per transaction: larger than HTTP's.
    public var batchSize: Int = PostgresSinkOptions.defaultBatchSize
    public var password: String?
    public var gatewayID: String = "gateway"
    /// The schema ingestd's tables live in (nil: `ingestd`).
    public var schema: String?
    /// Seconds to connect.
    public var timeoutSeconds: Double = 30

    public init() {}

    /// The default batch of a PostgreSQL sink.
    public static let defaultBatchSize = 10_000

    public var secretReferences: [String] { [password].compactMap { $0 } }
}
