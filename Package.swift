// swift-tools-version:6.1
// ingestd: wearables and home medical devices into clean, HealthKit-shaped health data.
import PackageDescription

/// Fuzz targets are compiled as libraries so that libFuzzer can bring its own `main`.
let fuzzSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

/// The built-in adapters: one module per folder `Plugins/<name>/` (its README.md left out), built on the adapter
/// contract and compiled into ingestd through `BuiltinAdapters`. Adding a device is its folder, this line and its
/// line in `Plugins/BuiltinAdapters/BuiltinAdapters.swift` (see Plugins/README.md).
let builtinAdapterModules = [
    "XiaomiScale", "XiaomiMiBeacon", "BTHome", "GATTHealthProfiles", "DSD6Band", "YunmaiScale", "BeurerScale", "BeurerStandardScale",
    "HidrateSpark",  // Bluetooth LE
    "OmronBloodPressure", "QNGATTScale", "EufyP2Scale", "ColmiRing",  // Bluetooth LE conversations
    "MedisanaBloodPressure", "FemometerThermometer", "BerryMedOximeter",
    "QNScale", "EtekcityScale", "EufyScale", "MiBandHeartRate", "HeartRateStraps", "RoomThermometers",  // BLE broadcasts
    "AmazfitScale", "SenssunScale", "LaicaScale",
    "ANTPlus", "OmronPedometer", "TEMPer",  // USB
]
/// Adapters that need more than the adapter contract: the encrypted advertisements' AES-CCM, or
/// another adapter module they build on (a vendor's variant of a standard profile).
let builtinAdapterExtraDependencies: [String: [Target.Dependency]] = [
    "XiaomiMiBeacon": ["AdvertisementCrypto"], "BTHome": ["AdvertisementCrypto"],
    "BeurerStandardScale": ["GATTHealthProfiles"], "EufyP2Scale": ["AdvertisementCrypto", "EufyScale"],
    "MedisanaBloodPressure": ["GATTHealthProfiles"],
    "FemometerThermometer": ["GATTHealthProfiles"], "BerryMedOximeter": ["GATTHealthProfiles"],
]
let builtinAdapterTargets: [Target] = builtinAdapterModules.map { name in
    .target(name: name, dependencies: ["AdapterKit", "HealthModel", "Transport"] + (builtinAdapterExtraDependencies[name] ?? []),
            path: "Plugins/\(name)", exclude: ["README.md"])
}

