import AdapterKit
import ArgumentParsing
import ExternalAdapters
import Foundation
import IngestRuntime
import Pipeline
import ServiceNotification
import WebDashboard

/// `ingestd run` (the default command): the daemon.
struct RunCommand: Command {
    static let configuration = CommandConfiguration(
        name: "run",
        abstract: "Watch USB and Bluetooth LE for supported devices and ingest what they measure (the default).",
        discussion: """
            Devices are matched to adapters as they appear; each gets its own session, and a session that \
            fails ends alone (the device is tried again after a backoff). Samples pass the pipeline into \
            the store; samples of a source not yet granted or denied are held ('ingestd auth pending'), and \
            the new source is logged once. A device's history is acknowledged or erased only after the \
            commit, and never while its samples are only held. SIGTERM or \
            SIGINT stops cleanly (exit 0); SIGHUP re-reads grants, priorities and sinks (see 'ingestd sinks'). One daemon per store: it holds an exclusive \
            lock on STORE.lock, and a second daemon on the same store names the first and exits 1. Without a Bluetooth \
            controller, USB carries on (and vice versa). Logs go to stderr (under journald with <N> priorities \
            instead of timestamps) and never contain health values at info level. Started by systemd with \
            Type=notify, it reports ready, a status line (devices, samples, last commit), stopping and the \
            watchdog (WatchdogSec) over NOTIFY_SOCKET. --http ADDR:PORT serves the web dashboard from the \
            daemon as 'ingestd serve' does (anything but loopback needs --token @FILE).
            """,
        examples: [
            "ingestd run --config /etc/ingestd/ingestd.conf",
            "ingestd run --once --no-ble",
            "ingestd run --adapter AA:BB:CC:DD:EE:FF=gatt-health",
        ]
    )
    static let noUSBFlag = TypedFlag(Flag("no-usb", help: "Do not watch USB."))
    static let noBLEFlag = TypedFlag(Flag("no-ble", help: "Do not use Bluetooth LE."))
    static let onceFlag = TypedFlag(Flag("once", help: "Ingest what the present devices have, then exit (for cron and tests)."))
    static let listenOption = TypedOption<Duration>(Option(
        "listen", valueName: "SECONDS",
        help: "With --once: how long to listen to broadcasting devices (BLE and USB); a session still running then is stopped and what it gave is kept.",
        default: "10"))
    static let pinOption = TypedOption<String>(Option(
        "adapter", valueName: "DEVICE=ID",
        help: "Serve one device with one adapter only: a Bluetooth ADDRESS=ID or a USB VID:PID=ID (repeatable).",
        repeatable: true))
    static let httpOption = TypedOption<String>(Option(
        "http", valueName: "ADDR:PORT",
        help: "Serve the web dashboard too (as 'ingestd serve --listen ADDR:PORT'), e.g. 127.0.0.1:8080."))
    static let signature = Signature {
        StoreOption.self
        Self.noUSBFlag
        Self.noBLEFlag
        ControllerOption.self
        Self.onceFlag
        Self.listenOption
        PluginsOption.self
        AdapterSettingsOption.self
        KeyOption.self
        Self.pinOption
        ConfigFileOption.file.withHelp(
            "Read the configuration (store, tz, pins: adapter = DEVICE=ID, adapter-option = KEY=VALUE, …) from FILE instead of /etc/ingestd/ingestd.conf and ~/.config/ingestd/config; the command line wins ('ingestd config show').")
        TimeZoneOption.self
        PendingLimitOptions.self
        AssignToleranceOption.self
        Self.httpOption
        DashboardTokenOption.self
    }

    let storeFile: StoreOption
    let noUSB: Bool
    let noBLE: Bool
    let hci: Int
    let once: Bool
    let listen: Double
    let plugins: [String]
    let adapterOptions: [String: String]
    let keys: AdvertisementKeys
    let pins: AdapterPins
    /// `--tz`: the zone devices' local times are read in, and the dashboard's.
    let zoneOption: TimeZoneOption
    var zone: TimeZone { zoneOption.zone }
    let pendingLimits: PendingLimits
    let assignTolerance: Double
    /// Where `--http` serves the dashboard, and its token.
    let http: ListenAddress?
    let httpToken: String?

