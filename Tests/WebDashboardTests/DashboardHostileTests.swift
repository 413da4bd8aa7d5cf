import Foundation
import Glibc
import Testing
import TestSupport

/// Hostile clients against `ingestd serve`: path traversal, huge headers and bodies, slow clients,
/// a thousand connections at once, malformed query parameters. The server answers clearly, stays
/// bounded, and serves the next well-behaved request.
@Suite(.serialized, .offCooperativePool) struct DashboardHostileTests {
    static func openFiles(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    @Test func traversalHugeRequestsAndMalformedParametersGetClearAnswers() throws {
        let served = try ServedExport()
        defer { served.close() }
        let http = served.http
        for target in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/style.css/../../etc/passwd", "//etc/passwd",
                       "/api/v1/../../etc/shadow"] {
            let answer = http.get(target)
            #expect(RawHTTP.status(answer) == 404, "\(target)")
            #expect(!answer.contains("root:"))
        }
        // Request line and headers beyond the per-connection memory: refused, the server lives on.
        let hugeHeader = http.get("/", headers: ["X-Filler: " + String(repeating: "a", count: 200_000)])
        #expect([0, 413, 414, 431].contains(RawHTTP.status(hugeHeader)))
        #expect(RawHTTP.status(http.get("/" + String(repeating: "a", count: 100_000))) != 200)
        let manyHeaders = http.get("/", headers: (0..<5000).map { "X-\($0): v" })
        #expect([0, 413, 431].contains(RawHTTP.status(manyHeaders)))
        // A body larger than the limit.
        let body = String(repeating: "csrf=x&", count: 20_000)
        #expect(RawHTTP.status(http.post("/decisions", form: body)) == 413)
        // Methods the dashboard does not have.
        #expect(RawHTTP.status(http.exchange(Array("DELETE / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))) == 405)
        // Malformed query parameters: 400 with what was wrong.
        http.expectBadRequests([
            ("/api/v1/stats?type=nosuchtype", "parameter 'type' is 'nosuchtype'"),
            ("/api/v1/stats?type=stepCount&from=yesterday", "parameter 'from' is 'yesterday'"),
            ("/api/v1/stats?type=stepCount&by=fortnight", "parameter 'by' is 'fortnight'"),
            ("/api/v1/stats?type=stepCount&statistic=average", "parameter 'statistic' is 'average'"),
            ("/api/v1/stats?type=stepCount&type=heartRate", "'type' is given twice"),
            ("/api/v1/stats?type=stepCount&from=2026-02-30", "parameter 'from' is '2026-02-30'"),
            ("/api/v1/stats?type=stepCount&from=2026-03-02&to=2026-03-01", "'from' must be before 'to'"),
            ("/api/v1/stats?type=stepCount&by=hour&from=1900-01-01&to=2026-01-01", "buckets"),
            ("/api/v1/today?tz=Mars/Olympus", "parameter 'tz' is 'Mars/Olympus'"),
            ("/api/v1/today?person=nobody", "no person named 'nobody'"),
            ("/api/v1/today?bogus=1", "parameter 'bogus'"),
            ("/api/v1/today?date=%00%ff", "parameter 'date'"),
            ("/person?name=%3Cscript%3E", "no person named '<script>'"),
        ])
        // And the next good request is answered.
        #expect(RawHTTP.status(http.get("/api/v1/today")) == 200)
    }

    @Test func slowClientsAndAThousandConnectionsStayBounded() throws {
        let served = try ServedExport()
        defer { served.close() }
        let http = served.http
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 2048 {
            limit.rlim_cur = min(4096, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let before = Self.openFiles(served.server.pid)
        // A slow client: half a request line, then nothing; the server drops it after its idle timeout.
        let slow = try #require(http.connect())
        _ = "GET / HT".withCString { send(slow, $0, 8, Int32(MSG_NOSIGNAL)) }
        // A thousand connections at once, each sending nothing.
        var sockets: [Int32] = []
        for _ in 0..<1000 {
            if let socket = http.connect() { sockets.append(socket) }
        }
        let during = Self.openFiles(served.server.pid)
        #expect(during - before <= 70, "at most the connection limit (64) held open, saw \(during - before) more")
        for socket in sockets { close(socket) }
        // The slow client is cut off (the read ends with the server's close, not our 20 s receive timeout).
        let started = Date()
        _ = http.readAll(slow)
        close(slow)
        #expect(Date().timeIntervalSince(started) < 19, "the idle connection was closed by the server")
        // After the flood, requests are served again.
        var answered = false
        for _ in 0..<50 where !answered {
            answered = RawHTTP.status(http.get("/api/v1/people")) == 200
            if !answered { usleep(200_000) }
        }
        #expect(answered)
    }
}
