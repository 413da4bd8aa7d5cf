import BlueZTransport
import Foundation

/// The kernel offers Bluetooth sockets (`socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)` succeeds).
struct KernelBluetoothCheck: DoctorCheck {
    let group = DoctorGroup.bluetooth
    let id = "kernelBluetooth"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        guard let problem = HCIControllerInfo.kernelSupportProblem() else {
            return [DoctorFinding(id, group, .ok, "the kernel has Bluetooth sockets (AF_BLUETOOTH)")]
        }
        return [DoctorFinding(id, group, .fail, problem.description,
                              fix: "sudo modprobe bluetooth (in a container: give it the host's Bluetooth, or run ingestd on the host); "
                                + "with USB devices only: ingestd run --no-ble and ingestd doctor --no-ble")]
    }
}

/// The controller `--hci N` exists, is up and does Bluetooth LE (HCIGETDEVINFO, no privilege needed).
struct ControllerCheck: DoctorCheck {
    let group = DoctorGroup.bluetooth
    let id = "controller"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let index = setting.controller
        let info: HCIControllerInfo
        do {
            info = try HCIControllerInfo.read(index: index)
        } catch .noKernelSupport {
            return [DoctorFinding(id, group, .skip, "cannot look for hci\(index) without kernel Bluetooth support")]
        } catch .noController {
            let present = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth"))?
                .filter { $0.hasPrefix("hci") }.sorted() ?? []
            let others = present.isEmpty ? "no controller at all" : "present: " + present.joined(separator: ", ")
            return [DoctorFinding(id, group, .fail, "no Bluetooth controller hci\(index) (\(others))",
                                  fix: present.isEmpty
                                    ? "plug in a Bluetooth LE adapter (Bluetooth 4.0 or later); with USB devices only: ingestd run --no-ble"
                                    : "choose one with --hci N (ingestd run --hci N, ingestd doctor --hci N)")]
        } catch {
            return [DoctorFinding(id, group, .fail, error.description, fix: "see 'dmesg | grep -i bluetooth'")]
        }
        let name = "\(info.name) (\(info.address))"
        if !info.supportsLowEnergy {
            return [DoctorFinding(id, group, .fail, "\(name) does not support Bluetooth LE",
                                  fix: "use a Bluetooth 4.0 (LE) adapter, and choose it with --hci N")]
        }
        if !info.isUp {
            return [DoctorFinding(id, group, .fail, "\(name) is powered off (down)",
                                  fix: "sudo btmgmt --index \(index) power on (or 'bluetoothctl power on' where bluetoothd runs; "
                                    + "if rfkill blocks it: sudo rfkill unblock bluetooth)")]
        }
        return [DoctorFinding(id, group, .ok, "\(name) is up and supports Bluetooth LE")]
    }
}

/// No rfkill switch blocks Bluetooth (`/sys/class/rfkill/rfkill*/{type,soft,hard}`).
struct RFKillCheck: DoctorCheck {
    let group = DoctorGroup.bluetooth
    let id = "rfkill"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let directory = setting.rfkillDirectory
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            return [DoctorFinding(id, group, .skip, "no \(directory) (a kernel without rfkill, or a container): nothing here blocks radios")]
        }
        var soft: [String] = []
        var hard: [String] = []
        var seen = 0
        for entry in entries.sorted() {
            let base = directory + "/" + entry
            guard DoctorFiles.text(base + "/type")?.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetooth" else { continue }
            seen += 1
            let name = DoctorFiles.text(base + "/name")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? entry
            if DoctorFiles.text(base + "/hard")?.hasPrefix("1") == true { hard.append(name) }
            if DoctorFiles.text(base + "/soft")?.hasPrefix("1") == true { soft.append(name) }
        }
        if !hard.isEmpty {
            return [DoctorFinding(id, group, .fail, "Bluetooth is hard-blocked by rfkill (\(hard.joined(separator: ", ")))",
                                  fix: "turn on the wireless switch or leave airplane mode (a hard block is a hardware switch)")]
        }
        if !soft.isEmpty {
            return [DoctorFinding(id, group, .fail, "Bluetooth is soft-blocked by rfkill (\(soft.joined(separator: ", ")))",
                                  fix: "sudo rfkill unblock bluetooth")]
        }
        return [DoctorFinding(id, group, .ok, seen == 0
                              ? "no Bluetooth rfkill switch"
                              : "\(seen) Bluetooth rfkill switch\(seen == 1 ? "" : "es"), none blocked")]
    }
}

/// The process has CAP_NET_RAW (raw HCI commands: scanning) and CAP_NET_ADMIN (the exclusive user
/// channel), read from `CapEff` in `/proc/self/status`.
struct CapabilitiesCheck: DoctorCheck {
    let group = DoctorGroup.bluetooth
    let id = "capabilities"
    static let netAdmin: UInt64 = 1 << 12
    static let netRaw: UInt64 = 1 << 13

    /// The effective capability set of a `/proc/PID/status` text.
    static func effective(_ status: String) -> UInt64? {
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            return UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        return nil
    }

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        guard let text = DoctorFiles.text(setting.processStatusFile), let effective = Self.effective(text) else {
            return [DoctorFinding(id, group, .skip, "cannot read CapEff from \(setting.processStatusFile)")]
        }
        let grant = "run as the service (its unit grants them with AmbientCapabilities), or for a manual run: "
            + "sudo setcap cap_net_raw,cap_net_admin+ep \"$(command -v ingestd)\""
        if effective & Self.netRaw == 0 {
            return [DoctorFinding(id, group, .fail,
                                  "this process lacks CAP_NET_RAW (raw HCI scanning needs it)"
                                    + (effective & Self.netAdmin == 0 ? " and CAP_NET_ADMIN" : ""),
                                  fix: grant)]
        }
        if effective & Self.netAdmin == 0 {
            return [DoctorFinding(id, group, .warn, "CAP_NET_RAW held; CAP_NET_ADMIN missing (only the exclusive user channel needs it)",
                                  fix: grant)]
        }
        return [DoctorFinding(id, group, .ok, "CAP_NET_RAW and CAP_NET_ADMIN held")]
    }
}

/// Whether bluetoothd runs beside ingestd: ingestd shares the controller through the raw HCI
/// channel, and bluetoothd is what powers the controller at boot.
struct BluetoothdCheck: DoctorCheck {
    let group = DoctorGroup.bluetooth
    let id = "bluetoothd"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: setting.procDirectory) else {
            return [DoctorFinding(id, group, .skip, "cannot list \(setting.procDirectory)")]
        }
        let running = entries.contains { entry in
            entry.allSatisfy(\.isNumber)
                && DoctorFiles.text(setting.procDirectory + "/" + entry + "/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetoothd"
        }
        if running {
            return [DoctorFinding(id, group, .ok, "bluetoothd runs; ingestd shares the controller with it (raw HCI channel)")]
        }
        return [DoctorFinding(id, group, .warn, "bluetoothd is not running: nothing powers the controller at boot",
                              fix: "sudo systemctl enable --now bluetooth, or power the controller yourself: sudo btmgmt --index \(setting.controller) power on")]
    }
}
