import Foundation
import Testing

/// `ingestd run --no-ble` end to end under umockdev: the daemon's USB backend, the adapters' live sessions and the
/// store, with the real libusb on fake devices that replay usbmon captures strictly in order
/// (Fixtures/ORIGIN says how each capture was made).
@Suite(.serialized, .offCooperativePool, .enabled(if: UMockdev.isInstalled, UMockdev.skipReason))
struct DaemonUMockdevTests {
    static let firstPort = UMockdev.deviceSyspath
    static let secondPort = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2"
    /// The made-up key the ANT captures were generated with (Tests/AdapterTests/Captures/ant-plus/make-captures.py --key).
    static let key = "0123456789abcdef"

    let directory: URL
    let store: String
    let ingestd: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-umockdev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = directory.appendingPathComponent("health.sqlite").path
        ingestd = try #require(UMockdev.builtExecutable("ingestd"), "ingestd was not built next to the tests")
    }

    struct Stored: Equatable, CustomStringConvertible {
        var value: Double
        var device: String
        var start: String
        var description: String { "\(value) \(device) \(start)" }
    }

    /// `ingestd samples TYPE --json --unit UNIT` on the test's store (a reader next to the running daemon).
    func stored(_ type: String, unit: String) async throws -> [Stored] {
        let result = try await UMockdev.executeOffThePool(ingestd, ["samples", type, "--json", "--unit", unit, "--store", store,
                                                    "--from", "2000-01-01", "--to", "2100-01-01"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.lines.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let device = (object["device"] as? [String: Any])?["localIdentifier"] as? String ?? ""
            // Stored in the type's canonical unit and converted back: round away the last bits.
            let value = ((object["value"] as? NSNumber)?.doubleValue ?? .nan) * 1e6
            return Stored(value: value.rounded() / 1e6, device: device,
                          start: object["start"] as? String ?? "")
        }
    }

    func grant(_ source: String) async throws {
        let result = try await UMockdev.executeOffThePool(ingestd, ["auth", "grant", source, "--all", "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
    }

    func runANT(_ device: String, _ captures: [(sysfs: String, capture: String)]) throws -> UMockdevDaemon {
        try UMockdevDaemon(device: device, captures: captures, ingestd: ingestd,
                           ["run", "--no-ble", "--store", store, "--adapter-option", "ant-network-key=\(Self.key)",
                            "--adapter-option", "ant-batch-seconds=1"])
    }

    /// What the stick's capture carries: two heart-rate monitors (one sample each), a stride sensor (12 strides and
    /// 20 m between two pages, 2.5 m/s), a scale (computing, 80.50 kg twice, invalid).
    func expectTheStickSamples() async throws {
        let rates = try await stored("heartRate", unit: "count/min").sorted { $0.value < $1.value }
        #expect(rates.map(\.value) == [64, 71])
        #expect(rates.map(\.device) == ["ant+/120/67538", "ant+/120/1001"])
        #expect(try await stored("stepCount", unit: "count").map(\.value) == [24])
        #expect(try await stored("distanceWalkingRunning", unit: "m").map(\.value) == [20])
        #expect(try await stored("runningSpeed", unit: "m/s").map(\.value) == [2.5])
        let weights = try await stored("bodyMass", unit: "kg")
        #expect(weights.map(\.value) == [80.5])
        #expect(weights.map(\.device) == ["ant+/119/5150"])
    }

    @Test func aReplayedStickCommitsItsSamplesAndTheDaemonStopsCleanlyOnSIGTERM() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await grant("ant-plus")
        let daemon = try runANT("fake_ant.umockdev", [(Self.firstPort, "ant-daemon-session.pcapng")])
        let committed = try await daemon.wait {
            let rates = try await stored("heartRate", unit: "count/min").count
            let weights = try await stored("bodyMass", unit: "kg").count
            let steps = try await stored("stepCount", unit: "count").count
            return rates == 2 && weights == 1 && steps == 1
        }
        #expect(committed, "\(daemon.log)")
        #expect(daemon.isRunning, "a receiver keeps listening after the capture's last broadcast")
        let end = try #require(try await daemon.terminate(), "ingestd did not stop after SIGTERM")
        #expect(end.status == 0, "\(daemon.log)")
        #expect(end.seconds < 5, "SIGTERM to exit took \(end.seconds) s")  // 2 s was passed on a loaded CI machine
        try await expectTheStickSamples()
        #expect(daemon.log.contains("SIGTERM received: stopping sessions"))
        #expect(daemon.log.contains("device=0fcf:1008@1/2 session finished"))
        #expect(daemon.log.contains("stopped: 6 written, 0 duplicate, 0 replaced, 0 denied, 0 invalid"), "\(daemon.log)")
        // The key was given on the command line and matched the capture byte for byte; it is never logged.
        #expect(!daemon.log.contains(Self.key) && !daemon.log.contains("01 23 45 67"))
    }

    /// Two sticks: the second refuses the network key, so its session throws. Only that session ends (and is retried
    /// with backoff); the first stick's samples are committed and the daemon runs on until SIGTERM.
    @Test func aSessionThatThrowsEndsAloneWhileAnotherDeviceCommits() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await grant("ant-plus")
        let daemon = try runANT("fake_two_ants.umockdev", [(Self.firstPort, "ant-daemon-session.pcapng"),
                                                           (Self.secondPort, "ant-daemon-refused.pcapng")])
        let failed = await daemon.wait {
            daemon.log.contains("device=0fcf:1008@1/3 session failed (ant-plus: the stick refused set network key (code 0x28))")
        }
        #expect(failed, "\(daemon.log)")
        let committed = try await daemon.wait {
            let rates = try await stored("heartRate", unit: "count/min").count
            let weights = try await stored("bodyMass", unit: "kg").count
            return rates == 2 && weights == 1
        }
        #expect(committed, "\(daemon.log)")
        #expect(daemon.isRunning)
        let end = try #require(try await daemon.terminate(), "ingestd did not stop after SIGTERM")
        #expect(end.status == 0, "\(daemon.log)")
        #expect(end.seconds < 5, "SIGTERM to exit took \(end.seconds) s")  // 2 s was passed on a loaded CI machine
        try await expectTheStickSamples()
        #expect(daemon.log.contains("device=0fcf:1008@1/2 session finished"))
    }

    /// An Omron pedometer whose capture ends in the middle of day 5 of its history: the first session commits days
    /// 0-4 and ends when the device stops answering (no hang); the daemon retries the device with backoff and stops
    /// cleanly on SIGTERM.
    @Test func aPedometerThatGoesSilentMidHistoryEndsItsSessionAndKeepsTheDaysItGave() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await grant("omron-hj720it")
        let daemon = try UMockdevDaemon(
            device: "fake_omron.umockdev", captures: [(Self.firstPort, "omron-cut-mid-history.pcapng")], ingestd: ingestd,
            ["run", "--no-ble", "--store", store, "--tz", "UTC", "--adapter-option", "omron-today=2009-05-20"])
        let ended = await daemon.wait { daemon.log.contains("device=0590:0028@1/2 session failed") }
        #expect(ended, "\(daemon.log)")
        #expect(daemon.isRunning)
        let end = try #require(try await daemon.terminate(), "ingestd did not stop after SIGTERM")
        #expect(end.status == 0, "\(daemon.log)")
        #expect(end.seconds < 5, "SIGTERM to exit took \(end.seconds) s")  // 2 s was passed on a loaded CI machine
        // Daily totals of the vendor's export (pedometerData1.csv) for 5/16-5/20, the days before the cut.
        var perDay: [String: Double] = [:]
        for sample in try await stored("stepCount", unit: "count") { perDay[String(sample.start.prefix(10)), default: 0] += sample.value }
        #expect(perDay == ["2009-05-16": 8348, "2009-05-17": 2902, "2009-05-18": 1042, "2009-05-19": 2959, "2009-05-20": 271])
        #expect(try await stored("distanceWalkingRunning", unit: "m").count == 5)
        #expect(daemon.log.contains("committed 44 stepCount from omron-hj720it"), "\(daemon.log)")
    }

    /// `run --once` with a receiving stick present: its session never ends by itself, so it is stopped after `--listen`
    /// and what it gave is committed (before, the daemon waited for the session forever).
    @Test func onceStopsAStreamingStickAfterListeningAndKeepsWhatItGave() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await grant("ant-plus")
        let daemon = try UMockdevDaemon(device: "fake_ant.umockdev", captures: [(Self.firstPort, "ant-daemon-session.pcapng")],
                                        ingestd: ingestd,
                                        ["run", "--once", "--listen", "4", "--no-ble", "--store", store,
                                         "--adapter-option", "ant-network-key=\(Self.key)"])
        let ended = await daemon.wait(upTo: 60) { !daemon.isRunning }
        guard ended else {
            _ = try await daemon.terminate()
            Issue.record("run --once was still running 60 s after --listen 4: \(daemon.log)")
            return
        }
        #expect(daemon.process.terminationStatus == 0, "\(daemon.log)")
        #expect(daemon.log.contains("--once: listened 4.0 s (--listen); stopping the sessions still running"), "\(daemon.log)")
        #expect(daemon.log.contains("device=0fcf:1008@1/2 session finished"), "\(daemon.log)")
        try await expectTheStickSamples()
    }

    @Test func devicesNamesTheANTAdapterForTheFakeStick() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let ingestd = self.ingestd
        let result = try await UMockdev.offThePool {
            try UMockdev.run(ingestd, device: "fake_ant.umockdev", capture: "fake_ant.pcapng", ["devices", "--json"])
        }
        #expect(result.status == 0, "\(result.stderr)")
        let stick = try #require(result.lines.first { $0.contains(#""usb":"0fcf:1008""#) })
        #expect(stick.contains(#""adapter":"ant-plus","alsoMatching":[],"reason":null"#), "\(stick)")
    }
}
