import Delivery
import Foundation
import HealthModel
import IngestRuntime
import Pipeline
import SQLiteStore

/// Delivery figures: a 100,000-sample backlog drained to a local Mosquitto broker (QoS 1, a PUBACK
/// for every message) and to a local HTTP receiver (Python `http.server`, batches of 1,000), both
/// started by the bench on 127.0.0.1; then the resident set of a release `ingestd run --no-usb
/// --no-ble` draining a 1,000,000-sample backlog over HTTP, sampled every 100 ms.
enum SinkBench {
    static func note(_ message: String) {
        FileHandle.standardError.write(Data("# sink: \(message)\n".utf8))
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func run(backlog: Int, drainSamples: Int, directory: String) throws {
        let out = FigurePrinter()
        let storePath = directory + "/sinks.sqlite"
        note("writing \(backlog) step samples (not timed)")
        try fill(storePath, count: backlog)

        let broker = try LocalProcess.mosquitto(directory: directory)
        defer { broker.stop() }
        let mqttRate = try drain(storePath: storePath, name: "mqtt", url: "mqtt://127.0.0.1:\(broker.port)", count: backlog)
        out.print("sink.mqtt_samples_per_s", mqttRate, "1/s", decimals: 0)

        let receiver = try LocalProcess.httpReceiver(directory: directory)
        defer { receiver.stop() }
        let httpRate = try drain(storePath: storePath, name: "http", url: "http://127.0.0.1:\(receiver.port)/ingest", count: backlog)
        out.print("sink.http_samples_per_s", httpRate, "1/s", decimals: 0)

        guard let binary = DaemonBench.ingestdBinary() else {
            note("no ingestd next to IngestBench: the 1,000,000-sample drain is skipped (swift build -c release)")
            return
        }
        let bigStore = directory + "/drain.sqlite"
        note("writing \(drainSamples) step samples for the daemon drain (not timed)")
        try fill(bigStore, count: drainSamples)
        let rss = try daemonDrain(binary: binary, storePath: bigStore, url: "http://127.0.0.1:\(receiver.port)/ingest",
                                  count: drainSamples)
        out.print("sink.daemon_drain_rss_at_10pct_mb", rss.first, "MB", decimals: 1)
        out.print("sink.daemon_drain_rss_peak_mb", rss.peak, "MB", decimals: 1)
        out.print("sink.daemon_drain_rss_last_mb", rss.last, "MB", decimals: 1)
        out.print("sink.daemon_drain_samples_per_s", rss.rate, "1/s", decimals: 0)
    }

    /// A fresh store with `count` granted step samples, one a minute.
    static func fill(_ path: String, count: Int) throws {
        let store = try HealthStore(path: path)
        defer { store.close() }
        try store.grant(source: "bench", types: [], all: true)
        let pipeline = try Ingestion(store: store)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        var index = 0
        while index < count {
            let records = (index..<min(count, index + 5000)).map { i in
                HealthRecord.sample(QuantitySample(type: .stepCount, quantity: Quantity(value: Double(10 + i % 90), unit: QuantityType.stepCount.canonicalUnit),
                                                   start: start.addingTimeInterval(Double(i) * 60),
                                                   end: start.addingTimeInterval(Double(i) * 60 + 59), source: "bench"))
            }
            _ = try pipeline.ingest(records)
            index += 5000
        }
    }

    /// Adds a sink and times the in-process engine draining the whole backlog; samples per second.
    static func drain(storePath: String, name: String, url: String, count: Int, batchSize: Int = 1000) throws -> Double {
        let store = try HealthStore(path: storePath)
        defer { store.close() }
        // Whatever the URL's kind: each kind reads the keys it knows (the others keep their defaults).
        let options = "{\"batchSize\":\(batchSize),\"gatewayID\":\"bench\"}"
        let definition = SinkDefinition(name: name, url: url, options: options, every: nil,
                                        readTypes: [QuantityType.stepCount.identifier])
        try store.addSink(definition)
        let configuration = try SinkConfiguration(definition)
        let transport = SinkTransports.make(configuration, secrets: SecretResolver(), softwareVersion: "bench")
        let deliverer = try SinkDeliverer(configuration: configuration, store: store, transport: transport)
        defer { deliverer.close() }
        note("\(name): draining \(count) samples")
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = deliverer.deliverBacklog(retry: RetryPolicy(maximumAttempts: 3, initialDelay: 0.2))
        let seconds = Measure.seconds(clock.now - started)
        guard outcome == .caughtUp(delivered: count, deadLettered: 0) else {
            throw Failure("\(name): the drain ended with \(outcome)")
        }
        return Double(count) / seconds
    }

    /// A release daemon with one HTTP sink drains `count` samples; its VmRSS is read every 100 ms.
    /// `first` is the resident set once a tenth is delivered (start-up, libraries loaded), `last`
    /// the one when the backlog is empty: flat memory means they are about the same.
    static func daemonDrain(binary: String, storePath: String, url: String, count: Int) throws
        -> (first: Double, peak: Double, last: Double, rate: Double) {
        let add = Process()
        add.executableURL = URL(fileURLWithPath: binary)
        add.arguments = ["sinks", "add", "drain", url, "--types", "stepCount", "--store", storePath]
        add.standardError = FileHandle.nullDevice
        try add.run()
        add.waitUntilExit()
        guard add.terminationStatus == 0 else { throw Failure("ingestd sinks add failed (\(add.terminationStatus))") }

        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: binary)
        daemon.arguments = ["run", "--no-usb", "--no-ble", "--store", storePath]
        daemon.standardError = FileHandle.nullDevice
        daemon.standardOutput = FileHandle.nullDevice
        let clock = ContinuousClock()
        let started = clock.now
        try daemon.run()
        defer {
            if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
            daemon.waitUntilExit()
        }
        note("daemon: draining \(count) samples over HTTP")
        let store = try HealthStore(path: storePath, readOnly: true)
        defer { store.close() }
        var samples: [Double] = []
        let deadline = Date().addingTimeInterval(900)
        // The filled store's anchors are 1...count: the cursor says how far the drain is, without
        // counting the backlog (a scan of the samples that would compete with the daemon for the CPU).
        let end = try store.latestAnchor()
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            let cursor = try store.sink(named: "drain").cursor
            if cursor >= Int64(count / 10), let kilobytes = DaemonBench.Proc.statusKilobytes(pid: daemon.processIdentifier, "VmRSS") {
                samples.append(kilobytes / 1024)
            }
            if cursor >= end { break }
            guard daemon.isRunning else { throw Failure("the daemon exited during the drain") }
        }
        let seconds = Measure.seconds(clock.now - started)
        guard let first = samples.first, let last = samples.last, let peak = samples.max() else {
            throw Failure("no resident-set samples")
        }
        note(String(format: "daemon: %d RSS samples, first %.1f MB, peak %.1f MB, last %.1f MB", samples.count, first, peak, last))
        return (first, peak, last, Double(count) / seconds)
    }
}

