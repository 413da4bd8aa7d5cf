import AdapterKit
import ExternalAdapters
import Foundation
import Testing
import Transport

#if canImport(Glibc)
import Glibc
#endif

@Suite("PluginDescriber", .offCooperativePool)
struct PluginDescriberTests {
    func describe(variant: String, timeout: Duration = .seconds(30)) throws -> Result<AdapterDescriptor, PluginDescribeError> {
        let directory = try PluginDirectory()
        let path = try directory.install("describe-variants.py", as: "variant")
        var environment = ProcessInfo.processInfo.environment
        environment["DESCRIBE_VARIANT"] = variant
        return PluginDescriber(timeout: timeout, environment: environment).describe(executable: path, expectedID: "variant")
    }

    @Test("A Python plugin's descriptor is read, with BLE and USB matches")
    func good() throws {
        let descriptor = try describe(variant: "good").get()
        #expect(descriptor.id == "variant")
        #expect(descriptor.produces == [.bodyMass])
        #expect(descriptor.matches == [.ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181D)])),
                                       .usb(USBMatch(vendorID: 0x0FCF, productID: 0x1008))])
    }

    @Test("A plugin that hangs on --describe is killed with its helpers and reported as timed out")
    func hang() throws {
        let directory = try PluginDirectory()
        let path = try directory.install("hang.py", as: "hang")
        let pidFile = directory.path + "/helper.pid"
        var environment = ProcessInfo.processInfo.environment
        environment["HANG_PID_FILE"] = pidFile
        let result = PluginDescriber(timeout: .seconds(2), environment: environment).describe(executable: path, expectedID: "hang")
        #expect(result == .failure(.timedOut(.seconds(2))))
        #expect(PluginDescribeError.timedOut(.seconds(5)).description == "--describe did not finish within 5 s (killed)")
        // The helper the plugin started was in its process group and is gone too.
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let helper = pid_t(text) {
            #expect(eventually { kill(helper, 0) != 0 && errno == ESRCH || isZombie(helper) }, "helper \(helper) survived")
        }
    }

    @Test("Misbehaving --describe output gives a specific reason", arguments: [
        ("garbage", "--describe did not print one JSON object: not valid JSON"),
        ("fails", "--describe exited with status 3: cannot find libfoo.so.1"),
        ("segfault", "--describe crashed with signal 11 (SIGSEGV)"),
        ("wrong-id", "id \"somebody-else\" does not match the file name's \"variant\""),
        ("protocol-3", "speaks protocol 3, this ingestd speaks protocols 1 to 2"),
        ("unknown-type", "produces unknown type \"HKQuantityTypeIdentifierUnicornCount\""),
        ("huge", "--describe printed more than 65536 bytes"),
    ])
    func broken(_ variant: String, _ reason: String) throws {
        let result = try describe(variant: variant)
        guard case .failure(let error) = result else {
            Issue.record("\(variant) was accepted")
            return
        }
        #expect(error.description == reason)
    }

    @Test("A file that cannot be executed is reported")
    func cannotStart() throws {
        let directory = try PluginDirectory()
        let path = try directory.write("ingestd-adapter-broken", "\u{7F}ELF not really", mode: 0o755)
        let result = PluginDescriber().describe(executable: path, expectedID: "broken")
        guard case .failure(.cannotStart(let error)) = result else {
            Issue.record("expected cannotStart, got \(result)")
            return
        }
        #expect(error == .cannotSpawn(path: path, errno: ENOEXEC))
    }
}

/// Whether the process is a zombie (dead, waiting for its parent to reap it).
func isZombie(_ pid: pid_t) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    guard let close = status.lastIndex(of: ")") else { return false }
    return status[status.index(close, offsetBy: 2)...].hasPrefix("Z")
}
