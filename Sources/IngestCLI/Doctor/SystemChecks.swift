import ANTPlus
import BuiltinAdapters
import ExternalAdapters
import Foundation
import IngestRuntime
import LibUSBTransport

/// Every external adapter of the plugin directories describes itself (`--describe` succeeds within
/// the describe time limit with a valid descriptor), as the daemon requires before using it.
struct PluginsCheck: DoctorCheck {
    let group = DoctorGroup.plugins
    let id = "plugin"
    var timeLimit: Duration { .seconds(25) }

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let catalogue = setting.catalogue
        guard !catalogue.plugins.isEmpty else {
            let directories = ExternalAdapterDirectories.resolve(setting.pluginDirectories, environment: setting.environment)
            return [DoctorFinding(id, group, .ok, "no external adapters in \(directories.joined(separator: ", "))")]
        }
        return catalogue.plugins.map { plugin in
            if let reason = plugin.brokenReason {
                return DoctorFinding(id, group, subject: plugin.id, .fail, "\(plugin.path) is not used: \(reason)",
                                     fix: "run '\(DoctorFiles.shellQuoted(plugin.path)) --describe' to see its error (Plugins/README.md says what it must print)")
            }
            let version = plugin.descriptor.map { " \($0.name) \($0.version)" } ?? ""
            return DoctorFinding(id, group, subject: plugin.id, .ok, "\(plugin.path) describes itself:\(version)")
        }
    }
}

/// The ANT+ network key the `ant-plus` adapter needs to open an ANT+ USB stick: configured
/// (`--adapter-option ant-network-key=@FILE` or in the configuration file), readable and 16 hex
/// digits; its file readable by its owner only. The key is never printed. Without a key it fails
/// only when an ANT+ stick is plugged in.
struct ANTNetworkKeyCheck: DoctorCheck {
    let group = DoctorGroup.ant
    let id = "antNetworkKey"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let options = setting.adapterOptions
        let file: String? = options[ANTNetworkKey.optionName].flatMap { $0.hasPrefix("@") ? String($0.dropFirst()) : nil }
            ?? options[ANTNetworkKey.fileOptionName]
        do {
            _ = try ANTNetworkKey(options: options)
        } catch .missing {
            let stick = (try? LibUSBContext().enumerate())?.first { device in
                BuiltinAdapters.usb.first { $0.descriptor.matches(device) }?.descriptor.id == ANTPlusAdapter.identifier
            }
            guard let stick else {
                return [DoctorFinding(id, group, .ok, "not configured; only an ANT+ USB stick needs it, and none is plugged in")]
            }
            return [DoctorFinding(id, group, .fail, "an ANT+ stick (\(stick.idString)) is plugged in but no ANT+ network key is configured",
                                  fix: "put the 16 hex digits in /etc/ingestd/ant.key (chmod 600, owned by ingestd) and add "
                                    + "'adapter-option = ant-network-key=@/etc/ingestd/ant.key' to /etc/ingestd/ingestd.conf")]
        } catch {
            return [DoctorFinding(id, group, .fail, error.description,
                                  fix: "correct the key (16 hex digits) or its file, then: ingestd doctor --only ant")]
        }
        if let file, let status = DoctorFiles.status(file), status.st_mode & 0o077 != 0 {
            return [DoctorFinding(id, group, .warn, "configured, but \(file) has mode \(DoctorFiles.octal(status.st_mode)): others can read the key",
                                  fix: "chmod 600 \(DoctorFiles.shellQuoted(file))")]
        }
        return [DoctorFinding(id, group, .ok, "configured (8 bytes, not shown)" + (file.map { " in \($0)" } ?? ""))]
    }
}

/// The clock is plausible (not before 2025) and something keeps it synchronized: systemd-timesyncd
/// says so (`/run/systemd/timesync/synchronized`), or chronyd or ntpd runs. Samples are stamped with it.
struct ClockCheck: DoctorCheck {
    let group = DoctorGroup.clock
    let id = "clock"
    /// Nothing dated before this is plausible (1 January 2025, UTC).
    static let earliestPlausible = Date(timeIntervalSince1970: 1_735_689_600)
    static let timesyncdMark = "/run/systemd/timesync/synchronized"
    /// Process names (`/proc/PID/comm`, at most 15 characters) of time synchronization daemons.
    static let synchronizers: Set<String> = ["chronyd", "ntpd", "openntpd", "systemd-timesyn"]

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let now = Date()
        let stamp = ISO8601DateFormatter().string(from: now)
        if now < Self.earliestPlausible {
            return [DoctorFinding(id, group, .fail, "the clock says \(stamp): samples would be dated wrongly",
                                  fix: "sudo timedatectl set-ntp true (or set it by hand: sudo date -s YYYY-MM-DDTHH:MM)")]
        }
        if FileManager.default.fileExists(atPath: Self.timesyncdMark) {
            return [DoctorFinding(id, group, .ok, "\(stamp), synchronized by systemd-timesyncd")]
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: setting.procDirectory)) ?? []
        let running = entries.lazy.filter { $0.allSatisfy(\.isNumber) }.compactMap { entry in
            DoctorFiles.text(setting.procDirectory + "/" + entry + "/comm")?.trimmingCharacters(in: .whitespacesAndNewlines)
        }.first { Self.synchronizers.contains($0) }
        if let running {
            return [DoctorFinding(id, group, .ok, "\(stamp), kept by \(running)")]
        }
        return [DoctorFinding(id, group, .warn, "\(stamp); nothing keeps the clock synchronized (no timesyncd, chronyd or ntpd)",
                              fix: "sudo timedatectl set-ntp true (systemd-timesyncd), or install chrony")]
    }
}