/// A helper process on 127.0.0.1 (broker or receiver), stopped at the end.
final class LocalProcess {
    let port: Int
    private let process: Process

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SinkBench.Failure("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw SinkBench.Failure("cannot bind on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func start(_ executable: String, _ arguments: [String], port: Int) throws -> LocalProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let local = LocalProcess(port: port, process: process)
        // Wait until it listens (a TCP connect succeeds), at most 10 s.
        for _ in 0..<200 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return local }
            Thread.sleep(forTimeInterval: 0.05)
        }
        local.stop()
        throw SinkBench.Failure("\(executable) did not start listening on \(port)")
    }

    /// Mosquitto with a temporary config (`user root` for runs as root).
    static func mosquitto(directory: String) throws -> LocalProcess {
        let port = try freePort()
        let config = directory + "/mosquitto.conf"
        try "listener \(port) 127.0.0.1\nallow_anonymous true\nuser root\n".write(toFile: config, atomically: true, encoding: .utf8)
        return try start("/usr/sbin/mosquitto", ["-c", config], port: port)
    }

    /// A Python `http.server` answering every POST with 200 after reading its body.
    static func httpReceiver(directory: String) throws -> LocalProcess {
        let port = try freePort()
        let script = """
            import sys
            from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
            class H(BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                def log_message(self, *a):
                    pass
            ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
            """
        return try start("/usr/bin/env", ["python3", "-c", script, String(port)], port: port)
    }
}
