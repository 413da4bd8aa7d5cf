import Foundation
import ServiceNotification
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite(.offCooperativePool) struct ServiceNotifierTests {
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func oneDatagramOfAssignmentsToAPathSocket() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiver = try NotifySocket(name: directory.appendingPathComponent("notify").path)
        let notifier = try #require(try ServiceNotifier(environment: ["NOTIFY_SOCKET": receiver.name]))
        try notifier.send([.ready, .status("2 devices seen\nlast commit now")])
        #expect(receiver.receive() == "READY=1\nSTATUS=2 devices seen last commit now")
        try notifier.send([.watchdog])
        try notifier.send([.stopping])
        #expect(receiver.receive() == "WATCHDOG=1")
        #expect(receiver.receive() == "STOPPING=1")
    }

    @Test func abstractSocketNamesStartWithAnAt() throws {
        let receiver = try NotifySocket(name: "@ingestd-notify-test-\(UUID().uuidString.prefix(8))")
        let notifier = try ServiceNotifier(socketName: receiver.name)
        try notifier.send([.reloading])
        #expect(receiver.receive() == "RELOADING=1")
    }

    @Test func noSocketNoNotifierAndBadSocketsAreExplained() throws {
        #expect(try ServiceNotifier(environment: [:]) == nil)
        #expect(try ServiceNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(throws: ServiceNotifierError.unsupportedSocket("vsock:2:1234")) {
            try ServiceNotifier(environment: ["NOTIFY_SOCKET": "vsock:2:1234"])
        }
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: ServiceNotifierError.socketNameTooLong(long)) { try ServiceNotifier(socketName: long) }
        // Nobody listening at the path: a clear error naming it, no crash.
        let absent = FileManager.default.temporaryDirectory.appendingPathComponent("no-listener-\(UUID().uuidString)").path
        let notifier = try ServiceNotifier(socketName: absent)
        #expect(throws: ServiceNotifierError.self) { try notifier.send([.ready]) }
        do { try notifier.send([.ready]) } catch { #expect("\(error)".contains(absent)) }
    }

    @Test func watchdogIntervalIsForThisProcessOnly() {
        #expect(ServiceNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000"]) == .seconds(30))
        #expect(ServiceNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"]) == .seconds(30))
        #expect(ServiceNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid() + 1)"]) == nil)
        #expect(ServiceNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "0"]) == nil)
        #expect(ServiceNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "soon"]) == nil)
        #expect(ServiceNotifier.watchdogInterval(environment: [:]) == nil)
    }

    /// `ingestd run` as systemd starts it: NOTIFY_SOCKET, WATCHDOG_USEC and JOURNAL_STREAM naming
    /// its stderr. It says READY=1 with a status line, feeds the watchdog, says STOPPING=1 on
    /// SIGTERM and exits 0; its log lines carry `<N>` priorities and no timestamp.
    @Test func theDaemonNotifiesAsSystemdExpects() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiver = try NotifySocket(name: directory.appendingPathComponent("notify").path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try IngestdProcess.path())
        process.arguments = ["run", "--no-usb", "--no-ble", "--store", directory.appendingPathComponent("health.sqlite").path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        var status = stat()
        fstat(err.fileHandleForWriting.fileDescriptor, &status)
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = receiver.name
        environment["WATCHDOG_USEC"] = "400000"
        environment["JOURNAL_STREAM"] = "\(status.st_dev):\(status.st_ino)"
        environment["XDG_RUNTIME_DIR"] = directory.path
        process.environment = environment
        let log = PipeReader(err.fileHandleForReading)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        let start = receiver.receive(until: "READY=1", seconds: 30)
        let ready = try #require(start.last, "no READY=1 within 30 s: \(start)")
        #expect(ready.hasPrefix("READY=1\nSTATUS=0 devices seen, 0 samples written; nothing committed yet; backends: none"))
        let pings = receiver.receive(until: "WATCHDOG=1", seconds: 30)
        #expect(pings.last?.split(separator: "\n").first == "WATCHDOG=1", "no watchdog ping: \(pings)")
        kill(process.processIdentifier, SIGTERM)
        let end = receiver.receive(until: "STOPPING=1", seconds: 30)
        #expect(end.last?.hasPrefix("STOPPING=1\n") == true, "no STOPPING=1: \(end)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = log.text().split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<5>notice ingestd: ingestd ") && $0.contains(" started; store ") }, "\(lines)")
        #expect(lines.allSatisfy { $0.first == "<" }, "a line without a priority: \(lines)")
    }
}