    init(_ arguments: ParsedValues) throws {
        storeFile = try StoreOption(arguments)
        noUSB = arguments.flag(Self.noUSBFlag)
        noBLE = arguments.flag(Self.noBLEFlag)
        hci = try ControllerOption(arguments).index
        once = arguments.flag(Self.onceFlag)
        listen = try arguments.seconds(Self.listenOption, in: 0.001...86_400) ?? 10
        plugins = try PluginsOption(arguments).directories
        zoneOption = try TimeZoneOption(arguments)
        // The configuration's pins and adapter options come first (ParsedValues.supply), so the
        // command line's win where both name the same device or option.
        adapterOptions = try AdapterSettingsOption(arguments).settings
        pendingLimits = try PendingLimitOptions(arguments).limits
        assignTolerance = try AssignToleranceOption(arguments).fraction
        keys = try KeyOption(arguments).keys
        httpToken = try DashboardTokenOption(arguments).token
        if let text = try arguments.value(Self.httpOption) {
            http = try DashboardTokenOption.address(text, argument: Self.httpOption.spelling, token: httpToken)
        } else {
            if httpToken != nil { throw UsageError.invalid("--token is for --http ADDR:PORT") }
            http = nil
        }
        let pinValues = try arguments.values(Self.pinOption)
        do {
            pins = try AdapterPins(parsing: pinValues)
        } catch {
            throw UsageError.invalidValue(arguments.rawValues(Self.pinOption).joined(separator: " "), argument: Self.pinOption.spelling,
                                          reason: error.description)
        }
    }

    func run(_ context: CommandContext) async throws {
        let path = storeFile.path ?? StoreFile.defaultPath(environment: context.environment)
        // Open once here so a bad store path fails with a clear error before anything starts.
        let store = try storeFile.openKeys(context)
        let storedKeys = try AdvertisementKeyArguments.stored(in: store, context: context)
        store.close()
        // One daemon per store: a second one says which process holds it and exits 1.
        let lock = try StoreLock(storePath: path)
        defer { withExtendedLifetime(lock) {} }
        // External adapters: their state goes to a status file that `ingestd adapters` reads.
        let publisher = ExternalAdapterStatusPublisher(
            path: ExternalAdapterStatusSnapshot.defaultPath(environment: context.environment),
            onError: { [logger = context.logger] error in logger.debug("adapter status file not written: \(error)") })
        var configuration = ExternalAdapterSupport.configuration(context: context)
        configuration.stateChanged = publisher.stateChanged
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: plugins, context: context,
                                                             configuration: configuration)
        publisher.attach(catalogue)
        for plugin in catalogue.plugins where plugin.brokenReason != nil {
            context.logger.warning("external adapter \(plugin.id) is broken: \(plugin.brokenReason ?? "")")
        }
        let known = Set(ExternalAdapterSupport.bluetoothAdapters(catalogue).map(\.descriptor.id))
            .union(ExternalAdapterSupport.usbAdapters(catalogue).map(\.descriptor.id))
        if let unknown = pins.unknownIDs(known: known).first {
            throw CommandError.unknownAdapter(id: unknown)
        }
        var backends: [any DeviceBackend] = []
        if !noUSB {
            backends += DaemonBackends.usb(adapters: ExternalAdapterSupport.usbAdapters(catalogue),
                                           options: adapterOptions, timeZone: zone,
                                           onceListen: .milliseconds(Int(listen * 1000)), pins: pins)
        }
        if !noBLE {
            backends += DaemonBackends.bluetooth(adapters: ExternalAdapterSupport.bluetoothAdapters(catalogue),
                                                 controller: UInt16(hci), timeZone: zone,
                                                 onceListen: .milliseconds(Int(listen * 1000)), pins: pins,
                                                 options: adapterOptions, keys: storedKeys.merging(keys))
        }
        // Under systemd (Type=notify): ready, status, stopping and the watchdog over NOTIFY_SOCKET.
        var notifier: ServiceNotifier?
        do { notifier = try ServiceNotifier(environment: context.environment) } catch {
            context.logger.warning("not notifying the service manager: \(error)")
        }
        let daemon = Daemon(options: DaemonOptions(storePath: path, once: once, pendingLimits: pendingLimits,
                                                   assignTolerance: assignTolerance, exitsWhenShutdownHangs: true,
                                                   notifier: notifier),
                            backends: backends, logger: context.logger)
        var dashboard: (server: HTTPServer, store: any QueryStore)?
        if let http {
            let reader = try StoreOption.openQuery(path, context: context)
            do {
                dashboard = (try DashboardServing.start(store: reader, storePath: path, address: http, token: httpToken, zone: zoneOption,
                                                        context: context), reader)
            } catch {
                reader.close()
                throw error
            }
        }
        defer {
            dashboard?.server.stop()
            dashboard?.store.close()
        }
        try await daemon.run()
    }
}
