import AdapterKit
import BuiltinAdapters
import Foundation
import IngestRuntime
import LibUSBTransport
import Transport

/// The command that installs the udev rules `ingestd udev-rules` prints.
let udevRulesInstallCommand = "ingestd udev-rules | sudo tee /etc/udev/rules.d/70-ingestd.rules "
    + "&& sudo udevadm control --reload && sudo udevadm trigger --subsystem-match=usb"

/// The project's udev rules are installed and cover every supported USB device (the rule lines of
/// ``UdevRules/render(adapters:)`` are all in a `*ingestd*.rules` file of the udev directories).
struct UdevRulesCheck: DoctorCheck {
    let group = DoctorGroup.usb
    let id = "udevRules"

    /// The rule lines (not comments) the installed files should hold.
    static var expectedRules: [String] {
        UdevRules.render(adapters: BuiltinAdapters.usb.map(\.descriptor)).split(separator: "\n")
            .map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    }

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        var files: [String] = []
        // /lib is /usr/lib on a merged-/usr system: each file once, under the first directory naming it.
        var seen = Set<String>()
        for directory in setting.udevRuleDirectories {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.filter({ $0.contains("ingestd") && $0.hasSuffix(".rules") }).sorted() {
                let path = directory + "/" + name
                if seen.insert(URL(fileURLWithPath: path).resolvingSymlinksInPath().path).inserted { files.append(path) }
            }
        }
        guard !files.isEmpty else {
            return [DoctorFinding(id, group, .fail, "no ingestd udev rules in \(setting.udevRuleDirectories.joined(separator: ", ")): "
                                    + "supported USB devices are root's only", fix: udevRulesInstallCommand)]
        }
        let installed = Set(files.compactMap(DoctorFiles.text).flatMap { $0.split(separator: "\n").map(String.init) })
        let missing = Self.expectedRules.filter { !installed.contains($0) }
        if !missing.isEmpty {
            return [DoctorFinding(id, group, .warn, "\(files.joined(separator: ", ")) lacks \(missing.count) of the \(Self.expectedRules.count) "
                                    + "rules this ingestd generates (an older version's rules)", fix: udevRulesInstallCommand)]
        }
        return [DoctorFinding(id, group, .ok, "\(files.joined(separator: ", ")) covers every supported USB device")]
    }
}

/// The user is root or in the `ingestd` group the udev rules give the devices to.
struct GroupMembershipCheck: DoctorCheck {
    let group = DoctorGroup.usb
    let id = "groupMembership"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        if geteuid() == 0 { return [DoctorFinding(id, group, .ok, "running as root")] }
        guard let entry = getgrnam("ingestd") else {
            return [DoctorFinding(id, group, .warn, "there is no ingestd group (the udev rules give devices to it)",
                                  fix: "sudo systemd-sysusers (the package's sysusers.d entry), or sudo groupadd --system ingestd")]
        }
        let gid = entry.pointee.gr_gid
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        let filled = count > 0 ? getgroups(count, &groups) : 0
        let user = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? "uid \(geteuid())"
        if getegid() == gid || groups.prefix(Int(max(filled, 0))).contains(gid) {
            return [DoctorFinding(id, group, .ok, "\(user) is in the ingestd group")]
        }
        return [DoctorFinding(id, group, .warn,
                              "\(user) is not in the ingestd group: USB devices are yours only while you are logged in at the seat (uaccess)",
                              fix: "sudo usermod -aG ingestd \(user), then log in again")]
    }
}

/// Every supported USB device present (one an adapter takes, as `ingestd devices` decides) can be
/// opened by this process (`/dev/bus/usb/BBB/DDD` readable and writable).
struct USBAccessCheck: DoctorCheck {
    let group = DoctorGroup.usb
    let id = "usbAccess"
    var timeLimit: Duration { .seconds(25) }

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let devices: [USBDeviceDescription]
        do {
            devices = try LibUSBContext().enumerate()
        } catch {
            return [DoctorFinding(id, group, .skip, "cannot list USB devices here: \(error)")]
        }
        let runner = USBSessionRunner(adapters: AdapterCatalogue.usbAdapters(setting.catalogue), options: [:], timeZone: .current)
        let supported = DeviceListing.rows(devices: devices, runner: runner).filter { $0.adapterID != nil }
        guard !supported.isEmpty else {
            return [DoctorFinding(id, group, .ok, "no supported USB device is plugged in (\(devices.count) USB devices present)")]
        }
        return supported.map { row in
            let subject = row.device.idString
            let adapter = row.adapterID ?? "-"
            guard let bus = row.device.bus, let address = row.device.address else {
                return DoctorFinding(id, group, subject: subject, .skip, "\(adapter): its bus address is unknown")
            }
            let node = String(format: "/dev/bus/usb/%03d/%03d", bus, address)
            guard access(node, R_OK | W_OK) == 0 else {
                let reason = DoctorFiles.reason(errno)
                return DoctorFinding(id, group, subject: subject, .fail,
                                     "\(adapter) device at \(node) is present but not accessible (\(reason))",
                                     fix: udevRulesInstallCommand + ", then replug it (and be in the ingestd group)")
            }
            return DoctorFinding(id, group, subject: subject, .ok, "\(adapter) device at \(node) is accessible")
        }
    }
}
