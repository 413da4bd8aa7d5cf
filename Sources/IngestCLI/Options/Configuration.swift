import AdapterKit
import ArgumentParsing
import Foundation
import HealthModel
import IngestRuntime
import Logging
import PostgresStore

/// A key of the configuration file (`KEY = VALUE`): each stands for the option of the same name,
/// which wins when given on the command line.
enum ConfigurationKey: String, CaseIterable, Sendable {
    case store
    case tz
    case person
    case units
    case logLevel = "log-level"
    /// A pin (`DEVICE=ID`, as `run --adapter`); repeatable.
    case adapter
    /// An adapter option (`KEY=VALUE`, as `--adapter-option`); repeatable.
    case adapterOption = "adapter-option"

    /// The option the key supplies a value for, as the command line declares it.
    var option: TypedOption<String> {
        switch self {
        case .store: QueryStoreOptions.store
        case .tz: TimeZoneOption.tz
        case .person: PersonOption.person
        case .units: UnitSystemOption.units
        case .logLevel: TypedOption(CommandLineRunner.logLevelOption)
        case .adapter: RunCommand.pinOption
        case .adapterOption: AdapterSettingsOption.setting
        }
    }

    /// The name of the option the key supplies a value for (the key's own name).
    var optionName: String { option.option.name }

    /// The environment variable that sets the key (between the command line and the files).
    var environmentVariable: String? {
        switch self {
        case .store: "INGESTD_STORE"
        case .logLevel: CommandLineRunner.logLevelVariable
        case .tz, .person, .units, .adapter, .adapterOption: nil
        }
    }

    /// Whether every line counts (pins, adapter options) rather than the last one.
    var isRepeatable: Bool { self == .adapter || self == .adapterOption }

    /// Whether the key's value is a default for `command`'s option of the same name: a pin only
    /// for the daemon and `scan`, which shows its routing (`replay --adapter ID` means something else), the person not for the
    /// commands where `--person` narrows what is kept (`sinks add`).
    func applies(to command: any Command.Type) -> Bool {
        switch self {
        case .adapter: command == RunCommand.self || command == ScanCommand.self
        case .person: command != SinksAddCommand.self
        case .store, .tz, .units, .logLevel, .adapterOption: true
        }
    }

    /// Why `value` is not a valid value of the key; nil when it is.
    func problem(with value: String) -> String? {
        if let control = value.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            return "contains the control character U+\(String(control.value, radix: 16, uppercase: true))"
        }
        switch self {
        case .store:
            do { _ = try StoreLocation(value) } catch { return "a store file's path or a fleet's postgresql://… URL" }
            return nil
        case .tz:
            return TimeZone(identifier: value) == nil ? "not a known IANA time zone" : nil
        case .person:
            return nil
        case .units:
            return UnitSystem(rawValue: value) == nil ? "expected " + UnitSystem.allCases.map(\.rawValue).joined(separator: " or ") : nil
        case .logLevel:
            return Logger.Level(rawValue: value) == nil
                ? "expected one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", ") : nil
        case .adapter:
            do { _ = try AdapterPins(parsing: [value]) } catch { return error.description }
            return nil
        case .adapterOption:
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex else { return "expected KEY=VALUE" }
            return nil
        }
    }

    /// Words in an adapter option's name that mark its value as a secret (a consent code, a
    /// network key, a password): `config show` and errors print `***` instead.
    static let secretWords = ["key", "code", "pass", "pin", "secret", "token", "auth", "credential"]

    /// `value` as it may be printed: a URL's password and a secret adapter option's value redacted.
    func shown(_ value: String) -> String {
        switch self {
        case .store:
            return PostgresURL.redacted(value)
        case .adapterOption:
            guard let equals = value.firstIndex(of: "=") else { return value }
            let name = value[..<equals].lowercased()
            return Self.secretWords.contains { name.contains($0) } ? String(value[...equals]) + "***" : value
        case .tz, .person, .units, .logLevel, .adapter:
            return value
        }
    }

    /// The value used when nothing sets the key, described; nil when there is none.
    func builtInDefault(environment: [String: String]) -> String? {
        switch self {
        case .store: StoreFile.defaultPath(environment: environment)
        case .tz: TimeZone.current.identifier
        case .person: nil
        case .units: UnitSystem.metric.rawValue
        case .logLevel: Logger.Level.info.rawValue
        case .adapter, .adapterOption: nil
        }
    }
}

/// Where an effective value came from, from the highest precedence down.
enum ConfigurationOrigin: Equatable, Sendable, CustomStringConvertible {
    /// Given as `--OPTION` on the command line.
    case commandLine(option: String)
    /// Set by an environment variable.
    case environment(variable: String)
    /// A line of a configuration file.
    case file(path: String, line: Int)
    /// Nothing set it.
    case builtIn

