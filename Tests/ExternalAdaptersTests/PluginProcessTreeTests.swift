import AdapterKit
import Foundation
import Testing
import TestSupport
import Transport

/// Issue 10 finding 11: helpers a plugin starts in a session of their own must not outlive it.
@Suite("Plugin process tree", .offCooperativePool)
struct PluginProcessTreeTests {
    /// Whether `pid` is a live process (not gone, not a zombie waiting for its parent).
    private func isAlive(_ pid: pid_t) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return false }
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return false }
        return text[text.index(after: close)...].split(separator: " ").first != "Z"
    }

    @Test("A grandchild that called setsid() (double fork) is killed when the plugin's session ends")
    func setsidGrandchildIsKilled() throws {
        let directory = try PluginDirectory()
        let path = try directory.install("setsid-helper.py", as: "helper")
        let pidFile = (directory.path as NSString).appendingPathComponent("helper.pid")
        let adapter = try loadAdapter(path, id: "helper", configuration: testConfiguration {
            $0.finishTimeout = .seconds(10)
        })
        let address = "C8:47:8C:00:11:22"
        let traits = BLEDeviceTraits(address: try #require(BLEAddress(address)), name: "HELPER")
        let session = adapter.makeSession(for: traits, context: AdapterContext(timeZone: .gmt, source: "helper"))
        var output = AdapterOutput()
        session.receive(.advertisement(try makeAdvertisement(address: address, name: "HELPER")), into: &output)

        #expect(eventually { FileManager.default.fileExists(atPath: pidFile) }, "the plugin never started its helper")
        let text = try String(contentsOfFile: pidFile, encoding: .utf8)
        let helper = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(helper, SIGKILL) }
        #expect(isAlive(helper))
        // The helper is in another session (and group) than the plugin: group kills miss it,
        // and its parent has exited, so it is no longer the plugin's descendant either.
        #expect(getsid(helper) != getsid(0))

        session.finish(into: &output)
        #expect(eventually(within: .seconds(10)) { !isAlive(helper) }, "the setsid() helper outlived its plugin")
    }
}
