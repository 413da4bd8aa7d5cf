import Dispatch
import ExternalAdapters
import Foundation
import HealthModel
import IngestRuntime
import Logging
import Synchronization

/// How one finding of `ingestd doctor` came out. A failure stops something ingestd is set up to
/// do (or puts data at risk) and makes the command exit 1; a warning is worth knowing but may be
/// intended (no bluetoothd, not in the ingestd group); `skip` means the check cannot be made here
/// or does not apply (no store yet to check the sinks of).
enum DoctorStatus: String, Sendable, Hashable, CaseIterable {
    case ok, warn, fail, skip

    /// The mark at the start of a text line.
    var mark: String {
        switch self {
        case .ok: "✓"
        case .warn: "!"
        case .fail: "✗"
        case .skip: "-"
        }
    }
}

/// The groups of checks, as `--only` names them.
enum DoctorGroup: String, Sendable, Hashable, CaseIterable {
    case bluetooth, usb, store, sinks, plugins, ant, clock
}

/// One result of a check: what was found and, when it is not ok, the command that fixes it.
struct DoctorFinding: Sendable, Hashable {
    /// The camelCase id of what was checked, e.g. `storePermissions`.
    var id: String
    var group: DoctorGroup
    /// What the finding is about when a check reports several (a sink's name, a plugin's id, a USB device).
    var subject: String?
    var status: DoctorStatus
    /// One sentence on what was found.
    var summary: String
    /// The command (or step) that fixes it; nil when there is nothing to fix.
    var fix: String?

    init(_ id: String, _ group: DoctorGroup, subject: String? = nil, _ status: DoctorStatus, _ summary: String,
         fix: String? = nil) {
        self.id = id
        self.group = group
        self.subject = subject
        self.status = status
        self.summary = summary
        self.fix = fix
    }

    /// `✗ store permissions: … — fix: chmod 600 …`.
    var line: String {
        var line = status.mark + " " + id + (subject.map { " [\(PrintableText.escaped($0))]" } ?? "") + ": " + Self.oneLine(summary)
        if let fix, status != .ok { line += " — fix: " + Self.oneLine(fix) }
        return line
    }

    /// `text` on one line: what a plugin or a receiver said may span several.
    static func oneLine(_ text: String) -> String {
        PrintableText.escaped(text.split(whereSeparator: \.isNewline).joined(separator: " / "))
    }

    var json: String {
        "{\"id\":" + JSONText.quoted(id) + ",\"group\":" + JSONText.quoted(group.rawValue)
            + ",\"subject\":" + (subject.map(JSONText.quoted) ?? "null")
            + ",\"status\":" + JSONText.quoted(status.rawValue) + ",\"summary\":" + JSONText.quoted(summary)
            + ",\"fix\":" + (fix.map(JSONText.quoted) ?? "null") + "}"
    }
}

/// What the checks look at: the command's options and the places on the system they read (the
/// tests point these at temporary files).
struct DoctorSetting: Sendable {
    var storePath: String
    init(storePath: String, logger: Logger) {
        self.storePath = storePath
        self.logger = logger
    }
    var controller: UInt16 = 0
    var pluginDirectories: [String] = []
    /// The adapter options of the configuration file and `--adapter-option` (the ANT+ key).
    var adapterOptions: [String: String] = [:]
    var environment: [String: String] = [:]
    var logger: Logger
    var rfkillDirectory = "/sys/class/rfkill"
    var processStatusFile = "/proc/self/status"
    var procDirectory = "/proc"
    var udevRuleDirectories = ["/etc/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"]
    /// How long a sink's receiver has to accept a TCP connection.
    var connectTimeout: Duration = .seconds(3)
    /// The external adapters, described once for every check that needs them.
    let plugins = DoctorPlugins()

    /// The plugin catalogue of ``pluginDirectories`` (described on first use).
    var catalogue: ExternalAdapterCatalogue {
        plugins.catalogue {
            AdapterCatalogue.loadExternal(directories: pluginDirectories, environment: environment,
                                          configuration: AdapterCatalogue.configuration(environment: environment, logger: logger))
        }
    }
}

/// The plugin catalogue shared by the checks of one doctor run (describing plugins starts their processes).
final class DoctorPlugins: Sendable {
    private let loaded = Mutex<ExternalAdapterCatalogue?>(nil)

    func catalogue(_ load: () -> ExternalAdapterCatalogue) -> ExternalAdapterCatalogue {
        loaded.withLock { cached in
            if let cached { return cached }
            let catalogue = load()
            cached = catalogue
            return catalogue
        }
    }
}