    var description: String {
        switch self {
        case .commandLine(let option): "command line (--\(option))"
        case .environment(let variable): "environment (\(variable))"
        case .file(let path, let line): "\(path):\(line)"
        case .builtIn: "default"
        }
    }
}

/// One value of a key and where it came from.
struct ConfigurationSetting: Equatable, Sendable {
    var key: ConfigurationKey
    var value: String
    var origin: ConfigurationOrigin
}

/// Why the configuration could not be read; every case names the file (or variable), the line
/// and the value at fault.
enum ConfigurationError: Error, Equatable, CLIError {
    /// A line that is not `KEY = VALUE`.
    case malformedLine(path: String, line: Int, text: String)
    /// A key that is not a `ConfigurationKey`, with the nearest one.
    case unknownKey(path: String, line: Int, key: String, suggestion: String?)
    /// A key without a value.
    case emptyValue(path: String, line: Int, key: ConfigurationKey)
    /// A value the key does not take (already redacted for printing).
    case badValue(path: String, line: Int, key: ConfigurationKey, value: String, reason: String)
    /// An environment variable with a value its key does not take.
    case badEnvironment(variable: String, value: String, reason: String)
    /// A file that exists but cannot be read, or is not a configuration file's size or text.
    case unreadable(path: String, reason: String)
    /// A file named on purpose (`--config`, `INGESTD_CONFIG`) that does not exist.
    case missing(path: String, namedBy: String)

    var description: String {
        switch self {
        case .malformedLine(let path, let line, let text):
            "\(path):\(line): expected KEY = VALUE, got \"\(PrintableText.escaped(text))\""
        case .unknownKey(let path, let line, let key, let suggestion):
            "\(path):\(line): unknown key \"\(PrintableText.escaped(key))\""
                + (suggestion.map { " (did you mean \($0)?)" } ?? "")
                + "; keys: " + ConfigurationKey.allCases.map(\.rawValue).joined(separator: ", ")
        case .emptyValue(let path, let line, let key):
            "\(path):\(line): \(key.rawValue) has no value"
        case .badValue(let path, let line, let key, let value, let reason):
            "\(path):\(line): invalid \(key.rawValue) \"\(PrintableText.escaped(value))\": \(reason)"
        case .badEnvironment(let variable, let value, let reason):
            "\(variable): invalid value \"\(PrintableText.escaped(value))\": \(reason)"
        case .unreadable(let path, let reason):
            "cannot read configuration file \(path): \(reason)"
        case .missing(let path, let namedBy):
            "cannot open '\(path)' (named by \(namedBy)): no such file or directory"
        }
    }
}

/// A configuration file parsed: one `KEY = VALUE` a line, `#` comment lines, blank lines skipped.
struct ConfigurationFile: Equatable, Sendable {
    /// The longest file read (a configuration is a few lines).
    static let maximumBytes = 64 * 1024

    let path: String
    /// The settings in file order.
    let settings: [ConfigurationSetting]

    /// Parses `text`, the contents of the file at `path` (named in errors and origins).
    init(text: String, path: String) throws(ConfigurationError) {
        self.path = path
        var settings: [ConfigurationSetting] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw .malformedLine(path: path, line: number, text: line)
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let key = ConfigurationKey(rawValue: name) else {
                let suggestion = EditDistance.nearest(to: name, among: ConfigurationKey.allCases.map(\.rawValue))
                throw .unknownKey(path: path, line: number, key: name, suggestion: suggestion)
            }
            guard !value.isEmpty else { throw .emptyValue(path: path, line: number, key: key) }
            if let reason = key.problem(with: value) {
                throw .badValue(path: path, line: number, key: key, value: key.shown(value), reason: reason)
            }
            settings.append(ConfigurationSetting(key: key, value: value, origin: .file(path: path, line: number)))
        }
        self.settings = settings
    }

    /// Reads the file at `path`; nil when it does not exist. A file that exists and cannot be
    /// read (permissions, a directory, too long, not UTF-8) is an error naming it.
    static func read(path: String) throws(ConfigurationError) -> ConfigurationFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .unreadable(path: path, reason: "is a directory")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreadable(path: path, reason: CommonArguments.accessProblem(path, write: false) ?? "cannot be opened")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumBytes + 1) ?? Data()
        } catch {
            throw .unreadable(path: path, reason: error.localizedDescription)
        }
        guard data.count <= maximumBytes else { throw .unreadable(path: path, reason: "longer than \(maximumBytes) bytes") }
        guard let text = String(data: data, encoding: .utf8) else { throw .unreadable(path: path, reason: "not UTF-8 text") }
        return try ConfigurationFile(text: text, path: path)
    }
}

