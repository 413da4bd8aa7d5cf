import Delivery
import Foundation
import HealthModel
import Pipeline
import SQLiteStore
import Testing
import TestSupport

/// A temporary directory removed at the end of the test.
final class TemporaryDirectory {
    let url: URL
    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func isListening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// How a test server's start ended: listening, or exited first (its port was taken).
enum ServerStart { case listening, exited }

/// Waits until `process` listens on `port` or exits; a server still running but not listening after
/// `seconds` fails the test with `name` in the message.
func awaitListening(port: Int, process: Process, seconds: Double, name: String) throws -> ServerStart {
    _ = waitFor(seconds) { isListening(port) || !process.isRunning }
    if isListening(port) { return .listening }
    if !process.isRunning { return .exited }
    try #require(Bool(false), "\(name) did not start listening on \(port) within \(Int(seconds)) s")
    return .exited
}

/// Waits up to `seconds` for `condition`.
@discardableResult
func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return try condition()
}

/// A process for `path` started through a small Python shim that clears the signal mask first:
/// children of the test process inherit blocked signals (SIGTERM, SIGALRM), so a broker could
/// not be stopped gracefully and `mosquitto_sub -W` would never time out.
func unmaskedProcess(_ path: String, _ arguments: [String]) -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c",
                         "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); os.execv(sys.argv[1], sys.argv[1:])",
                         path] + arguments
    return process
}

/// Runs a program to its end and returns its exit status and standard output (stderr is dropped).
@discardableResult
func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = unmaskedProcess(path, arguments)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A real Mosquitto broker on 127.0.0.1 with a temporary config (tests run as root: `user root`),
/// persistence in its directory, and optionally one user with a password.
final class MosquittoBroker {
    static let executable = "/usr/sbin/mosquitto"
    private(set) var port: Int
    let directory: TemporaryDirectory
    private var process: Process?

    /// A certificate authority and a broker certificate for 127.0.0.1 it signed (`openssl`, EC P-256,
    /// valid for two days), made in `directory`.
    struct TLSFiles {
        let caFile: String
        let certificateFile: String
        let keyFile: String

        init(in directory: TemporaryDirectory) throws {
            caFile = directory.path("ca.crt")
            certificateFile = directory.path("broker.crt")
            keyFile = directory.path("broker.key")
            let extensions = directory.path("broker.ext")
            try "subjectAltName=IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
            let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            let steps: [[String]] = [
                ["req", "-x509"] + key + ["-keyout", directory.path("ca.key"), "-out", caFile, "-subj", "/CN=ingestd test CA", "-days", "2"],
                ["req"] + key + ["-keyout", keyFile, "-out", directory.path("broker.csr"), "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", directory.path("broker.csr"), "-CA", caFile, "-CAkey", directory.path("ca.key"),
                 "-CAcreateserial", "-out", certificateFile, "-days", "2", "-extfile", extensions],
            ]
            for step in steps {
                let result = try runTool("/usr/bin/openssl", step)
                try #require(result.status == 0, "openssl \(step.prefix(2).joined(separator: " ")) failed (scripts/bootstrap-tests installs openssl)")
            }
        }
    }

    let tls: TLSFiles?

    init(user: (name: String, password: String)? = nil, tls: Bool = false) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable), "mosquitto is not installed (scripts/bootstrap-tests)")
        directory = try TemporaryDirectory("mosquitto")
        self.tls = tls ? try TLSFiles(in: directory) : nil
        var passwords: String?
        if let user {
            passwords = directory.path("passwords")
            try runTool("/usr/bin/mosquitto_passwd", ["-b", "-c", directory.path("passwords"), user.name, user.password])
        }
        // A port found free can be taken by another test before mosquitto binds it; mosquitto then
        // exits at once, and the broker starts again on another free port (at most three times).
        var attempt = 0
        while true {
            attempt += 1
            port = try freePort()
            try Self.configuration(port: port, directory: directory, passwords: passwords, tls: self.tls)
                .write(toFile: directory.path("mosquitto.conf"), atomically: true, encoding: .utf8)
            if try launch() == .listening { return }
            try #require(attempt < 3, "mosquitto exited before listening, three times (last port \(port))")
        }
    }

    private static func configuration(port: Int, directory: TemporaryDirectory, passwords: String?, tls: TLSFiles?) -> String {
        var config = """
            listener \(port) 127.0.0.1
            user root
            persistence true
            persistence_location \(directory.url.path)/
            max_queued_messages 100000
            log_dest file \(directory.path("broker.log"))

            """
        if let tls {
            config += "cafile \(tls.caFile)\ncertfile \(tls.certificateFile)\nkeyfile \(tls.keyFile)\n"
        }
        if let passwords {
            config += "allow_anonymous false\npassword_file \(passwords)\n"
        } else {
            config += "allow_anonymous true\n"
        }
        return config
    }

    /// Starts the broker again on the same port (persistence tests).
    func start() throws {
        try #require(try launch() == .listening, "mosquitto exited before listening on \(port)")
    }

    /// Runs mosquitto and waits until it listens (bounded at 30 s) or exits.
    private func launch() throws -> ServerStart {
        let process = unmaskedProcess(Self.executable, ["-c", directory.path("mosquitto.conf")])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let start = try awaitListening(port: port, process: process, seconds: 30, name: "mosquitto")
        if start == .exited { self.process = nil }
        return start
    }

    /// SIGTERM (mosquitto saves its persistence then), SIGKILL if it has not ended after 5 s.
    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        if !waitFor(5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    deinit { stop() }
}

