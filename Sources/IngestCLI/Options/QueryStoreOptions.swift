import ArgumentParsing
import Foundation
import IngestRuntime
import Pipeline
import PostgresStore

/// `--store PATH|URL`, `--schema NAME`, `--gateway ID` of the query commands: the local store
/// file, or a fleet's shared PostgreSQL database (`postgresql://…`) read across gateways.
struct QueryStoreOptions: OptionGroup {
    static let store = TypedOption<String>(Option(
        "store", valueName: "PATH|URL",
        help: "The store file (default: the configuration's store, else ~/.local/share/ingestd/health.sqlite; 'ingestd config show'), or postgresql://… for a fleet's database."))
    static let schemaOption = TypedOption<String>(Option(
        "schema", valueName: "NAME", help: "With --store postgresql://…: the schema the sinks write (default: ingestd)."))
    static let gatewayOption = TypedOption<String>(Option(
        "gateway", valueName: "ID", help: "With --store postgresql://…: only the samples of this gateway."))

    static var arguments: [ArgumentElement] { [store.element, schemaOption.element, gatewayOption.element] }

    /// What `--store` names.
    let location: StoreLocation
    let schema: String?
    let gateway: String?

    init(_ values: ParsedValues) throws {
        location = try StoreLocation(values.value(Self.store))
        schema = try values.value(Self.schemaOption)
        gateway = try values.value(Self.gatewayOption)
        if !isFleet {
            if schema != nil { throw UsageError.invalid("--schema needs --store postgresql://…") }
            if gateway != nil { throw UsageError.invalid("--gateway needs --store postgresql://… (a store file is one gateway)") }
        }
    }

    /// Whether the store is a fleet's PostgreSQL database.
    var isFleet: Bool { if case .fleet = location { true } else { false } }

    /// The store file's path (the default one when `--store` was not given); nil for a fleet.
    func filePath(_ context: CommandContext) -> String? {
        guard case .file(let path) = location else { return nil }
        return path ?? StoreFile.defaultPath(environment: context.environment)
    }

    /// The store named by `--store`, opened read-only, with clear errors.
    func open(_ context: CommandContext) throws -> any QueryStore {
        let url: String
        switch location {
        case .file(let path): return try StoreOption.openQuery(path, context: context)
        case .fleet(let fleet): url = fleet
        }
        do {
            let schema: PostgresSchema
            do {
                schema = try PostgresSchema(name: self.schema ?? PostgresSchema.defaultName)
            } catch {
                throw UsageError.invalidValue(self.schema ?? "", argument: "--schema", reason: error.description)
            }
            return try PostgresQueryStore(url: url, schema: schema)
        } catch let error as PostgresError {
            throw CommandError.sharedStore(error)
        }
    }

    /// `body`'s answer from the opened store, a shared database's failure as a clear error.
    func answering<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            throw CommandError.sharedStore(error)
        }
    }

    /// `--since ANCHOR` read as the anchor `changes` prints (a store file's number or a fleet's token).
    static func anchor(_ text: String) throws -> ChangeAnchor {
        do {
            return try ChangeAnchor(text: text)
        } catch {
            throw UsageError.invalidValue(text, argument: "--since", reason: error.reason)
        }
    }

    /// `body`'s answer; an anchor of the other kind of store (`--since`) as a usage error.
    func answering<T>(since text: String, _ body: () throws -> T) throws -> T {
        do {
            return try answering(body)
        } catch ChangeAnchorError.ofAnotherStore(_, let reason) {
            throw UsageError.invalidValue(text, argument: "--since", reason: reason)
        }
    }

    /// Whose samples: `--person`, or (a store file) its only person, or (a fleet) everybody.
    func scope(_ person: PersonOption, in store: any QueryStore) throws -> QueryScope {
        let names = try store.queryPeopleNames()
        if let name = person.name {
            guard names.contains(name) else {
                throw PersonOption.unknownPerson(name, known: names, origin: person.origin)
            }
            return QueryScope(people: .named(name), gateway: gateway)
        }
        if isFleet { return QueryScope(people: .everyone, gateway: gateway) }
        guard names.count == 1, let only = names.first else {
            if names.isEmpty { throw UsageError.invalid("the store has no people; add one with 'ingestd people add NAME'") }
            throw PersonOption.severalPeople(names)
        }
        return QueryScope(people: .named(only), gateway: gateway)
    }
}