/// The configuration beneath the command line: the environment, then the user's file, then the
/// system's (or instead of both files, the one named by `--config` or `INGESTD_CONFIG`).
struct Configuration: Equatable, Sendable {
    /// The environment variable naming the file to read instead of the user's and the system's.
    static let fileVariable = "INGESTD_CONFIG"

    /// A file looked for and whether it was there, in the order read (lowest precedence first).
    struct Source: Equatable, Sendable {
        var path: String
        var present: Bool
    }

    /// The files looked for, lowest precedence first.
    let sources: [Source]
    /// The settings of the files, lowest precedence first (system, then user).
    let fileSettings: [ConfigurationSetting]
    /// The settings of environment variables.
    let environmentSettings: [ConfigurationSetting]
    /// The environment the defaults are computed in.
    let environment: [String: String]

    /// The system file under `directory` (`/etc` gives `/etc/ingestd/ingestd.conf`).
    static func systemPath(directory: String) -> String {
        (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/ingestd/ingestd.conf"
    }

    /// The user's file: `$XDG_CONFIG_HOME/ingestd/config`, else `~/.config/ingestd/config`; nil
    /// without a home.
    static func userPath(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/ingestd/config" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/ingestd/config"
    }

    /// Reads the configuration: `file` (named by `namedBy`, e.g. `--config`) instead of the
    /// default files when given, else `INGESTD_CONFIG`'s, else the system file under
    /// `systemDirectory` and the user's file; then the environment variables.
    init(environment: [String: String], systemDirectory: String, file: String? = nil, namedBy: String = "--config")
        throws(ConfigurationError) {
        self.environment = environment
        var paths: [(path: String, required: String?)] = []
        if let file {
            paths = [(file, namedBy)]
        } else if let named = environment[Self.fileVariable], !named.isEmpty {
            paths = [(named, Self.fileVariable)]
        } else {
            paths = [(Self.systemPath(directory: systemDirectory), nil)]
            if let user = Self.userPath(environment: environment) { paths.append((user, nil)) }
        }
        var sources: [Source] = []
        var settings: [ConfigurationSetting] = []
        for (path, required) in paths {
            let file = try ConfigurationFile.read(path: path)
            if file == nil, let required { throw .missing(path: path, namedBy: required) }
            sources.append(Source(path: path, present: file != nil))
            settings += file?.settings ?? []
        }
        self.sources = sources
        fileSettings = settings
        var fromEnvironment: [ConfigurationSetting] = []
        for key in ConfigurationKey.allCases {
            guard let variable = key.environmentVariable, let value = environment[variable], !value.isEmpty else { continue }
            // INGESTD_LOG_LEVEL is case-insensitive, as the runner reads it.
            let normalized = key == .logLevel ? value.lowercased() : value
            if let reason = key.problem(with: normalized) {
                throw .badEnvironment(variable: variable, value: key.shown(value), reason: reason)
            }
            fromEnvironment.append(ConfigurationSetting(key: key, value: normalized, origin: .environment(variable: variable)))
        }
        environmentSettings = fromEnvironment
    }

    /// What sets `key` beneath the command line: for a repeatable key every file line (system
    /// first, so the user's win where both set the same device or option); otherwise the one
    /// that wins: the environment, else the user's file, else the system's (the last line of a
    /// file when it repeats the key). Empty when nothing sets it.
    func settings(for key: ConfigurationKey) -> [ConfigurationSetting] {
        if key.isRepeatable { return fileSettings.filter { $0.key == key } }
        if let variable = environmentSettings.last(where: { $0.key == key }) { return [variable] }
        return fileSettings.last(where: { $0.key == key }).map { [$0] } ?? []
    }

    /// Gives `values` (of `command`) the configured values of every key the command's options take.
    func supply(to values: inout ParsedValues, command: any Command.Type) {
        for key in ConfigurationKey.allCases where key.applies(to: command) {
            values.supply(settings(for: key).map { SuppliedValue($0.value, origin: $0.origin.description) }, for: key.optionName)
        }
    }
}

/// `--config FILE` of `run`, `scan`, `doctor` and `config show`: the configuration file to read
/// instead of the system's and the user's. Each command declares it with its own help text.
enum ConfigFileOption {
    static let file = TypedOption<String>(Option("config", valueName: "FILE"))
}

/// Every command reads the configuration: `run --config FILE` names the file itself.
extension Ingestd: ArgumentDefaultsProvider {
    public static func supplyDefaults(to values: inout ParsedValues, commandPath: [any Command.Type], context: CommandContext) throws {
        guard let command = commandPath.last else { return }
        let file = values.declares(ConfigFileOption.file) ? values.rawValues(ConfigFileOption.file).last : nil
        let configuration = try Configuration(environment: context.environment,
                                              systemDirectory: context.systemConfigurationDirectory, file: file)
        configuration.supply(to: &values, command: command)
    }
}
