import AdapterKit
import ArgumentParsing
import Delivery
import HealthModel
import IngestRuntime
import Pipeline
import PostgresStore
import SQLiteStore
import WebDashboard

/// Why a command failed, each case carrying what failed. The message is `description`; the exit
/// status of each case is chosen in `ExitCodes.swift`, with the runtime's and the configuration's.
enum CommandError: CLIError {
    /// A directory where the store file was expected.
    case storeIsDirectory(path: String)
    /// A query named a store that does not exist (most likely a typo).
    case noSuchStore(path: String)
    /// The store file cannot be used as it is (a newer schema, a damaged file).
    case storeUnusable(StoreOpenError)
    /// The store file's guard refused it (not a regular file, wrong owner, …).
    case storeFile(StoreFileError)
    /// SQLite cannot open the store: the path and why (the access problem found, else SQLite's message).
    case storeUnopenable(path: String, reason: String)
    /// SQLite failed on the store at `path`.
    case store(path: String, error: SQLiteError)
    /// The shared PostgreSQL store failed.
    case sharedStore(PostgresError)
    /// The sink tables refused (an unknown sink, a name taken).
    case sinkStore(SinkStoreError)
    /// A sink's stored configuration cannot be used.
    case sinkConfiguration(SinkConfigurationError)
    /// A quantity type nobody knows, with the nearest short name when one is close.
    case unknownQuantityType(name: String, suggestion: String?)
    /// `--adapter` pins an adapter id nobody provides.
    case unknownAdapter(id: String)
    /// An input file (a key, a token, an import, a sink's option file) that cannot be opened.
    case unreadable(path: String, reason: String)
    /// A key file (or standard input) longer than a key file can be.
    case oversizedKeyFile(source: String, limit: Int)
    /// An Apple Health export that cannot be read.
    case unreadableImport(path: String, reason: String)
    /// The store's records cannot be exported as asked.
    case exportRead(ExportReadError)
    /// An output file that cannot be written, and why when known.
    case unwritable(path: String, reason: String?)
    /// The finished output cannot take the place of the old file.
    case unreplaceable(path: String, reason: String)
    /// The disk filled during `work` (`import`, `replay`): nothing of the batch was kept.
    case diskFull(work: String)
    /// The clock's date cannot be told in the zone.
    case unknownToday(zone: String)
    /// The bounds of `day` in the zone cannot be computed.
    case uncomputableDay(CalendarDate, zone: String)
    /// The bounds of the days `from` … `to` in the zone cannot be computed.
    case uncomputableDays(from: CalendarDate, to: CalendarDate, zone: String)
    /// `ingestd body` found no weighing (of the person, when one is named).
    case noWeighing(person: String?)
    /// No key is stored for the address.
    case noKey(address: String)
    /// `units convert` was given something that is not a finite number.
    case notAFiniteNumber(String)
    /// A unit that cannot be read, or two that do not convert.
    case unit(UnitError)
    /// libusb cannot list the USB devices.
    case usbUnlistable(reason: String)
    /// `--adapter` pins an adapter id the survey's router does not know.
    case adapterChoice(AdapterRouterError)
    /// The dashboard's HTTP server did not start.
    case dashboardNotServed(HTTPServerError)

    var description: String {
        switch self {
        case .storeIsDirectory(let path): "cannot open '\(path)': is a directory, not a store file"
        case .noSuchStore(let path): "cannot open '\(path)': no such store (nothing has been ingested there)"
        case .storeUnusable(let error): error.description
        case .storeFile(let error): error.description
        case .storeUnopenable(let path, let reason): "cannot open store \(path): \(reason)"
        case .store(let path, let error): "store \(path): \(error.description)"
        case .sharedStore(let error): error.description
        case .sinkStore(let error): error.description
        case .sinkConfiguration(let error): error.description
        case .unknownQuantityType(let name, let suggestion):
            "unknown quantity type \"\(name)\"\(suggestion.map { " (did you mean \($0)?)" } ?? ""); 'ingestd types' lists them"
        case .unknownAdapter(let id): "--adapter: no adapter \"\(id)\" (ingestd adapters lists them)"
        case .unreadable(let path, let reason): "cannot open '\(path)': \(reason)"
        case .oversizedKeyFile(let source, let limit): "\(source): more than \(limit) bytes; a key file holds 32 hex digits"
        case .unreadableImport(let path, let reason): "\(path): \(reason)"
        case .exportRead(let error): error.description
        case .unwritable(let path, let reason): "cannot write '\(path)'" + (reason.map { ": \($0)" } ?? "")
        case .unreplaceable(let path, let reason): "cannot replace '\(path)': \(reason)"
        case .diskFull(let work): "\(IngestionError.diskFull); free space and \(work) again"
        case .unknownToday(let zone): "cannot tell today's date in \(zone)"
        case .uncomputableDay(let day, let zone): "cannot compute the day \(day) in \(zone)"
        case .uncomputableDays(let from, let to, let zone): "cannot compute the days \(from) … \(to) in \(zone)"
        case .noWeighing(let person): "no weighing stored\(person.map { " for \($0)" } ?? "")"
        case .noKey(let address): "no key stored for \(address) ('ingestd keys list' lists them)"
        case .notAFiniteNumber(let text): "\"\(text)\" is not a finite number"
        case .unit(let error): error.description
        case .usbUnlistable(let reason): "cannot list USB devices: \(reason)"
        case .adapterChoice(let error): "--adapter: \(error)"
        case .dashboardNotServed(let error): error.description
        }
    }
}