/// One check of `ingestd doctor`: small, synchronous (it runs on its own thread and is abandoned
/// when it passes ``timeLimit``), and never throwing: whatever goes wrong is a finding.
protocol DoctorCheck: Sendable {
    /// The group `--only` selects it by.
    var group: DoctorGroup { get }
    /// The id of the timeout finding when the check takes too long.
    var id: String { get }
    /// How long it may take.
    var timeLimit: Duration { get }
    func run(_ setting: DoctorSetting) -> [DoctorFinding]
}

extension DoctorCheck {
    var timeLimit: Duration { .seconds(5) }
}

/// The checks, in the order they are made and printed (the registry of `ingestd doctor`).
enum DoctorChecks {
    static let all: [any DoctorCheck] = [
        KernelBluetoothCheck(), ControllerCheck(), RFKillCheck(), CapabilitiesCheck(), BluetoothdCheck(),
        UdevRulesCheck(), GroupMembershipCheck(), USBAccessCheck(),
        StorePermissionsCheck(), StoreContentsCheck(), DiskSpaceCheck(),
        SinksCheck(),
        PluginsCheck(),
        ANTNetworkKeyCheck(),
        ClockCheck(),
    ]

    /// Runs `checks` one after the other, each bounded by its time limit.
    static func run(_ checks: [any DoctorCheck], setting: DoctorSetting) async -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        for check in checks { findings += await bounded(check, setting: setting) }
        return findings
    }

    /// The check's findings, or one failure saying it did not finish within its limit (its thread
    /// is left to finish on its own; the command does not wait for it).
    static func bounded(_ check: any DoctorCheck, setting: DoctorSetting) async -> [DoctorFinding] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[DoctorFinding], Never>) in
            let pending = Mutex<CheckedContinuation<[DoctorFinding], Never>?>(continuation)
            let finish: @Sendable ([DoctorFinding]) -> Void = { findings in
                pending.withLock { waiting in
                    waiting?.resume(returning: findings)
                    waiting = nil
                }
            }
            // Threads of their own, not the shared pool: a check stuck in a system call holds only
            // its thread, and the limit fires on time however busy the pool is.
            Thread { finish(check.run(setting)) }.start()
            let limit = check.timeLimit
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
            Thread {
                Thread.sleep(forTimeInterval: seconds)
                finish([DoctorFinding(check.id, check.group, .fail,
                                      "did not finish within \(JSONNumber.format(seconds)) s",
                                      fix: "run 'ingestd doctor --only \(check.group.rawValue) --log-level debug' to see where it waits")])
            }.start()
        }
    }
}

/// The findings as text (one line each, then a summary) or one JSON object.
struct DoctorReport: Sendable {
    var findings: [DoctorFinding]

    func count(_ status: DoctorStatus) -> Int { findings.filter { $0.status == status }.count }

    /// Whether nothing failed (exit 0).
    var passed: Bool { count(.fail) == 0 }

    var text: String {
        var text = findings.map(\.line).joined(separator: "\n")
        if !text.isEmpty { text += "\n" }
        func counted(_ status: DoctorStatus, _ noun: String) -> String {
            let number = count(status)
            return "\(number) \(noun)\(number == 1 ? "" : "s")"
        }
        text += "\(count(.ok)) ok, \(counted(.warn, "warning")), \(counted(.fail, "failure")), \(count(.skip)) skipped\n"
        return text
    }

    /// `{"passed":…,"ok":N,"warnings":N,"failures":N,"skipped":N,"checks":[{"id","group","subject","status","summary","fix"}…]}`.
    var json: String {
        "{\"passed\":\(passed),\"ok\":\(count(.ok)),\"warnings\":\(count(.warn)),\"failures\":\(count(.fail)),"
            + "\"skipped\":\(count(.skip)),\"checks\":[" + findings.map(\.json).joined(separator: ",") + "]}"
    }
}

/// Small file-system helpers of the checks.
enum DoctorFiles {
    /// The file's content as text, nil when it cannot be read.
    static func text(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// `stat(2)` of `path` (not following a final symlink when `follow` is false).
    static func status(_ path: String, follow: Bool = true) -> stat? {
        var info = stat()
        return (follow ? stat(path, &info) : lstat(path, &info)) == 0 ? info : nil
    }

    /// The permission bits as four octal digits: `0644`.
    static func octal(_ mode: mode_t) -> String {
        let digits = String(UInt32(mode) & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// `strerror(errno)` starting in lower case.
    static func reason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// A path quoted for a shell command when it needs it.
    static func shellQuoted(_ path: String) -> String {
        let plain = path.allSatisfy { $0.isLetter || $0.isNumber || "/._-+@:".contains($0) }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
