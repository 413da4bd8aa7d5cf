import ArgumentParsing
import Foundation
import IngestRuntime
import Pipeline
import PostgresStore
import SQLiteStore

/// `--store PATH`: the store file a command works on, opened with clear errors. A fleet's
/// `postgresql://…` URL is refused with a usage error (see `StoreLocation`).
struct StoreOption: OptionGroup {
    static let store = TypedOption<String>(Option(
        "store", valueName: "PATH",
        help: "The store file (default: the configuration's store, 'ingestd config show', else $XDG_DATA_HOME/ingestd/health.sqlite, i.e. ~/.local/share/ingestd/health.sqlite)."))

    static var arguments: [ArgumentElement] { [store.element] }

    /// The path given with `--store`; nil means the default store.
    let path: String?

    init(_ values: ParsedValues) throws {
        try self.init(values, refusingFleet: StoreLocation.localStoreOnly)
    }

    /// Reads `--store`; a fleet's URL is refused with `reason` (what the command needs instead).
    init(_ values: ParsedValues, refusingFleet reason: String) throws {
        switch try StoreLocation(values.value(Self.store)) {
        case .file(let path): self.path = path
        case .fleet(let url):
            let argument = Self.store.spelling + (values.suppliedOrigin(Self.store).map { " (from \($0))" } ?? "")
            throw UsageError.invalidValue(PostgresURL.redacted(url), argument: argument, reason: reason)
        }
    }

    /// Opens the store named by `--store` (or the default), mapping open failures to clear errors.
    /// Private: a command sees the store only through the port it works with (the openers below).
    private func open(_ context: CommandContext, readOnly: Bool = false) throws -> HealthStore {
        try Self.openFile(path, context: context, readOnly: readOnly)
    }

    /// The store of `--store` (or the default) as the household commands see it: people, device
    /// owners, whose samples are whose (`people list` reads it `readOnly`).
    func openHousehold(_ context: CommandContext, readOnly: Bool = false) throws -> any HouseholdStore {
        try open(context, readOnly: readOnly)
    }

    /// The store of `--store` (or the default), read-only, as `unassigned` sees it: the samples nobody was assigned.
    func openAssignments(_ context: CommandContext) throws -> any SampleAssignmentStore {
        try open(context, readOnly: true)
    }

    /// The store of `--store` (or the default) as the profile commands see it: the people and
    /// their characteristics.
    func openPeople(_ context: CommandContext) throws -> any PeopleStore {
        try open(context)
    }

    /// The store of `--store` (or the default) as `priority` sees it: each type's source order.
    func openPriorities(_ context: CommandContext) throws -> any SourcePriorityStore {
        try open(context)
    }

    /// The store of `--store` (or the default) as the sink commands see it.
    func openSinks(_ context: CommandContext) throws -> any SinkAdministrationStore {
        try open(context)
    }

    /// The store of `--store` (or the default) as the `keys` commands see it (`keys list` reads it `readOnly`).
    func openKeys(_ context: CommandContext, readOnly: Bool = false) throws -> any AdvertisementKeyStore {
        try open(context, readOnly: readOnly)
    }

    /// The store of `--store` (or the default) as the authorization commands see it.
    func openAuthorization(_ context: CommandContext, readOnly: Bool = false) throws -> any AuthorizationStore {
        try open(context, readOnly: readOnly)
    }

    /// The ingestion front door over the store of `--store` (or the default): `replay`, `import`
    /// and `auth grant` write through it and never hold the store itself.
    func openIngestion(_ context: CommandContext, pendingLimits: PendingLimits = PendingLimits(),
                       assignTolerance: Double = PersonAssigner.defaultTolerance) throws -> Ingestion {
        try Ingestion(store: try open(context), pendingLimits: pendingLimits, assignTolerance: assignTolerance)
    }

    /// The store file at `path` (nil: the default) opened read-only as the query commands see it.
    static func openQuery(_ path: String?, context: CommandContext) throws -> any QueryStore {
        try openFile(path, context: context, readOnly: true)
    }

    /// The store file at `path` (nil: the default) opened read-only for its advertisement keys.
    static func openKeys(_ path: String?, context: CommandContext) throws -> any AdvertisementKeyStore {
        try openFile(path, context: context, readOnly: true)
    }