let package = Package(
    name: "ingestd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ingestd", targets: ["ingestd"]),
        .executable(name: "IngestBench", targets: ["IngestBench"]),
        .executable(name: "ingestd-adapter-xiaomi-scale", targets: ["ingestd-adapter-xiaomi-scale"]),
        .executable(name: "ingestd-adapter-dsd6-band", targets: ["ingestd-adapter-dsd6-band"]),
    ],
    targets: [
        // C libraries from Debian, through module maps and shim headers.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibUSB", pkgConfig: "libusb-1.0", providers: [.apt(["libusb-1.0-0-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CWebSockets", providers: [.apt(["libwebsockets-dev"])]),
        // The four above are not linked (no link line, no pkg-config, whose --libs would link them): their
        // functions are defined here, forwarding to the library opened with dlopen when a sink of that kind
        // first needs it (an idle daemon maps none of them).
        .target(name: "CSinkLibraries", dependencies: ["CCurl", "CLibPQ", "CMosquitto", "CMicroHTTPD", "CWebSockets"]),
        // DynamicLibrary: opens a sink library on first use, naming the Debian package when it is missing.
        .target(name: "SinkLibraries", dependencies: ["CSinkLibraries"]),
        // libmicrohttpd: the HTTP server of `ingestd serve` and `run --http` (it parses requests; ingestd routes them).
        // Not linked either (no link line, no pkg-config): opened through SinkLibraries when the server first starts.
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        // OpenSSL's libcrypto: AES-128-CCM (EVP) for encrypted advertisements. Linked (a daemon decrypts
        // advertisements from its first scan on); libssl is not: only the sink libraries opened on demand bring it.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // The health model: pure values, Foundation only.
        .target(name: "HealthModel"),
        // Transport-neutral device I/O types: BLE addresses, UUIDs, advertisements, GATT events.
        .target(name: "Transport"),
        // Transport's USB protocols over libusb-1.0: enumerate, hotplug, open/claim/detach, transfers.
        .target(name: "LibUSBTransport", dependencies: ["CLibUSB", "Transport"]),
        // Test helper: drives LibUSBTransport under umockdev (run by LibUSBTransportTests).
        .executableTarget(name: "usb-probe", dependencies: ["LibUSBTransport", "Transport"]),
        // (pure) BLE wire knowledge: HCI packets, ATT PDUs, AD structures, the HCI/ATT reconstruction
        // of a trace. The only place BLE byte constants live.
        .target(name: "BLEWire", dependencies: ["Transport"]),
        // Readers and writers of captured device logs (btsnoop, pcap, pcapng, usbmon).
        .target(name: "CaptureFormats", dependencies: ["BLEWire", "Transport"]),
        // Transport over BlueZ sockets: HCI LE scanning and an ATT/GATT client over L2CAP CID 4.
        .target(name: "BlueZTransport", dependencies: ["BLEWire", "CBluetooth", "Logging", "Transport"]),
        // A simulated HCI controller and GATT peripherals speaking bytes over a socketpair.
        .target(name: "BLESimulators", dependencies: ["BLEWire", "BlueZTransport", "Transport", "AdvertisementCrypto"]),
        // The one redaction layer: known secrets and URL credentials replaced in every printed or stored error.
        .target(name: "Redaction"),
        // One Logger and one level vocabulary; libraries take a logger.
        .target(name: "Logging"),
        // sd_notify's datagram protocol: READY, STATUS, STOPPING and the watchdog to NOTIFY_SOCKET.
        .target(name: "ServiceNotification"),
        // argc/argv as the C library passed them to the program's initializers (no /proc needed).
        .target(name: "CProcessArguments"),
        // madvise(MADV_PAGEOUT) on the executable's read-only segments: the idle daemon returns its start-up pages.
        .target(name: "CResidentMemory"),
        // The command-line parser: commands, signatures, parsed values, help, the runner.
        .target(name: "ArgumentParsing", dependencies: ["CProcessArguments", "Logging"]),
        // The adapter contract: descriptors, device matches, sessions, the event router.
        .target(name: "AdapterKit", dependencies: ["HealthModel", "Transport"]),
        // AES-128-CCM through libcrypto (the only place its pointers live) and the per-device discipline of
        // encrypted advertisements (key, counters, refusals explained once).
        .target(name: "AdvertisementCrypto", dependencies: ["AdapterKit", "CCrypto", "Transport"]),
        // The external adapters' JSON-lines wire protocol, shared by the daemon and plugin mains.
        .target(name: "ExternalAdapterProtocol", dependencies: ["AdapterKit", "HealthModel", "Logging", "Transport"]),
        // External adapters: plugin executables found, described, run and supervised as untrusted processes.
        .target(name: "ExternalAdapters", dependencies: ["AdapterKit", "ExternalAdapterProtocol", "HealthModel", "Logging", "Transport"]),
        // Normalize, validate, authorize, hand to the store; the SampleStore port.
        .target(name: "Pipeline", dependencies: ["HealthModel"]),
        // Export formats (FHIR R4 Bundle, CSV, JSON lines) as streaming writers over HealthModel records.
        .target(name: "Export", dependencies: ["HealthModel"]),
        // Charts as SVG (no script, no network) with a data table each, shared by the dashboard and the report.
        .target(name: "Charts"),
        // The web dashboard, JSON API and /metrics over the query port, on libmicrohttpd; the printable report.
        .target(name: "WebDashboard", dependencies: ["CMicroHTTPD", "Charts", "HealthModel", "Pipeline", "SinkLibraries"]),
        // A small Swift face on sqlite3 and the default SampleStore.
        .target(name: "SQLiteStore", dependencies: ["CSQLite", "HealthModel", "Pipeline"]),
        // Apple Health exports (export.zip / export.xml) streamed into records: zip central directory,
        // inflate (zlib), a pull XML reader, the export's record mapping.
        .target(name: "AppleHealthImport", dependencies: ["CZlib", "Handover", "HealthModel"]),
        // A producer thread handing batches to the caller (reading and decoding overlap with storing).
        .target(name: "Handover"),
        // The shared PostgreSQL store of a fleet (libpq): connection, versioned schema, the sink's batch writer,
        // and the read side the query commands use with --store postgresql://….
        .target(name: "PostgresStore", dependencies: ["CLibPQ", "HealthModel", "Pipeline", "SinkLibraries"]),
        // Sinks: cursors over the change feed, the delivery engine, MQTT (libmosquitto), HTTP push (libcurl),
        // PostgreSQL (through PostgresStore's writer).
        .target(name: "Delivery", dependencies: ["HealthModel", "Pipeline", "CMosquitto", "CCurl", "CWebSockets", "PostgresStore", "Redaction", "SinkLibraries"]),
        // The runtime: the daemon and its device backends, the ingest service, the capture replay
        // engine, the capture recorders, input files, the adapter catalogue (built-in + external).
        .target(name: "IngestRuntime", dependencies: [
            "AdapterKit", "BLEWire", "BlueZTransport", "BuiltinAdapters", "CaptureFormats", "ExternalAdapters", "HealthModel",
            "LibUSBTransport", "Logging", "Pipeline", "SQLiteStore", "Transport", "Delivery", "ServiceNotification",
            "CResidentMemory", "Redaction", "WebDashboard",
        ]),
        // Commands and wiring; only `ingestd`'s main imports it.
        .target(name: "IngestCLI", dependencies: [
            "ArgumentParsing", "IngestRuntime", "Logging", "ExternalAdapterProtocol", "BLEWire", "Export", "HealthModel", "Pipeline", "SQLiteStore", "CaptureFormats", "Transport", "AdapterKit", "BuiltinAdapters",
            "LibUSBTransport", "BlueZTransport", "ExternalAdapters", "Delivery", "AppleHealthImport", "PostgresStore", "Handover",
            "Redaction", "WebDashboard", "ServiceNotification", "ANTPlus",
        ]),
        // The ordered registry of built-in adapters (exact matches before generic ones).
        .target(
            name: "BuiltinAdapters",
            dependencies: ["AdapterKit"] + builtinAdapterModules.map { .target(name: $0) },
            path: "Plugins/BuiltinAdapters"
        ),
        .executableTarget(name: "ingestd", dependencies: ["ArgumentParsing", "IngestCLI"]),
        .executableTarget(
            name: "IngestBench",
            dependencies: ["HealthModel", "Pipeline", "SQLiteStore", "CSQLite", "BLEWire", "CaptureFormats",
                           "BuiltinAdapters", "AdapterKit", "Transport",
                           "IngestRuntime", "BLESimulators", "BlueZTransport", "Logging", "Delivery",
                           "PostgresStore", "LocalPostgres", "AdvertisementCrypto", "CCrypto", "WebDashboard"]
        ),

        // The Xiaomi scale adapter built as an external adapter executable (ExternalAdapterMain).
        .executableTarget(name: "ingestd-adapter-xiaomi-scale", dependencies: ["AdapterKit", "ExternalAdapterProtocol", "XiaomiScale"],
                          path: "Plugins/ExternalXiaomiScale"),
        // The DS-D6 band adapter as a protocol-2 plugin holding its conversation through the daemon.
        .executableTarget(name: "ingestd-adapter-dsd6-band", dependencies: ["ExternalAdapterProtocol", "DSD6Band"],
                          path: "Plugins/ExternalDSD6Band"),

        // Helpers shared by the test targets: hex literals, advertisement builders, the ingestd
        // process runner, log collection, the Omron CSV export, the fragmentation verifier.
        .target(name: "TestSupport", dependencies: ["BLEWire", "Transport"], path: "Tests/TestSupport", exclude: ["LocalPostgres"]),
        // A throwaway PostgreSQL server (initdb + pg_ctl in a temp dir, as the postgres user) for tests and IngestBench.
        .target(name: "LocalPostgres", path: "Tests/TestSupport/LocalPostgres"),
        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel", "TestSupport"]),
        .testTarget(name: "HandoverTests", dependencies: ["Handover", "TestSupport"]),
        .testTarget(name: "AppleHealthImportTests", dependencies: ["AppleHealthImport", "HealthModel", "TestSupport"],
                    exclude: ["Fixtures"]),
        // Export writers on real records; FHIR Bundles validated by the fhir.resources package (R4) in a venv;
        // `ingestd export` run as a process (a large export in bounded memory, measured from /proc).
        .testTarget(name: "ExportTests", dependencies: ["Export", "HealthModel", "SQLiteStore", "Pipeline", "TestSupport", "ingestd"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "SQLiteStore", "HealthModel"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SQLiteStore", "Pipeline", "HealthModel"]),
        // Real receivers: a Mosquitto broker and a Python HTTP server started on 127.0.0.1 by the tests,
        // the engine in process and the built ingestd (kill -9 mid-delivery); a real PostgreSQL (LocalPostgres).
        .testTarget(name: "DeliveryTests", dependencies: ["Delivery", "SQLiteStore", "Pipeline", "HealthModel", "TestSupport", "ingestd",
                                                          "LocalPostgres", "PostgresStore", "Redaction"],
                    exclude: ["Receivers"]),
        .testTarget(name: "RedactionTests", dependencies: ["Redaction"]),
        // Runs the built ingestd binary (SIGKILL mid-replay, then replay again).
        // `ingestd serve` and `ingestd report` in headless Chromium and against hostile raw clients; the SVG charts.
        .testTarget(name: "WebDashboardTests", dependencies: ["Charts", "WebDashboard", "TestSupport", "ingestd"]),
        .testTarget(name: "IngestdProcessTests", dependencies: ["ingestd", "TestSupport"], exclude: ["Captures"]),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing", "Logging"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        // The .deb built, linted and installed, upgraded, removed and purged in a fresh Debian 12 root (as root).
        .testTarget(name: "PackagingTests", dependencies: ["TestSupport"]),
        // The sink libraries opened on first use; an idle daemon maps none (its /proc/PID/maps).
        .testTarget(name: "SinkLibrariesTests", dependencies: ["SinkLibraries", "TestSupport", "ingestd"]),
        // The sd_notify datagrams on a real unix datagram socket, from the notifier and from `ingestd run`.
        .testTarget(name: "ServiceNotificationTests", dependencies: ["ServiceNotification", "TestSupport", "ingestd"]),
        // The commands in-process (the CLI's own tests), and the runtime end to end through them.
        .testTarget(name: "IngestCLITests", dependencies: [
            "IngestCLI", "IngestRuntime", "ArgumentParsing", "Logging", "BLEWire", "HealthModel", "AdapterKit", "BuiltinAdapters",
            "BLESimulators", "BlueZTransport", "SQLiteStore", "Transport", "CaptureFormats", "ExternalAdapters", "TestSupport", "WebDashboard",
        ]),
        .testTarget(
            name: "AdvertisementAdaptersTests",
            dependencies: ["XiaomiScale", "XiaomiMiBeacon", "BTHome", "QNScale", "AdvertisementCrypto", "AdapterKit", "HealthModel",
                           "Transport", "TestSupport"]
        ),
        .testTarget(name: "GATTHealthProfilesTests",
                    dependencies: ["GATTHealthProfiles", "OmronBloodPressure", "QNGATTScale", "EufyP2Scale", "AdvertisementCrypto",
                                   "ColmiRing", "BerryMedOximeter", "AdapterKit", "HealthModel", "Transport", "TestSupport"]),
        // Runs usb-probe and `ingestd devices` under umockdev-run / umockdev-wrapper: the real
        // libusb on replayed usbmon captures.
        .testTarget(name: "LibUSBTransportTests",
                    dependencies: ["LibUSBTransport", "Transport", "usb-probe", "ingestd", "AdapterKit", "BuiltinAdapters",
                                   "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "BlueZTransportTests", dependencies: ["BLEWire", "BlueZTransport", "BLESimulators", "Transport", "TestSupport"]),
        .testTarget(
            name: "USBAdaptersTests",
            dependencies: ["ANTPlus", "OmronPedometer", "TEMPer", "AdapterKit", "HealthModel", "Transport", "Pipeline",
                           "SQLiteStore", "CaptureFormats", "TestSupport"]
        ),
        // Runs the built ingestd on usbmon captures other software made (tolerant replay): Omron vendor sessions,
        // generated ANT+ channel-mode captures.
        .testTarget(name: "USBReplayTests", dependencies: ["ingestd", "TestSupport"]),
        .testTarget(
            name: "ExternalAdaptersTests",
            dependencies: ["ExternalAdapters", "ExternalAdapterProtocol", "Logging", "AdapterKit", "BuiltinAdapters", "XiaomiScale", "HealthModel", "Transport", "Pipeline",
                           "SQLiteStore", "BLEWire", "CaptureFormats", "TestSupport", "ingestd-adapter-xiaomi-scale"],
            exclude: ["Plugins"]
        ),
        .testTarget(
            name: "CaptureFormatsTests",
            dependencies: ["BLEWire", "CaptureFormats", "Transport", "TestSupport"],
            exclude: ["Captures"]
        ),
        // libFuzzer targets (scripts/fuzz.sh builds them with --sanitize=fuzzer -DFUZZING); a plain
        // build makes each a tool that replays crash files: `fuzz-gatt crash-…`.
        .target(name: "FuzzSupport", dependencies: ["AdapterKit", "BLEWire", "CaptureFormats", "HealthModel", "Transport"],
                path: "Tests/Fuzz/Support"),
        .executableTarget(name: "fuzz-btsnoop", dependencies: ["CaptureFormats", "FuzzSupport"],
                          path: "Tests/Fuzz/BTSnoop", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-pcap", dependencies: ["CaptureFormats", "FuzzSupport"],
                          path: "Tests/Fuzz/Pcap", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-pcapng", dependencies: ["CaptureFormats", "FuzzSupport"],
                          path: "Tests/Fuzz/PcapNG", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-hci", dependencies: ["AdapterKit", "BuiltinAdapters", "BLEWire", "CaptureFormats", "Transport", "FuzzSupport"],
                          path: "Tests/Fuzz/HCITrace", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-gatt", dependencies: ["AdapterKit", "GATTHealthProfiles", "Transport", "FuzzSupport"],
                          path: "Tests/Fuzz/GATT", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-xiaomi", dependencies: ["AdapterKit", "XiaomiScale", "Transport", "FuzzSupport"],
                          path: "Tests/Fuzz/Xiaomi", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-bthome", dependencies: ["AdapterKit", "BTHome", "Transport", "FuzzSupport"],
                          path: "Tests/Fuzz/BTHome", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-mibeacon", dependencies: ["AdapterKit", "AdvertisementCrypto", "XiaomiMiBeacon", "Transport",
                                                              "FuzzSupport"],
                          path: "Tests/Fuzz/MiBeacon", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-records", dependencies: ["HealthModel", "FuzzSupport"],
                          path: "Tests/Fuzz/HealthRecords", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-units", dependencies: ["HealthModel", "FuzzSupport"],
                          path: "Tests/Fuzz/Units", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-redaction", dependencies: ["Redaction", "FuzzSupport"],
                          path: "Tests/Fuzz/Redaction", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-mqtt-topics", dependencies: ["Delivery", "FuzzSupport"],
                          path: "Tests/Fuzz/MQTTTopics", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-zip", dependencies: ["AppleHealthImport", "CZlib", "FuzzSupport"],
                          path: "Tests/Fuzz/ZipEntries", swiftSettings: fuzzSettings),
        .executableTarget(name: "fuzz-plugin-output", dependencies: ["ExternalAdapterProtocol", "ExternalAdapters", "HealthModel", "FuzzSupport"],
                          path: "Tests/Fuzz/PluginOutput", swiftSettings: fuzzSettings),
        // Every adapter's captures (built from published byte vectors) replayed as `ingestd decode` does.
        .testTarget(
            name: "AdapterTests",
            dependencies: [
                "IngestRuntime", "BuiltinAdapters", "AdapterKit", "BLEWire", "CaptureFormats", "HealthModel", "Transport",
                "GATTHealthProfiles", "XiaomiScale", "DSD6Band", "ingestd", "TestSupport",
            ],
            exclude: ["Captures"]
        ),
    ] + builtinAdapterTargets,
    swiftLanguageModes: [.v6]
)
