import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs the `usb-probe` helper under umockdev: `umockdev-run` with a device tree and a usbmon
/// capture, or `umockdev-wrapper` for the in-process testbed (hotplug). The real, unmodified
/// libusb talks to the fake devices; nothing is mocked on our side.
enum UMockdev {
    /// The sysfs path of the fake device in every fixture.
    static let deviceSyspath = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1"

    static let runPath = executable(named: "umockdev-run")
    static let wrapperPath = executable(named: "umockdev-wrapper")

    /// Whether the umockdev tools are installed (Debian package `umockdev`).
    static var isInstalled: Bool { runPath != nil && wrapperPath != nil }
    static let skipReason: Comment =
        "umockdev is not installed (apt-get install umockdev, or scripts/bootstrap-tests): the libusb-under-umockdev tests cannot run"

    /// A fixture file in Tests/LibUSBTransportTests/Fixtures.
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
    }

    /// `usb-probe` as built next to the test bundle.
    static var probePath: String? { builtExecutable("usb-probe") }

    /// A product SwiftPM built next to the test bundle.
    static func builtExecutable(_ name: String) -> String? {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        return candidates.map { $0.appendingPathComponent(name).path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// `umockdev-run --device DEVICE --pcap SYSFS=CAPTURE -- usb-probe ARGUMENTS`.
    static func runProbe(device: String, capture: String, _ arguments: [String]) throws -> Result {
        let probe = try #require(probePath, "usb-probe was not built next to the tests")
        return try run(probe, device: device, capture: capture, arguments)
    }

    /// `umockdev-run --device DEVICE --pcap SYSFS=CAPTURE -- PROGRAM ARGUMENTS`.
    static func run(_ program: String, device: String, capture: String, _ arguments: [String]) throws -> Result {
        let run = try #require(runPath)
        return try execute(run, ["--device", fixture(device), "--pcap", "\(deviceSyspath)=\(fixture(capture))", "--", program]
                           + arguments)
    }

    /// `umockdev-wrapper usb-probe ARGUMENTS` (libumockdev-preload, no devices until the probe adds them).
    static func wrapProbe(_ arguments: [String]) throws -> Result {
        let wrapper = try #require(wrapperPath)
        let probe = try #require(probePath, "usb-probe was not built next to the tests")
        return try execute(wrapper, [probe] + arguments)
    }

    /// Runs a program; a run that takes longer than `limit` is killed (with its children) and
    /// fails the test, so a hang shows up as a failure, never as a stuck test run.
    static func execute(_ path: String, _ arguments: [String], limit: TimeInterval = 60) throws -> Result {
        let output = try ChildProcess.run(path, arguments, limit: limit, kill: killTree)
        return Result(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    /// Kills a process and its descendants (found through /proc/PID/task/PID/children).
    private static func killTree(_ pid: Int32) {
        let childrenFile = "/proc/\(pid)/task/\(pid)/children"
        if let text = try? String(contentsOfFile: childrenFile, encoding: .utf8) {
            for child in text.split(separator: " ").compactMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                killTree(child)
            }
        }
        kill(pid, SIGKILL)
    }

    private static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
