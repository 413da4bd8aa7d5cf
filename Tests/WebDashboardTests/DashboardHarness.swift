import Foundation
import Glibc
import Testing
import TestSupport

/// A store filled through `ingestd import` from an Apple Health export.xml written for the test
/// (its dates are relative to now, so that "today" and "the last 30 days" have data).
struct DashboardStore {
    let directory: URL
    var path: String { directory.appendingPathComponent("health.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// An export.xml: 40 days of steps, distance and heart rate (three a day), and every third day a
    /// weighing with body fat and a blood-pressure correlation; sources Watch, Scale and Cuff.
    static func exportXML(now: Date = Date(), days: Int = 40) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        // The export's last day is today (UTC), whatever the hour: its samples are squeezed into
        // the part of today already past (the pipeline refuses future ones), so "today" always
        // has steps; `importExport` waits out the first 90 seconds of a UTC day.
        let today = calendar.startOfDay(for: now)
        let pastToday = now.timeIntervalSince(today) - 60
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        func text(_ date: Date) -> String { formatter.string(from: date) }
        var records: [String] = []
        for day in 0..<days {
            let base = today.addingTimeInterval(Double(-day) * 86_400)
            // Three samples an hour apart, early in the day; today's within the part already past.
            let slot = day == 0 ? min(3600, pastToday / 3) : 3600
            for hour in 0..<3 {
                let start = base.addingTimeInterval(Double(hour) * slot + min(60, slot / 4))
                let end = start.addingTimeInterval(min(1800, slot / 2))
                records.append(#"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Watch" unit="count" startDate="\#(text(start))" endDate="\#(text(end))" value="\#(1000 + day * 13 + hour)"/>"#)
                records.append(#"<Record type="HKQuantityTypeIdentifierDistanceWalkingRunning" sourceName="Watch" unit="km" startDate="\#(text(start))" endDate="\#(text(end))" value="\#(0.7 + Double(hour) * 0.05)"/>"#)
                records.append(#"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="\#(text(start))" endDate="\#(text(start))" value="\#(60 + hour * 20 + day % 5)"/>"#)
            }
            if day % 3 == 0 {
                let at = text(base.addingTimeInterval(min(120, slot / 3)))
                records.append(#"<Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Scale" unit="kg" startDate="\#(at)" endDate="\#(at)" value="\#(String(format: "%.2f", 70 + Double(day) * 0.05))"/>"#)
                records.append(#"<Record type="HKQuantityTypeIdentifierBodyFatPercentage" sourceName="Scale" unit="%" startDate="\#(at)" endDate="\#(at)" value="\#(String(format: "%.3f", 0.2 + Double(day) * 0.001))"/>"#)
                records.append(#"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="\#(at)" endDate="\#(at)"><Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Cuff" unit="mmHg" startDate="\#(at)" endDate="\#(at)" value="\#(115 + day)"/><Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Cuff" unit="mmHg" startDate="\#(at)" endDate="\#(at)" value="\#(75 + day / 2)"/></Correlation>"#)
            }
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n" + records.joined(separator: "\n") + "\n</HealthData>\n"
    }

    /// Imports the export (granting every source unless `grant` is false: then the samples are held).
    func importExport(grant: Bool = true) throws {
        // Within the first 90 seconds of a UTC day too little of today is past to hold its samples.
        let sinceMidnight = Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)
        if sinceMidnight < 90 { Thread.sleep(forTimeInterval: 90 - sinceMidnight) }
        let file = directory.appendingPathComponent("export.xml")
        try Self.exportXML().write(to: file, atomically: true, encoding: .utf8)
        let result = try IngestdProcess.runBlocking(["import", file.path, "--store", path] + (grant ? ["--grant"] : []), limit: 120)
        #expect(result.status == 0, "\(result.stderr)")
    }

    func ingestd(_ arguments: [String]) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", path], limit: 60)
    }

    /// Runs each command on the store in turn; one that fails ends the test.
    func ingestd(steps: [[String]]) throws {
        for arguments in steps {
            let result = try ingestd(arguments)
            try #require(result.status == 0, "\(arguments): \(result.stderr)")
        }
    }
}

/// A store with the test export imported and `ingestd serve` over it; `close` stops the server
/// and removes the store.
struct ServedExport {
    let store: DashboardStore
    let server: DashboardServer
    var http: RawHTTP { RawHTTP(port: server.port) }

    init() throws {
        store = try DashboardStore()
        try store.importExport()
        server = try DashboardServer(store: store)
    }

    func close() {
        server.stop()
        store.remove()
    }
}

/// `ingestd serve` (or `ingestd run --http`) started on 127.0.0.1 with the port the system chose,
/// stopped with SIGTERM.
final class DashboardServer {
    let running: IngestdProcess.Running
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }
    var pid: Int32 { running.process.processIdentifier }

    convenience init(store: DashboardStore, extra: [String] = []) throws {
        try self.init(arguments: ["serve", "--store", store.path, "--listen", "127.0.0.1:0", "--tz", "UTC"] + extra)
    }

    /// Starts `ingestd ARGUMENTS` and reads its standard error until it says where it serves the dashboard.
    init(arguments: [String]) throws {
        running = try IngestdProcess.start(arguments)
        let announcement = "serving the dashboard on http://127.0.0.1:"
        var seen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !(seen.range(of: announcement).map { seen[$0.upperBound...].contains("/") } ?? false) {
            let data = running.err.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        guard let range = seen.range(of: announcement),
              let port = Int(seen[range.upperBound...].prefix { $0.isNumber }) else {
            running.process.terminate()
            throw HarnessError("ingestd \(arguments.first ?? "") did not say where it serves the dashboard: \(seen)")
        }
        self.port = port
    }

    func stop() {
        if running.process.isRunning {
            kill(pid, SIGTERM)
            running.process.waitUntilExit()
        }
    }

    deinit { stop() }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Headless Chromium (Debian's `chromium`), one profile directory per run.
enum Chromium {
    static let path = "/usr/bin/chromium"

    static func run(_ arguments: [String], limit: TimeInterval = 90) throws -> IngestdProcess.Output {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        return try ChildProcess.run(path, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                                           "--user-data-dir=\(profile.path)"] + arguments, limit: limit, name: "chromium")
    }

    /// The DOM after loading `url`.
    static func dom(_ url: String) throws -> String {
        let result = try run(["--dump-dom", url])
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        return result.stdout
    }

    /// A PNG of `url` kept under .build/dashboard-artifacts/ (the package's build directory).
    static func screenshot(_ url: String, name: String) throws -> String {
        let file = artifacts.appendingPathComponent(name).path
        let result = try run(["--window-size=1100,3200", "--hide-scrollbars", "--screenshot=\(file)", url])
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        return file
    }

    static var artifacts: URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = root.appendingPathComponent(".build/dashboard-artifacts")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}

/// A raw HTTP/1.1 exchange over a TCP socket to 127.0.0.1 (for requests no well-behaved client sends).
struct RawHTTP {
    let port: Int

    /// Connects; nil when the connection is refused.
    func connect() -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    /// Sends `bytes` (as much as the server takes) and reads the answer until the server closes.
    func exchange(_ bytes: [UInt8]) -> String {
        guard let socket = connect() else { return "" }
        defer { close(socket) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        return readAll(socket)
    }

    func readAll(_ socket: Int32) -> String {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while answer.count < 4 << 20 {
            let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// `GET target` with `Connection: close`.
    func get(_ target: String, headers: [String] = []) -> String {
        exchange(Array(("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n").utf8))
    }

    /// `POST target` with a form body.
    func post(_ target: String, form: String, headers: [String] = []) -> String {
        exchange(Array(("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "\r\n" + form).utf8))
    }

    /// The status code of a raw answer (0 when there is none).
    static func status(_ answer: String) -> Int {
        let parts = answer.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return 0 }
        return Int(parts[1]) ?? 0
    }

    static func body(_ answer: String) -> String {
        answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) } ?? ""
    }

    /// Each target is answered 400 in plain text (never HTML: no reflected markup) with a body
    /// holding its message.
    func expectBadRequests(_ cases: [(target: String, message: String)]) {
        for (target, message) in cases {
            let answer = get(target)
            #expect(Self.status(answer) == 400, "\(target): \(answer.prefix(300))")
            #expect(Self.body(answer).contains(message), "\(target): \(Self.body(answer))")
            #expect(answer.contains("Content-Type: text/plain"), "\(target): an error is never HTML")
        }
    }
}

/// Small readers of the served HTML.
enum HTMLProbe {
    /// The text inside the element with `id="ID"` (up to the next `<`).
    static func text(ofID id: String, in html: String) -> String? {
        guard let range = html.range(of: "id=\"\(id)\">") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "<" })
    }

    /// The table with `id="ID"`, up to its end.
    static func table(id: String, in html: String) -> String? {
        html.components(separatedBy: "<table id=\"\(id)\">").dropFirst().first?.components(separatedBy: "</table>").first
    }

    /// The `<figure class="chart" …>…</figure>` elements.
    static func figures(_ html: String) -> [String] {
        html.components(separatedBy: "<figure class=\"chart\"").dropFirst().map { $0.components(separatedBy: "</figure>")[0] }
    }

    /// The rows of a table body: each row's cells' texts (header cell first).
    static func rows(_ table: String) -> [[String]] {
        guard let body = table.components(separatedBy: "<tbody>").dropFirst().first?.components(separatedBy: "</tbody>").first,
              let cell = try? NSRegularExpression(pattern: "<t[hd][^>]*>([^<]*)</t[hd]>") else { return [] }
        return body.components(separatedBy: "<tr").dropFirst().map { row in
            cell.matches(in: row, range: NSRange(row.startIndex..., in: row)).compactMap { match in
                Range(match.range(at: 1), in: row).map { String(row[$0]) }
            }
        }
    }
}
