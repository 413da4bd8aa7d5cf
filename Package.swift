// swift-tools-version:6.1
// ingestd: wearables and home medical devices into clean, HealthKit-shaped health data.
import PackageDescription

let package = Package(
    name: "ingestd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ingestd", targets: ["ingestd"]),
        .executable(name: "IngestBench", targets: ["IngestBench"]),
    ],
    targets: [
        // C libraries from Debian, through module maps and shim headers.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibUSB", pkgConfig: "libusb-1.0", providers: [.apt(["libusb-1.0-0-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),

        // The health model: pure values, Foundation only.
        .target(name: "HealthModel"),
        // Transport-neutral device I/O types: BLE addresses, UUIDs, advertisements, GATT events.
        .target(name: "Transport"),
        // Transport's USB protocols over libusb-1.0: enumerate, hotplug, open/claim/detach, transfers.
        .target(name: "LibUSBTransport", dependencies: ["CLibUSB", "Transport"]),
        // Test helper: drives LibUSBTransport under umockdev (run by LibUSBTransportTests).
        .executableTarget(name: "usb-probe", dependencies: ["LibUSBTransport", "Transport"]),
        // Readers and writers of captured device logs (btsnoop, pcap, pcapng).
        .target(name: "CaptureFormats", dependencies: ["Transport"]),
        // Transport over BlueZ sockets: HCI LE scanning and an ATT/GATT client over L2CAP CID 4.
        .target(name: "BlueZTransport", dependencies: ["CBluetooth", "Transport", "CaptureFormats"]),
        // A simulated HCI controller and GATT peripherals speaking bytes over a socketpair.
        .target(name: "BLESimulators", dependencies: ["BlueZTransport", "Transport"]),
        // The adapter contract: descriptors, device matches, sessions, the event router.
        .target(name: "AdapterKit", dependencies: ["HealthModel", "Transport"]),
        // Normalize, validate, authorize, hand to the store; the SampleStore port.
        .target(name: "Pipeline", dependencies: ["HealthModel"]),
        // A small Swift face on sqlite3 and the default SampleStore.
        .target(name: "SQLiteStore", dependencies: ["CSQLite", "HealthModel", "Pipeline"]),
        // Commands, argument parsing, logging, wiring.
        .target(name: "IngestCLI", dependencies: [
            "HealthModel", "Pipeline", "SQLiteStore", "CaptureFormats", "Transport", "AdapterKit", "BuiltinAdapters",
            "LibUSBTransport", "BlueZTransport",
        ]),
        // The ordered registry of built-in adapters (exact matches before generic ones).
        .target(
            name: "BuiltinAdapters",
            dependencies: ["AdapterKit", "XiaomiScale", "BTHome", "GATTHealthProfiles", "ANTPlus", "OmronPedometer", "TEMPer"],
            path: "Plugins/BuiltinAdapters"
        ),
        // USB device adapters (built in): ANT+ sticks, the Omron HJ-720IT pedometer, TEMPer thermometers.
        .target(name: "ANTPlus", dependencies: ["AdapterKit", "HealthModel", "Transport"],
                path: "Plugins/ANTPlus", exclude: ["README.md"]),
        .target(name: "OmronPedometer", dependencies: ["AdapterKit", "HealthModel", "Transport"],
                path: "Plugins/OmronPedometer", exclude: ["README.md"]),
        .target(name: "TEMPer", dependencies: ["AdapterKit", "HealthModel", "Transport"],
                path: "Plugins/TEMPer", exclude: ["README.md"]),
        .executableTarget(name: "ingestd", dependencies: ["IngestCLI"]),
        // Bluetooth SIG standard health profiles (weight, body composition, thermometer, heart rate, RSC, BP, glucose, PLX).
        .target(name: "GATTHealthProfiles", dependencies: ["AdapterKit", "HealthModel", "Transport"], path: "Plugins/GATTHealthProfiles",
                exclude: ["README.md"]),
        .executableTarget(
            name: "IngestBench",
            dependencies: ["HealthModel", "Pipeline", "SQLiteStore", "CSQLite", "CaptureFormats",
                           "IngestCLI", "BLESimulators", "BlueZTransport", "BuiltinAdapters", "AdapterKit", "Transport"]
        ),

        // Built-in advertisement adapters: Xiaomi Mi scales and BTHome v2.
        .target(name: "XiaomiScale", dependencies: ["AdapterKit", "HealthModel", "Transport"], path: "Plugins/XiaomiScale",
                exclude: ["README.md"]),
        .target(name: "BTHome", dependencies: ["AdapterKit", "HealthModel", "Transport"], path: "Plugins/BTHome",
                exclude: ["README.md"]),

        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "SQLiteStore", "HealthModel"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SQLiteStore", "Pipeline", "HealthModel"]),
        // Runs the built ingestd binary (SIGKILL mid-replay, then replay again).
        .testTarget(name: "IngestdProcessTests", dependencies: ["ingestd"]),
        .testTarget(name: "IngestCLITests", dependencies: [
            "IngestCLI", "HealthModel", "AdapterKit", "BuiltinAdapters", "BLESimulators", "BlueZTransport", "SQLiteStore", "Transport",
            "CaptureFormats",
        ]),
        .testTarget(
            name: "AdvertisementAdaptersTests",
            dependencies: ["XiaomiScale", "BTHome", "AdapterKit", "HealthModel", "Transport"]
        ),
        .testTarget(name: "GATTHealthProfilesTests", dependencies: ["GATTHealthProfiles", "AdapterKit", "HealthModel", "Transport"]),
        // Runs usb-probe and `ingestd devices` under umockdev-run / umockdev-wrapper: the real
        // libusb on replayed usbmon captures.
        .testTarget(name: "LibUSBTransportTests",
                    dependencies: ["LibUSBTransport", "Transport", "usb-probe", "ingestd", "AdapterKit", "BuiltinAdapters"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "BlueZTransportTests", dependencies: ["BlueZTransport", "BLESimulators", "Transport"]),
        .testTarget(
            name: "USBAdaptersTests",
            dependencies: ["ANTPlus", "OmronPedometer", "TEMPer", "AdapterKit", "HealthModel", "Transport", "Pipeline",
                           "SQLiteStore", "CaptureFormats"],
            exclude: ["Captures"]
        ),
        .testTarget(
            name: "CaptureFormatsTests",
            dependencies: ["CaptureFormats", "Transport"],
            exclude: ["Captures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
