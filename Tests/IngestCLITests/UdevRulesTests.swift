import Foundation
import Testing
@testable import IngestCLI
import AdapterKit
import BuiltinAdapters

@Suite struct UdevRulesTests {
    /// The repository's udev folder, found from this file's path.
    static let udevDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("udev")

    @Test func committedRulesAreTheGeneratedOnes() throws {
        let committed = try String(contentsOf: Self.udevDirectory.appendingPathComponent("70-ingestd.rules"), encoding: .utf8)
        let generated = UdevRules.render(adapters: BuiltinAdapters.usb.map(\.descriptor))
        #expect(committed == generated, "udev/70-ingestd.rules drifted: run 'ingestd udev-rules > udev/70-ingestd.rules'")
    }

    @Test func everyUSBMatchGetsAGroupRuleAndNothingIsWorldWritable() {
        let descriptor = AdapterDescriptor(
            id: "ant-plus", name: "ANT+ USB stick", version: "1", summary: "",
            matches: [.usb(USBMatch(vendorID: 0x0fcf, productID: 0x1008)), .usb(USBMatch(vendorID: 0x0fcf, productID: 0x1009))],
            produces: [])
        let rules = UdevRules.render(adapters: [descriptor]).split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(rules.count == 2)
        #expect(rules[0] == #"SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="0fcf", ATTR{idProduct}=="1008", GROUP="ingestd", MODE="0660", TAG+="uaccess", TAG+="systemd", ENV{SYSTEMD_WANTS}+="ingestd.service""#)
        #expect(rules.allSatisfy { !$0.contains("0666") && !$0.contains("0777") })
    }

    @Test func serviceUnitHasLeastPrivilege() throws {
        let unit = try String(contentsOf: Self.udevDirectory.appendingPathComponent("ingestd.service"), encoding: .utf8)
        let lines = Set(unit.split(separator: "\n").map(String.init))
        for required in ["Type=notify", "NotifyAccess=main", "WatchdogSec=60s", "User=ingestd", "StateDirectory=ingestd", "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN",
                         "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "NoNewPrivileges=yes",
                         "RestrictAddressFamilies=AF_UNIX AF_BLUETOOTH AF_NETLINK AF_INET AF_INET6"] {
            #expect(lines.contains(required), "missing \(required)")
        }
        #expect(!unit.contains("CAP_SYS_ADMIN"))
    }

    /// The service reads its pins and adapter options from /etc/ingestd/ingestd.conf, and the
    /// commented starting point shipped beside the unit is a valid file (all comments).
    @Test func serviceReadsItsConfigurationFile() throws {
        let unit = try String(contentsOf: Self.udevDirectory.appendingPathComponent("ingestd.service"), encoding: .utf8)
        let execStart = unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }
        #expect(execStart?.hasSuffix(" --config /etc/ingestd/ingestd.conf") == true, "\(execStart ?? "")")
        let shipped = try DaemonConfigurationFile(path: Self.udevDirectory.appendingPathComponent("ingestd.conf").path)
        #expect(shipped == DaemonConfigurationFile())
        let uncommented = try String(contentsOf: Self.udevDirectory.appendingPathComponent("ingestd.conf"), encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("# adapter") }.map { $0.dropFirst(2) }.joined(separator: "\n")
        let examples = try DaemonConfigurationFile(text: uncommented, path: "ingestd.conf")
        #expect(examples.pins == ["AA:BB:CC:DD:EE:FF=gatt-health", "0590:0028=omron-hj720it"])
        #expect(examples.adapterOptions.count == 4)
    }
}