/// `mosquitto_sub` writing `topic payload` lines to a file, with a persistent session (QoS 1).
final class MQTTSubscriber {
    let output: String
    private let process: Process

    /// `caFile`: the broker speaks TLS with a certificate that CA signed.
    init(port: Int, topic: String, clientID: String, output: String, caFile: String? = nil) throws {
        self.output = output
        let tls = caFile.map { ["--cafile", $0] } ?? []
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        handle.seekToEndOfFile()
        // Line-buffered, so that the file can be read while it runs.
        process = unmaskedProcess("/usr/bin/stdbuf", ["-oL", "/usr/bin/mosquitto_sub",
                                  "-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", "1", "-c", "-i", clientID, "-v"] + tls)
        process.standardOutput = handle
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Subscribed once a probe published to the filter's topic comes through.
        let probeTopic = topic.hasSuffix("/#") ? String(topic.dropLast(2)) + "/probe" : topic
        let subscribed = waitFor(60) {
            _ = try? runTool("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(port), "-t", probeTopic, "-m", Self.probe] + tls)
            Thread.sleep(forTimeInterval: 0.1)
            return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains(Self.probe)
        }
        try #require(subscribed, "mosquitto_sub did not subscribe to \(topic)")
    }

    static let probe = "subscriber-probe"

    /// The `uuid` of every received sample message, in arrival order (repeats kept).
    func sampleUUIDs() -> [String] {
        lines().compactMap { line in line.split(separator: " ", maxSplits: 1).last.flatMap { uuidOfMessage(String($0)) } }
    }

    /// The received `topic payload` lines, without the probes.
    func lines() -> [String] {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init).filter { !$0.hasSuffix(" " + Self.probe) }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            if !waitFor(5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

/// Retained messages under `topic` as topic → payload (`mosquitto_sub --retained-only`).
func retainedMessages(port: Int, topic: String) throws -> [String: String] {
    let result = try runTool("/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-p", String(port), "-t", topic,
                                                        "--retained-only", "-v", "-W", "1"])
    var messages: [String: String] = [:]
    for line in result.output.split(separator: "\n") {
        guard let space = line.firstIndex(of: " ") else { continue }
        messages[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    return messages
}

/// The Python receiver (Receivers/http_receiver.py) on a free port of 127.0.0.1.
final class HTTPReceiver {
    private(set) var port: Int
    private(set) var log: String
    private var process: Process

    init(plan: [String], directory: TemporaryDirectory) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Receivers/http_receiver.py").path
        // As for mosquitto: a port taken between freePort() and the bind ends the receiver at once;
        // it starts again on another free port, at most three times.
        var attempt = 0
        while true {
            attempt += 1
            let port = try freePort()
            let log = directory.path("receiver-\(port).jsonl")
            let process = unmaskedProcess("/usr/bin/env", ["python3", script, String(port), log, plan.joined(separator: ",")])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if try awaitListening(port: port, process: process, seconds: 60, name: "the Python receiver") == .listening {
                (self.port, self.log, self.process) = (port, log, process)
                return
            }
            try #require(attempt < 3, "the Python receiver exited before listening, three times (last port \(port))")
        }
    }

    var url: String { "http://127.0.0.1:\(port)/ingest" }

    struct Request: Decodable {
        var n: Int
        var path: String
        var status: Int
        var uuids: [String]
        var auth: String?
    }

    func requests() -> [Request] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Request.self, from: Data($0.utf8)) }
    }

