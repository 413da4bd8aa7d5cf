import ArgumentParsing
import Foundation
import IngestRuntime

/// `ingestd doctor [--json]`: checks the set-up (Bluetooth, USB access, the store, the sinks, the
/// plugins, the ANT+ key, the clock) and says for each problem the command that fixes it.
struct DoctorCommand: Command {
    static let configuration = CommandConfiguration(
        name: "doctor",
        abstract: "Check the set-up (Bluetooth, USB access, store, sinks, plugins, ANT+ key, clock) and say how to fix what fails.",
        discussion: """
            One line per check: ✓ ok, ! warning, ✗ failure, - skipped (cannot be checked here, or does not \
            apply), each problem with the command that fixes it. Bluetooth: kernel support (AF_BLUETOOTH), \
            the controller --hci N present, up and LE-capable, rfkill, this process's CAP_NET_RAW and \
            CAP_NET_ADMIN, bluetoothd. USB: the udev rules installed and current, membership of the ingestd \
            group, every supported device present accessible. Store: mode 0600, SQLite quick_check, schema \
            version, free space. Sinks: configuration, readable credentials and a TCP connection to the \
            receiver (3 s; nothing is sent, and no secret is printed). Plugins: --describe succeeds. The ANT+ \
            network key (never printed), from --adapter-option or --config. The clock. Nothing is changed. \
            Every check is bounded in time; one that does not finish fails. Exit status: 0 when nothing \
            failed (warnings and skipped checks do not count), 1 otherwise. A machine without Bluetooth \
            fails the Bluetooth checks unless --no-ble says it is not wanted.
            """,
        examples: [
            "ingestd doctor",
            "ingestd doctor --store /var/lib/ingestd/health.sqlite --config /etc/ingestd/ingestd.conf",
            "ingestd doctor --no-ble --json",
            "ingestd doctor --only store,sinks",
        ]
    )
    static let onlyOption = TypedOption<String>(Option(
        "only", valueName: "GROUPS",
        help: "Run only these groups, comma-separated: " + DoctorGroup.allCases.map(\.rawValue).joined(separator: ", ") + "."))
    static let noBLE = TypedFlag(Flag("no-ble", help: "Bluetooth is not wanted here: skip its checks."))
    static let noUSB = TypedFlag(Flag("no-usb", help: "USB devices are not wanted here: skip their checks."))
    static let signature = Signature {
        StoreOption.self
        ControllerOption.self
        PluginsOption.self
        AdapterSettingsOption.self
        ConfigFileOption.file.withHelp(
            "Read the configuration (store, adapter options such as the ANT+ key) from FILE instead of /etc/ingestd/ingestd.conf and ~/.config/ingestd/config, as 'ingestd run --config' does.")
        Self.onlyOption
        Self.noBLE
        Self.noUSB
        JSONOption.declared(help: "One JSON object with every check.")
    }

    let storePath: String?
    let controller: UInt16
    let plugins: [String]
    let adapterOptions: [String: String]
    let groups: Set<DoctorGroup>
    let json: Bool

    init(_ arguments: ParsedValues) throws {
        storePath = try StoreOption(arguments).path
        controller = UInt16(try ControllerOption(arguments).index)
        plugins = try PluginsOption(arguments).directories
        // The configuration's adapter options come first (ParsedValues.supply): --adapter-option wins.
        adapterOptions = try AdapterSettingsOption(arguments).settings
        var groups = Set(DoctorGroup.allCases)
        if let only = try arguments.value(Self.onlyOption) {
            groups = []
            for name in only.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let group = DoctorGroup(rawValue: name) else {
                    throw UsageError.invalidValue(name, argument: "--only",
                                                  reason: "not a group (" + DoctorGroup.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                groups.insert(group)
            }
        }
        if arguments.flag(Self.noBLE) { groups.remove(.bluetooth) }
        if arguments.flag(Self.noUSB) {
            groups.remove(.usb)
            groups.remove(.ant)
        }
        self.groups = groups
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        var setting = DoctorSetting(storePath: storePath ?? StoreFile.defaultPath(environment: context.environment),
                                    logger: context.logger)
        setting.controller = controller
        setting.pluginDirectories = plugins
        setting.adapterOptions = adapterOptions
        setting.environment = context.environment
        let checks = DoctorChecks.all.filter { groups.contains($0.group) }
        let report = DoctorReport(findings: await DoctorChecks.run(checks, setting: setting))
        context.stdout.write(json ? report.json + "\n" : report.text)
        if !report.passed { throw ExitCode.failure }
    }
}
