import Foundation
import Glibc
import Testing
import TestSupport

/// The dashboard as it is served: the sinks page without any secret (nor any other page), the
/// Content-Security-Policy of every page kept by headless Chromium, the daemon serving it with
/// `run --http`, and `serve` reading a store another process writes to (a WAL reader).
@Suite(.serialized, .offCooperativePool) struct DashboardServingTests {
    /// Every page, the stylesheet, `/metrics` and each API endpoint, as a person with one name sees them.
    static let everyTarget = [
        "/", "/person?name=me", "/decisions", "/unassigned", "/devices", "/sinks", "/metrics", "/style.css", "/login",
        "/api/v1/people", "/api/v1/today", "/api/v1/stats?type=stepCount&by=day", "/api/v1/sources", "/api/v1/status",
        "/api/v1/samples?type=heartRate", "/api/v1/changes",
    ]
    static let htmlPages = ["/", "/person?name=me", "/decisions", "/unassigned", "/devices", "/sinks"]

    @Test func theSinksPageShowsEachSinksStateAndNoPageShowsASecret() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.importExport()
        let secrets = ["UrlPassw0rd-41", "Sup3rS3cretPW-41", "HttpPassw0rd-77", "HeaderT0ken-5c2e", "HaT0ken-longlived-9d"]
        let tokenFile = store.directory.appendingPathComponent("ha-token")
        try (secrets[4] + "\n").write(to: tokenFile, atomically: true, encoding: .utf8)
        try store.ingestd(steps: [
            ["sinks", "add", "broker", "mqtt://anna:\(secrets[0])@127.0.0.1:1", "--password", secrets[1], "--types", "heartRate"],
            ["sinks", "add", "push", "https://pushuser:\(secrets[2])@127.0.0.1:1/in", "--header", "Authorization: Bearer \(secrets[3])",
             "--all-types"],
            ["sinks", "add", "history", "ws://127.0.0.1:1", "--token", "@" + tokenFile.path, "--all-types"],
        ])
        // Every receiver refuses the connection: each sink keeps its last error.
        _ = try store.ingestd(["sinks", "deliver"])
        let listed = try store.ingestd(["sinks", "list", "--json"]).lines.compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        try #require(listed.count == 3)

        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let page = try Chromium.dom("\(server.base)/sinks")
        _ = try Chromium.screenshot("\(server.base)/sinks", name: "sinks.png")
        let table = try #require(HTMLProbe.table(id: "sinks", in: page), "\(page)")
        let rows = HTMLProbe.rows(table)
        #expect(rows.map { $0.first ?? "" } == ["broker", "history", "push"], "\(rows)")
        for sink in listed {
            let name = try #require(sink["name"] as? String)
            let row = try #require(rows.first { $0.first == name })
            // Sink, kind, backlog, last success, last error, dead letters: as `sinks list` says.
            #expect(row.count == 6, "\(row)")
            #expect(row[1] == sink["kind"] as? String)
            #expect(Int(row[2]) == sink["backlog"] as? Int, "\(name): \(row[2]) against \(sink["backlog"] ?? "")")
            #expect((sink["backlog"] as? Int ?? 0) > 0)
            #expect(row[3] == "never")
            let error = try #require(sink["lastError"] as? String, "\(name) failed to deliver")
            let shown = row[4].replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&amp;", with: "&")
            #expect(shown == error, "\(name): the page shows '\(shown)', sinks list '\(error)'")
        }

        // No secret on any page, in any header, in any answer of the API.
        let http = RawHTTP(port: server.port)
        for target in Self.everyTarget {
            let answer = http.get(target)
            #expect(RawHTTP.status(answer) == 200, "\(target): \(answer.prefix(300))")
            for secret in secrets + ["anna:", "pushuser:"] {
                #expect(!answer.contains(secret), "\(target) shows \(secret)")
            }
        }
        for secret in secrets { #expect(!page.contains(secret)) }
    }

