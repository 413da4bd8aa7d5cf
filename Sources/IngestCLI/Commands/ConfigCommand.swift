import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd config`: the configuration every command reads.
struct ConfigCommand: Command {
    static let configuration = CommandConfiguration(
        name: "config",
        abstract: "Show the configuration every command reads (store, time zone, person, units, log level, pins).",
        discussion: """
            Every command takes defaults from /etc/ingestd/ingestd.conf (the system's and the service's) and \
            $XDG_CONFIG_HOME/ingestd/config (default ~/.config/ingestd/config, a person's), one KEY = VALUE a line; \
            INGESTD_CONFIG names one file to read instead of both (as 'run --config FILE' does), INGESTD_STORE sets \
            the store and INGESTD_LOG_LEVEL the log level. The command line wins over the environment, the \
            environment over the user's file, the user's file over the system's, and that over the built-in \
            defaults. Keys: store, tz, person, units (metric|us), log-level, adapter (a pin DEVICE=ID, for run) and \
            adapter-option (KEY=VALUE), the last two repeatable. A bad line stops every command with the file, the \
            line and the value (exit 78); a missing file is no error, an unreadable one is. 'ingestd config' alone \
            is 'ingestd config show'.
            """,
        subcommands: [ConfigShowCommand.self],
        defaultSubcommand: ConfigShowCommand.self,
        examples: [
            "ingestd config",
            "ingestd config show",
            "ingestd config show --json",
        ]
    )

    init(_ arguments: ParsedValues) throws {}
}

/// `ingestd config show [--json]`: every effective value and where it came from.
struct ConfigShowCommand: Command {
    static let configuration = CommandConfiguration(
        name: "show",
        abstract: "Print every effective setting and where it came from (command line, environment, FILE:LINE, default).",
        discussion: """
            The options below set a value as they would on another command, so their origin shows as the \
            command line. A store URL's password and adapter options that hold secrets (keys, codes, \
            passwords, tokens) are printed as ***.
            """,
        examples: [
            "ingestd config show",
            "ingestd config show --json",
            "ingestd config show --config /etc/ingestd/ingestd.conf",
            "ingestd config show --tz Europe/Berlin",
        ]
    )
    static let signature = Signature {
        JSONOption.declared(help: "One JSON object per setting: key, value, origin (commandLine, environment, file, default).")
        ConfigFileOption.file.withHelp("Read FILE instead of /etc/ingestd/ingestd.conf and ~/.config/ingestd/config.")
        QueryStoreOptions.store.withHelp("As the other commands' --store.")
        TimeZoneOption.self
        PersonOption.person.withHelp("As the query commands' --person.")
        UnitSystemOption.self
    }

    /// The keys `show` takes on its own command line (with `--log-level`, global).
    static let commandLineKeys: [ConfigurationKey] = [.store, .tz, .person, .units, .logLevel]

    let json: Bool
    let file: String?
    /// The values given on this command line, by key.
    let given: [ConfigurationKey: String]

    init(_ arguments: ParsedValues) throws {
        json = try JSONOption(arguments).isOn
        file = arguments.rawValues(ConfigFileOption.file).last
        var given: [ConfigurationKey: String] = [:]
        for key in Self.commandLineKeys {
            guard let value = arguments.rawValues(key.option).last else { continue }
            if let reason = key.problem(with: value) {
                throw UsageError.invalidValue(key.shown(value), argument: key.option.spelling, reason: reason)
            }
            given[key] = value
        }
        self.given = given
    }

    /// One printed setting: nil value when nothing sets the key and it has no default.
    struct Row {
        var key: ConfigurationKey
        var value: String?
        var origin: ConfigurationOrigin
    }

    /// The effective settings of every key, in key order; a key nothing sets has one row of
    /// origin `.builtIn`.
    func effective(_ configuration: Configuration) -> [Row] {
        ConfigurationKey.allCases.flatMap { key -> [Row] in
            if let value = given[key] { return [Row(key: key, value: value, origin: .commandLine(option: key.optionName))] }
            let settings = configuration.settings(for: key)
            if settings.isEmpty { return [Row(key: key, value: key.builtInDefault(environment: configuration.environment), origin: .builtIn)] }
            return settings.map { Row(key: $0.key, value: $0.value, origin: $0.origin) }
        }
    }

    func run(_ context: CommandContext) async throws {
        let configuration = try Configuration(environment: context.environment,
                                              systemDirectory: context.systemConfigurationDirectory, file: file)
        let rows = effective(configuration)
        if json {
            for row in rows {
                var line = "{\"key\":" + JSONText.quoted(row.key.rawValue)
                line += ",\"value\":" + (row.value.map { JSONText.quoted(row.key.shown($0)) } ?? "null")
                switch row.origin {
                case .commandLine(let option): line += ",\"origin\":\"commandLine\",\"option\":" + JSONText.quoted("--" + option)
                case .environment(let variable): line += ",\"origin\":\"environment\",\"variable\":" + JSONText.quoted(variable)
                case .file(let path, let number): line += ",\"origin\":\"file\",\"file\":" + JSONText.quoted(path) + ",\"line\":\(number)"
                case .builtIn: line += ",\"origin\":\"default\""
                }
                context.stdout.writeLine(line + "}")
            }
            return
        }
        let table = rows.map { row in
            [row.key.rawValue, row.value.map(row.key.shown) ?? Self.noValue(row.key), row.origin.description]
        }
        context.stdout.write(Table(header: ["KEY", "VALUE", "FROM"], rows: table).rendered)
        context.stdout.writeLine("")
        let files = configuration.sources.map { $0.path + ($0.present ? "" : " (not present)") }
        context.stdout.writeLine("Files read: " + files.joined(separator: ", "))
    }

    /// What a key nothing sets means, for the text table.
    static func noValue(_ key: ConfigurationKey) -> String {
        switch key {
        case .person: "(the store's only person)"
        case .adapter: "(none: adapters are matched per device)"
        case .adapterOption: "(none)"
        case .store, .tz, .units, .logLevel: "-"
        }
    }
}