    /// The uuids of every request answered 2xx, in order (repeats kept).
    func acceptedUUIDs() -> [String] {
        requests().filter { (200..<300).contains($0.status) }.flatMap(\.uuids)
    }

    deinit {
        // SIGKILL: the test process may hand its children SIGTERM as ignored, and Python keeps it so.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A store in `directory` with granted samples written through the pipeline.
struct StoreFixture {
    let path: String

    init(directory: TemporaryDirectory) throws {
        path = directory.path("health.sqlite")
        let store = try HealthStore(path: path)
        try store.grant(source: "phone", types: [], all: true)
        store.close()
    }

    /// Writes `count` step samples (one a minute from `start`) and returns their uuids.
    @discardableResult
    func addSteps(_ count: Int, start: Date = Date(timeIntervalSince1970: 1_780_000_000), value: Double = 10) throws -> [UUID] {
        let samples = (0..<count).map { index in
            QuantitySample(type: .stepCount, quantity: Quantity(value: value + Double(index % 50), unit: QuantityType.stepCount.canonicalUnit),
                           start: start.addingTimeInterval(Double(index) * 60),
                           end: start.addingTimeInterval(Double(index) * 60 + 30), source: "phone")
        }
        try ingest(samples.map(HealthRecord.sample))
        return samples.map(\.uuid)
    }

    /// Writes one sample of `type` in its canonical unit.
    @discardableResult
    func add(_ type: QuantityType, _ value: Double, at date: Date, metadata: Metadata = Metadata()) throws -> UUID {
        let sample = QuantitySample(type: type, quantity: Quantity(value: value, unit: type.canonicalUnit), start: date, end: date,
                                    source: "phone", metadata: metadata)
        try ingest([.sample(sample)])
        return sample.uuid
    }

    func ingest(_ records: [HealthRecord]) throws {
        let store = try HealthStore(path: path)
        defer { store.close() }
        let pipeline = try Pipeline(store: store)
        var index = 0
        while index < records.count {
            _ = try pipeline.ingest(Array(records[index..<min(records.count, index + 5000)]))
            index += 5000
        }
    }

    /// Adds a sink and returns its configuration.
    func addSink(_ name: String, url: String, types: [QuantityType]?, options: (any SinkKindOptions)? = nil) throws -> SinkConfiguration {
        let store = try HealthStore(path: path)
        defer { store.close() }
        let definition = SinkDefinition(name: name, url: url, options: options?.encoded() ?? "{}", every: nil,
                                        readTypes: types?.map(\.identifier) ?? ["*"])
        try store.addSink(definition)
        return try SinkConfiguration(definition)
    }

    /// Delivers a sink's backlog in this process (as `sinks deliver` does). The default retries
    /// eight times over about 8 s, for a local test server slow to answer on a loaded machine; a
    /// test that expects the receiver to stay unreachable passes its own policy.
    func deliver(_ configuration: SinkConfiguration, retry: RetryPolicy = RetryPolicy(maximumAttempts: 8, initialDelay: 0.1, maximumDelay: 2),
                 events: EventLog? = nil, keepOpen: ((SinkDeliverer) throws -> Void)? = nil) throws -> BacklogOutcome {
        let store = try HealthStore(path: path)
        defer { store.close() }
        let transport = SinkTransports.make(configuration, secrets: SecretResolver(), softwareVersion: "test")
        let deliverer = try SinkDeliverer(configuration: configuration, store: store, transport: transport) { events?.append($0) }
        let outcome = deliverer.deliverBacklog(retry: retry)
        try keepOpen?(deliverer)
        deliverer.close()
        return outcome
    }

    func withStore<T>(_ body: (HealthStore) throws -> T) throws -> T {
        let store = try HealthStore(path: path)
        defer { store.close() }
        return try body(store)
    }
}

/// Events collected from an engine.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [DeliveryEvent] = []
    func append(_ event: DeliveryEvent) { lock.withLock { list.append(event) } }
    var events: [DeliveryEvent] { lock.withLock { list } }
    var failures: [SinkDeliveryError] {
        events.compactMap { if case .failed(_, _, let error, _) = $0 { error } else { nil } }
    }
}

/// The uuid of a JSON sample or deletion message.
func uuidOfMessage(_ payload: String) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any] else { return nil }
    return (object["uuid"] as? String ?? object["deleted"] as? String)?.lowercased()
}

/// Local midnight today (the day the sinks' "today" totals belong to).
func startOfLocalToday() -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = .current
    return calendar.startOfDay(for: Date())
}
