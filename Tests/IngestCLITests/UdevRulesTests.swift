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

    /// The service reads its configuration from /etc/ingestd/ingestd.conf; the file shipped beside
    /// the unit sets only the service's store and documents every key with a commented example
    /// that is itself a valid line.
    @Test func serviceReadsItsConfigurationFile() throws {
        let unit = try String(contentsOf: Self.udevDirectory.appendingPathComponent("ingestd.service"), encoding: .utf8)
        let execStart = unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }
        #expect(execStart?.hasSuffix(" --config /etc/ingestd/ingestd.conf") == true, "\(execStart ?? "")")
        let path = Self.udevDirectory.appendingPathComponent("ingestd.conf").path
        let shipped = try #require(try ConfigurationFile.read(path: path))
        #expect(shipped.settings.map { "\($0.key.rawValue) = \($0.value)" } == ["store = /var/lib/ingestd/health.sqlite"])
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let examples = text.split(separator: "\n").filter { line in
            ConfigurationKey.allCases.contains { line.hasPrefix("# \($0.rawValue) = ") }
        }.map { $0.dropFirst(2) }.joined(separator: "\n")
        let parsed = try ConfigurationFile(text: examples, path: "ingestd.conf")
        let documented = Set(parsed.settings.map(\.key)).union(shipped.settings.map(\.key))
        #expect(documented == Set(ConfigurationKey.allCases), "undocumented: \(Set(ConfigurationKey.allCases).subtracting(documented))")
        #expect(parsed.settings.filter { $0.key == .adapter }.map(\.value) == ["AA:BB:CC:DD:EE:FF=gatt-health", "0590:0028=omron-hj720it"])
    }
}
