import Dispatch
import Foundation
import Glibc
import HealthModel
import IngestRuntime
import Pipeline
import SQLiteStore
import WebDashboard

/// `serve`: the web dashboard on a store holding the year up to today of minute-level steps and
/// heart rate (1,051,200 samples).
/// - `serve.dashboard_ms`: the server's time to render the person's page (median of 5, after one
///   warm-up), in process through `Dashboard.respond` on the query port: statistics queries only.
/// - `serve.rss_50_parallel_mb`: the peak resident set (VmHWM) of the release `ingestd serve` on
///   that store while 50 clients ask for the page at once.
enum ServeBench {
    static let source = "bench-band"

    static func run(directory: String, minutes: Int = 525_600, repeats: Int = 5) throws {
        let out = FigurePrinter()
        let path = directory + "/serve.sqlite"
        removeDatabase(path)
        var calendar = Calendar(identifier: .gregorian)
        let zone = TimeZone(identifier: "Europe/Berlin") ?? .current
        calendar.timeZone = zone
        let end = calendar.startOfDay(for: Date())
        let start = end.addingTimeInterval(-Double(minutes) * 60)
        log("serve: filling \(2 * minutes) samples (minute steps and heart rate up to today)")
        try fill(path: path, start: start, minutes: minutes)

        let store = try HealthStore(path: path, readOnly: true)
        defer { store.close() }
        guard let person = try store.queryPeopleNames().first else { throw BenchError("serve: the store has no person") }
        let dashboard = Dashboard(store: store, administration: nil,
                                  configuration: DashboardConfiguration(token: nil, zone: zone))
        let request = HTTPRequest(method: "GET", path: "/person", query: ["name": person])
        let warm = dashboard.respond(request)
        let body = String(decoding: warm.body, as: UTF8.self)
        guard warm.status == 200, body.contains("id=\"today-steps\""), !body.contains("No data in this range</text>") || body.contains("id=\"weight\"")
        else { throw BenchError("serve: the page did not render: \(warm.status) \(body.prefix(300))") }
        var times: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<repeats {
            let begin = clock.now
            let response = dashboard.respond(request)
            times.append(Measure.seconds(clock.now - begin))
            guard response.status == 200 else { throw BenchError("serve: status \(response.status)") }
        }
        out.print("serve.dashboard_ms", Measure.median(times) * 1000, "ms", decimals: 1)

        guard let ingestd = DaemonBench.ingestdBinary() else {
            log("serve: no ingestd binary next to IngestBench; serve.rss_50_parallel_mb not measured")
            return
        }
        let peak = try parallelPeak(ingestd: ingestd, path: path, person: person, clients: 50)
        out.print("serve.rss_50_parallel_mb", peak / 1024, "MB", decimals: 1)
    }

    static func fill(path: String, start: Date, minutes: Int) throws {
        let store = try HealthStore(path: path)
        defer { store.close() }
        try store.grant(source: source, types: [.stepCount, .heartRate])
        let pipeline = try Ingestion(store: store)
        var random = SplitMix64(seed: 0x5E7E_D45B)
        var batch: [HealthRecord] = []
        batch.reserveCapacity(10_000)
        let perMinute = try HealthModel.Unit(from: "count/min")
        let base = start.timeIntervalSince1970
        for minute in 0..<minutes {
            let begin = Date(timeIntervalSince1970: base + Double(minute) * 60)
            let finish = begin.addingTimeInterval(60)
            batch.append(.sample(QuantitySample(
                uuid: UUID(uuid: SampleGenerator.uuidBytes(random.next(), random.next())), type: .stepCount,
                quantity: Quantity(value: Double(random.below(121)), unit: .count), start: begin, end: finish, source: source)))
            batch.append(.sample(QuantitySample(
                uuid: UUID(uuid: SampleGenerator.uuidBytes(random.next(), random.next())), type: .heartRate,
                quantity: Quantity(value: Double(55 + random.below(90)), unit: perMinute), start: begin, end: begin, source: source)))
            if batch.count >= 10_000 || minute == minutes - 1 {
                let report = try pipeline.ingest(batch)
                guard report.totals.written == batch.count else { throw BenchError("serve fill: \(report.totals)") }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Starts `ingestd serve`, sends `clients` page requests at once, returns the server's VmHWM in kB.
    static func parallelPeak(ingestd: String, path: String, person: String, clients: Int) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ingestd)
        process.arguments = ["serve", "--store", path, "--listen", "127.0.0.1:0"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        var seen = ""
        while !seen.contains("\n") {
            let data = err.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        guard let range = seen.range(of: "http://127.0.0.1:"), let port = UInt16(seen[range.upperBound...].prefix { $0.isNumber })
        else { throw BenchError("serve: ingestd serve did not start: \(seen)") }
        let target = "/person?name=" + (person.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? person)
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: clients) { _ in
            if !get(port: port, target: target) { failures.add() }
        }
        guard failures.count == 0 else { throw BenchError("serve: \(failures.count) of \(clients) parallel requests failed") }
        return DaemonBench.Proc.statusKilobytes(pid: process.processIdentifier, "VmHWM") ?? 0
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func add() { lock.lock(); value += 1; lock.unlock() }
        var count: Int { lock.lock(); defer { lock.unlock() }; return value }
    }

    /// One GET over a socket; true when the answer is a 200 read to its end.
    static func get(port: UInt16, target: String) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return false }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return answer.starts(with: Array("HTTP/1.1 200".utf8))
    }
}