    /// Opens the store file at `path` (nil: the default), mapping open failures to clear errors.
    private static func openFile(_ path: String?, context: CommandContext, readOnly: Bool) throws -> HealthStore {
        let resolved = path ?? HealthStore.defaultPath(environment: context.environment)
        // A directory where the store file was expected is a missing input (66), as for every file.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CommandError.storeIsDirectory(path: resolved)
        }
        // A query on a store named with --store that does not exist is most likely a typo; the
        // default store not existing yet just means nothing was ingested (empty answers).
        if readOnly, path != nil, !FileManager.default.fileExists(atPath: resolved) {
            throw CommandError.noSuchStore(path: resolved)
        }
        do {
            // A query opens an existing store read-only (it works in a read-only directory and
            // cannot change the file); a missing default store is created, and one that needs
            // migrating is opened for writing, as for every other command.
            if readOnly, FileManager.default.fileExists(atPath: resolved) {
                do {
                    return try HealthStore(path: resolved, readOnly: true)
                } catch StoreOpenError.needsMigration {
                    return try HealthStore(path: resolved, readOnly: false)
                }
            }
            return try HealthStore(path: resolved, readOnly: false)
        } catch let error as StoreOpenError {
            throw CommandError.storeUnusable(error)
        } catch let error as StoreFileError {
            throw CommandError.storeFile(error)
        } catch let error as SQLiteError {
            if error.isCannotOpen {
                throw CommandError.storeUnopenable(path: resolved, reason: CommonArguments.accessProblem(resolved, write: !readOnly) ?? error.message)
            }
            throw CommandError.store(path: resolved, error: error)
        }
    }
}

/// `--json`: one JSON object per line instead of a table.
struct JSONOption: OptionGroup {
    static let json = TypedFlag(Flag("json", help: "One JSON object per line."))

    static var arguments: [ArgumentElement] { [json.element] }

    /// The flag with another help text (e.g. `types`: "One JSON object per type.").
    static func declared(help: String) -> [ArgumentElement] {
        [json.withHelp(help).element]
    }

    /// Whether `--json` was given.
    let isOn: Bool

    init(_ values: ParsedValues) throws {
        isOn = values.flag(Self.json)
    }
}

/// `--pending-days`, `--pending-max-records`, `--pending-max-bytes`: the bounds of the pending
/// area where samples of undecided sources wait.
struct PendingLimitOptions: OptionGroup {
    static let days = TypedOption<Int>(Option(
        "pending-days", valueName: "N",
        help: "Keep samples of undecided sources this many days before discarding them.",
        default: String(PendingLimits.defaultRetentionDays)))
    static let maxRecords = TypedOption<Int>(Option(
        "pending-max-records", valueName: "N",
        help: "Held records per undecided source at most; past it the oldest are dropped and counted (import: stops instead, dropping nothing).",
        default: String(PendingLimits.defaultMaxRecordsPerSource)))
    static let maxBytes = TypedOption<Int>(Option(
        "pending-max-bytes", valueName: "N",
        help: "Bytes of held records per undecided source at most; past it the oldest are dropped and counted (import: stops instead).",
        default: String(PendingLimits.defaultMaxBytesPerSource)))

    static var arguments: [ArgumentElement] { [days.element, maxRecords.element, maxBytes.element] }

    /// The limits given (or the defaults).
    let limits: PendingLimits

    init(_ values: ParsedValues) throws {
        let days = try values.value(Self.days) ?? PendingLimits.defaultRetentionDays
        let records = try values.value(Self.maxRecords) ?? PendingLimits.defaultMaxRecordsPerSource
        let bytes = try values.value(Self.maxBytes) ?? PendingLimits.defaultMaxBytesPerSource
        guard days > 0, days <= 36_500 else {
            throw UsageError.invalidValue(String(days), argument: Self.days.spelling, reason: "must be 1...36500")
        }
        guard records > 0 else {
            throw UsageError.invalidValue(String(records), argument: Self.maxRecords.spelling, reason: "must be positive")
        }
        guard bytes > 0 else {
            throw UsageError.invalidValue(String(bytes), argument: Self.maxBytes.spelling, reason: "must be positive")
        }
        limits = PendingLimits(retention: TimeInterval(days) * 86_400, maxRecordsPerSource: records, maxBytesPerSource: bytes)
    }
}

/// `--json` and `--store`, the only arguments of the commands that report on a store
/// (`auth list`, `auth pending`, `sources`, `status`, `profile show`).
struct StoreReportOptions: OptionGroup {
    static var arguments: [ArgumentElement] { JSONOption.arguments + StoreOption.arguments }

    /// Whether `--json` was given.
    let json: Bool
    /// The store of `--store`.
    let store: StoreOption

    init(_ values: ParsedValues) throws {
        json = try JSONOption(values).isOn
        store = try StoreOption(values)
    }
}

/// A command whose arguments are exactly `--json` and `--store`: it declares only
/// `let options: StoreReportOptions` and its `run`.
protocol StoreReportCommand: Command {
    var options: StoreReportOptions { get }
    init(options: StoreReportOptions)
}

extension StoreReportCommand {
    static var signature: Signature { Signature { StoreReportOptions.self } }

    init(_ arguments: ParsedValues) throws {
        self.init(options: try StoreReportOptions(arguments))
    }

    /// Whether `--json` was given.
    var json: Bool { options.json }
}
