import ArgumentParsing
import Foundation
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
    func open(_ context: CommandContext, readOnly: Bool = false) throws -> HealthStore {
        try CommonArguments.openStore(path, context: context, readOnly: readOnly)
    }

    /// The store of `--store` (or the default) as the household commands see it: people, device
    /// owners, whose samples are whose.
    func openHousehold(_ context: CommandContext) throws -> any HouseholdStore {
        try open(context)
    }

    /// The store of `--store` (or the default) as the sink commands see it.
    func openSinks(_ context: CommandContext) throws -> any SinkAdministrationStore {
        try open(context)
    }

    /// The store of `--store` (or the default) as `keys add` and `keys remove` see it.
    func openKeys(_ context: CommandContext) throws -> any AdvertisementKeyStore {
        try open(context)
    }

    /// The store of `--store` (or the default) as the authorization commands see it.
    func openAuthorization(_ context: CommandContext, readOnly: Bool = false) throws -> any AuthorizationStore {
        try open(context, readOnly: readOnly)
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