    /// Every page carries the strict policy, and Chromium loading them reports no violation of it
    /// (no inline script or style anywhere), while the stylesheet still applies.
    @Test func everyPageHasAStrictContentSecurityPolicyThatChromiumFindsNothingAgainst() throws {
        let served = try ServedExport()
        defer { served.close() }
        let http = served.http
        let policy = "Content-Security-Policy: default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        for target in Self.everyTarget + ["/no-such-page", "/api/v1/stats?type=nosuchtype"] {
            let answer = http.get(target)
            let headers = answer.components(separatedBy: "\r\n\r\n").first ?? ""
            #expect(headers.contains(policy + "\r\n"), "\(target): \(headers)")
            #expect(headers.contains("X-Content-Type-Options: nosniff") && headers.contains("X-Frame-Options: DENY"), "\(target)")
        }
        for target in Self.htmlPages {
            let body = RawHTTP.body(http.get(target))
            #expect(!body.contains("<script") && !body.contains("<style") && !body.contains(" style=\""), "\(target) has inline script or style")
            // Chromium's console (logged to standard error) names every resource the policy refused.
            let loaded = try Chromium.run(["--enable-logging=stderr", "--v=0", "--dump-dom", served.server.base + target])
            #expect(loaded.status == 0)
            #expect(!loaded.stderr.contains("Content Security Policy"), "\(target): \(loaded.stderr.suffix(1500))")
            #expect(loaded.stdout.contains("<main>"))
        }
    }

    /// `ingestd run --http 127.0.0.1:0` with no devices: the daemon serves the dashboard while it
    /// runs, answers as `serve` does, and closes the port when SIGTERM stops it.
    @Test func theDaemonServesTheDashboardWhileItRuns() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.importExport()
        let daemon = try DashboardServer(arguments: ["run", "--no-ble", "--no-usb", "--store", store.path, "--http", "127.0.0.1:0",
                                                     "--tz", "UTC"])
        defer { daemon.stop() }
        let http = RawHTTP(port: daemon.port)
        #expect(RawHTTP.body(http.get("/api/v1/people")) == "[\"me\"]\n")
        let person = http.get("/person?name=me")
        #expect(RawHTTP.status(person) == 200 && person.contains("<figure class=\"chart\""))
        let status = try store.ingestd(["status", "--json"])
        #expect(RawHTTP.body(http.get("/api/v1/status")) == status.stdout)
        let today = try store.ingestd(["today", "--json", "--tz", "UTC"])
        #expect(RawHTTP.body(http.get("/api/v1/today")) == today.stdout)
        #expect(RawHTTP.status(http.get("/metrics")) == 200)
        #expect(daemon.running.process.isRunning, "the daemon runs on")

        kill(daemon.pid, SIGTERM)
        daemon.running.process.waitUntilExit()
        #expect(daemon.running.process.terminationStatus == 0)
        #expect(http.connect().map { close($0) } == nil, "the port is closed with the daemon")
    }

    /// `serve` reads while `ingestd import` writes in another process: every answer during the
    /// write is whole (never 'database is locked'), and the new samples show once committed.
    @Test func serveReadsAStoreAnotherProcessWritesTo() throws {
        let served = try ServedExport()
        defer { served.close() }
        let (store, http) = (served.store, served.http)
        let before = RawHTTP.body(http.get("/api/v1/samples?type=heartRate")).split(separator: "\n").count
        #expect(before == 120)
        let file = store.directory.appendingPathComponent("year.xml")
        try DashboardStore.exportXML(days: 400).write(to: file, atomically: true, encoding: .utf8)
        let writer = try IngestdProcess.start(["import", file.path, "--store", store.path, "--grant"])
        var answers = 0
        var answeredDuringTheWrite = 0
        var counts: [Int] = []
        let deadline = Date().addingTimeInterval(180)
        while writer.process.isRunning || answers == 0, Date() < deadline {
            for target in ["/api/v1/status", "/api/v1/samples?type=heartRate&limit=5000", "/person?name=me"] {
                let answer = http.get(target)
                #expect(RawHTTP.status(answer) == 200, "\(target) during the import: \(answer.prefix(400))")
                if target.contains("samples") { counts.append(RawHTTP.body(answer).split(separator: "\n").count) }
                answers += 1
                if writer.process.isRunning { answeredDuringTheWrite += 1 }
            }
        }
        writer.process.waitUntilExit()
        #expect(writer.process.terminationStatus == 0)
        #expect(answeredDuringTheWrite > 0, "requests were answered while the import ran")
        #expect(counts == counts.sorted(), "what a reader sees only grows: \(counts)")
        let after = RawHTTP.body(http.get("/api/v1/samples?type=heartRate&limit=5000"))
        #expect(after.split(separator: "\n").count >= 1200, "400 days of three")
        #expect(after == (try store.ingestd(["samples", "heartRate", "--json"])).stdout)
        #expect(RawHTTP.body(http.get("/api/v1/status")) == (try store.ingestd(["status", "--json"])).stdout)
    }
}
