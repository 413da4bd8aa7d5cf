import Foundation
import Testing
import TestSupport

/// The JSON API of a real `ingestd serve`: the bodies of `/api/v1/samples`, `changes`, `status`,
/// `sources`, `today` and `stats` are the bytes the commands print with `--json` for the same store
/// and options; samples and changes come a page at a time; malformed parameters get a 400 saying
/// what is wrong.
@Suite(.serialized, .offCooperativePool) struct DashboardAPITests {
    /// The body of `GET target`, after checking that it was answered 200 as JSON (lines, but for `today`).
    static func body(_ http: RawHTTP, _ target: String) -> String {
        let answer = http.get(target)
        #expect(RawHTTP.status(answer) == 200, "\(target): \(answer.prefix(400))")
        #expect(answer.contains(target.hasPrefix("/api/v1/today") ? "Content-Type: application/json\r\n" : "Content-Type: application/x-ndjson"),
                "\(target)")
        return RawHTTP.body(answer)
    }

    @Test func samplesChangesAndStatusAnswerWhatTheCLIPrints() throws {
        let served = try ServedExport()
        defer { served.close() }
        let (store, http) = (served.store, served.http)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let from = formatter.string(from: Date().addingTimeInterval(-10 * 86_400))
        let to = formatter.string(from: Date().addingTimeInterval(-5 * 86_400))
        // The same question asked of the CLI (its options) and the API (its parameters).
        let pairs: [([String], String)] = [
            (["samples", "heartRate"], "/api/v1/samples?type=heartRate"),
            (["samples", "bodyMass", "--latest"], "/api/v1/samples?type=bodyMass&latest=true"),
            (["samples", "HKQuantityTypeIdentifierStepCount", "--newest", "5"], "/api/v1/samples?type=HKQuantityTypeIdentifierStepCount&newest=5"),
            (["samples", "stepCount", "--from", from, "--to", to, "--tz", "UTC", "--limit", "4"],
             "/api/v1/samples?type=stepCount&from=\(from)&to=\(to)&tz=UTC&limit=4"),
            (["samples", "bodyMass", "--unit", "lbs", "--source", "Scale", "--person", "me"],
             "/api/v1/samples?type=bodyMass&unit=lbs&source=Scale&person=me"),
            (["samples", "bloodPressureSystolic", "--from", "2026-03-01T08:00:00Z"], "/api/v1/samples?type=bloodPressureSystolic&from=2026-03-01T08:00:00Z"),
            (["changes"], "/api/v1/changes"),
            (["changes", "--since", "100", "--type", "bodyMass"], "/api/v1/changes?since=100&type=bodyMass"),
            (["changes", "--since", "99999", "--person", "me"], "/api/v1/changes?since=99999&person=me"),
            (["status"], "/api/v1/status"),
            (["sources"], "/api/v1/sources"),
            (["today", "--tz", "UTC"], "/api/v1/today"),
            (["today", "--date", "yesterday", "--tz", "Europe/Berlin", "--person", "me"], "/api/v1/today?date=yesterday&tz=Europe/Berlin&person=me"),
            (["today", "--date", from, "--tz", "UTC"], "/api/v1/today?date=\(from)"),
            (["stats", "stepCount", "--sum", "--by", "day", "--from", from, "--to", to, "--tz", "UTC"],
             "/api/v1/stats?type=stepCount&statistic=sum&by=day&from=\(from)&to=\(to)&tz=UTC"),
            (["stats", "heartRate", "--average", "--by", "week", "--unit", "bpm", "--from", from, "--tz", "Europe/Berlin"],
             "/api/v1/stats?type=heartRate&by=week&unit=bpm&from=\(from)&tz=Europe/Berlin"),
            (["stats", "bodyMass", "--latest", "--unit", "lbs", "--tz", "UTC"], "/api/v1/stats?type=bodyMass&statistic=latest&unit=lbs"),
        ]
        for (arguments, target) in pairs {
            let cli = try store.ingestd(arguments + ["--json"])
            try #require(cli.status == 0, "\(arguments): \(cli.stderr)")
            #expect(!cli.stdout.isEmpty, "\(arguments)")
            let api = Self.body(http, target)
            #expect(api == cli.stdout, "\(target) differs from ingestd \(arguments.joined(separator: " ")) --json")
        }
        #expect(try store.ingestd(["samples", "heartRate", "--json"]).lines.count == 120, "40 days of three")

        // Changes a page at a time: the pages' lines, anchor by anchor, are the whole feed.
        let whole = try store.ingestd(["changes", "--json"]).lines
        var since = "0"
        var paged: [String] = []
        for _ in 0..<20 {
            let lines = Self.body(http, "/api/v1/changes?since=\(since)&limit=100").split(separator: "\n").map(String.init)
            let anchor = try #require(lines.last)
            #expect(anchor.hasPrefix("{\"anchor\":"))
            paged += lines.dropLast()
            let next = String(anchor.dropFirst("{\"anchor\":".count).dropLast())
            if next == since { break }
            since = next
        }
        #expect(paged.count > 400 && paged.count < 500, "\(paged.count) changes")
        #expect(paged + ["{\"anchor\":\(since)}"] == whole)
    }

    /// More samples than a page: the first `maximumPerRequest` (5,000) and a header saying more match.
    @Test func samplesBeyondAPageAreCutThereAndSaySo() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        let start = Date().addingTimeInterval(-30 * 86_400)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        let records = (0..<5003).map { minute in
            let at = formatter.string(from: start.addingTimeInterval(Double(minute) * 60))
            return #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Strap" unit="count/min" startDate="\#(at)" endDate="\#(at)" value="\#(60 + minute % 40)"/>"#
        }
        let file = store.directory.appendingPathComponent("export.xml")
        try ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n" + records.joined(separator: "\n") + "\n</HealthData>\n")
            .write(to: file, atomically: true, encoding: .utf8)
        let imported = try IngestdProcess.runBlocking(["import", file.path, "--store", store.path, "--grant"], limit: 120)
        try #require(imported.status == 0, "\(imported.stderr)")
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let http = RawHTTP(port: server.port)
        let answer = http.get("/api/v1/samples?type=heartRate")
        #expect(RawHTTP.status(answer) == 200)
        #expect(answer.contains("X-Ingestd-Truncated: more than 5000 samples match"), "\(answer.prefix(600))")
        let lines = RawHTTP.body(answer).split(separator: "\n").map(String.init)
        let cli = try store.ingestd(["samples", "heartRate", "--json", "--limit", "5000"])
        #expect(lines.count == 5000)
        #expect(lines == cli.lines)
        // An explicit limit is the CLI's --limit: no header, whether or not more match.
        let limited = http.get("/api/v1/samples?type=heartRate&limit=5000")
        #expect(!limited.contains("X-Ingestd-Truncated") && RawHTTP.body(limited).split(separator: "\n").count == 5000)
        let newest = http.get("/api/v1/samples?type=heartRate&newest=5000")
        #expect(!newest.contains("X-Ingestd-Truncated"))
        #expect(RawHTTP.body(newest) == (try store.ingestd(["samples", "heartRate", "--json", "--newest", "5000"])).stdout)
        #expect(RawHTTP.status(http.get("/api/v1/samples?type=heartRate&limit=5001")) == 400)
        #expect(RawHTTP.status(http.get("/api/v1/samples?type=heartRate&newest=5001")) == 400)
    }

    @Test func malformedParametersOfSamplesChangesAndStatusGetClear400s() throws {
        let served = try ServedExport()
        defer { served.close() }
        let http = served.http
        // A fleet's token (gateway "gw" at anchor 5) given to a store file.
        let fleetToken = "f1." + Data("gw\t5\n".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        http.expectBadRequests([
            ("/api/v1/samples", "parameter 'type' is '', expected a quantity type"),
            ("/api/v1/samples?type=heartRat", "parameter 'type' is 'heartRat'"),
            ("/api/v1/samples?type=heartRate&limit=0", "parameter 'limit' is '0', expected a whole number from 1 to 5000"),
            ("/api/v1/samples?type=heartRate&limit=5001", "parameter 'limit' is '5001'"),
            ("/api/v1/samples?type=heartRate&limit=ten", "parameter 'limit' is 'ten'"),
            ("/api/v1/samples?type=heartRate&newest=-2", "parameter 'newest' is '-2'"),
            ("/api/v1/samples?type=heartRate&latest=yes", "parameter 'latest' is 'yes', expected true or false"),
            ("/api/v1/samples?type=heartRate&latest=true&newest=3", "give latest or newest N, not both"),
            ("/api/v1/samples?type=heartRate&newest=3&limit=2", "limit 2 lists the oldest; use newest N alone"),
            ("/api/v1/samples?type=heartRate&unit=kg", "parameter 'unit' is 'kg', expected a unit of heartRate such as count/min"),
            ("/api/v1/samples?type=heartRate&unit=furlongs", "parameter 'unit' is 'furlongs'"),
            ("/api/v1/samples?type=heartRate&from=last%20week", "parameter 'from' is 'last week'"),
            ("/api/v1/samples?type=heartRate&from=2026-03-02&to=2026-03-01", "'from' must be before 'to'"),
            ("/api/v1/samples?type=heartRate&person=nobody", "no person named 'nobody'"),
            ("/api/v1/samples?type=heartRate&count=3", "parameter 'count'"),
            ("/api/v1/samples?type=heartRate&type=stepCount", "'type' is given twice"),
            ("/api/v1/changes?since=-1", "parameter 'since' is '-1', expected an anchor 'changes' printed (must not be negative)"),
            ("/api/v1/changes?since=yesterday", "parameter 'since' is 'yesterday'"),
            ("/api/v1/changes?since=\(fleetToken)", "expected an anchor of this store"),
            ("/api/v1/changes?type=nosuchtype", "parameter 'type' is 'nosuchtype'"),
            ("/api/v1/changes?limit=100000", "parameter 'limit' is '100000'"),
            ("/api/v1/status?person=me", "parameter 'person' is 'me', expected no parameters"),
            ("/api/v1/stats?type=stepCount&unit=bpm", "parameter 'unit' is 'bpm', expected a unit of stepCount"),
        ])
        #expect(RawHTTP.status(http.get("/api/v1/nothing")) == 404)
        #expect(RawHTTP.status(http.get("/api/v1/status")) == 200)
    }
}
