import Foundation
import Testing
import TestSupport

/// `ingestd serve` on 127.0.0.1 driven by headless Chromium: the pages' values against the CLI's,
/// every chart drawn with labelled axes and its table, screenshots kept, first contact decided by
/// the page's form, the report printed to PDF.
@Suite(.serialized, .offCooperativePool) struct DashboardBrowserTests {
    static func json(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func theDashboardShowsWhatTheCLIComputesAndEveryChartHasAxesAndItsTable() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.importExport()
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let page = try Chromium.dom("\(server.base)/person?name=me")
        _ = try Chromium.screenshot("\(server.base)/person?name=me", name: "person.png")
        _ = try Chromium.screenshot("\(server.base)/", name: "people.png")

        // Today's numbers equal `ingestd today` for the same store and person.
        let today = Self.json(try #require(try store.ingestd(["today", "--json", "--tz", "UTC", "--person", "me"]).lines.first))
        let steps = try #require(today["steps"] as? Double)
        #expect(steps > 0)
        #expect(HTMLProbe.text(ofID: "today-steps", in: page) == String(Int(steps)))
        let km = try #require(today["distanceKm"] as? Double)
        #expect(HTMLProbe.text(ofID: "today-distance", in: page).flatMap(Double.init) == km)

        // Every chart: a non-empty SVG with both axes labelled, and a table that matches the CLI's stats.
        let figures = HTMLProbe.figures(page)
        #expect(figures.count == 5, "steps, weight, body fat, heart rate, blood pressure")
        for figure in figures {
            #expect(figure.contains("<svg"))
            #expect(figure.contains("class=\"axis-label y-label\""))
            #expect(figure.contains("class=\"axis-label x-label\""))
            #expect(figure.contains("class=\"series series-0"), "a drawn series")
            #expect(!figure.contains("No data in this range"))
            #expect(!HTMLProbe.rows(figure).isEmpty)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let start = calendar.startOfDay(for: Date())
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "yyyy-MM-dd"
        let from = formatter.string(from: start.addingTimeInterval(-30 * 86_400))
        let to = formatter.string(from: start.addingTimeInterval(86_400))
        let stepsFigure = try #require(figures.first { $0.contains("id=\"steps\"") })
        let cliSteps = try store.ingestd(["stats", "stepCount", "--sum", "--by", "day", "--from", from, "--to", to, "--tz", "UTC",
                                          "--person", "me", "--json"]).lines.map(Self.json)
        let tableSteps = HTMLProbe.rows(stepsFigure)
        #expect(tableSteps.count == cliSteps.count)
        for (row, bucket) in zip(tableSteps, cliSteps) {
            #expect(row.first == (bucket["start"] as? String).map { String($0.prefix(10)) })
            #expect(row.last.flatMap(Double.init) == (bucket["value"] as? Double).map { $0.rounded() })
        }
        let heartFigure = try #require(figures.first { $0.contains("id=\"heart-rate\"") })
        let cliMaximum = try store.ingestd(["stats", "heartRate", "--max", "--by", "day", "--from", from, "--to", to, "--tz", "UTC",
                                            "--person", "me", "--unit", "count/min", "--json"]).lines.map(Self.json)
        let heartRows = HTMLProbe.rows(heartFigure)
        #expect(heartRows.count == cliMaximum.count)
        for (row, bucket) in zip(heartRows, cliMaximum) where row.count == 4 {
            #expect(Double(row[3]) == (bucket["value"] as? Double).map { $0.rounded() })
        }
        // The blood-pressure log carries the categories.
        #expect(page.contains("Hypertension stage 2"))
        #expect(page.contains("id=\"blood-pressure-log\""))
        // No script anywhere, and the CSP forbids any.
        #expect(!page.contains("<script"))

        // A person reading US units (people set --units us) sees pounds and miles; the weight
        // table equals the CLI's daily averages converted to lb.
        #expect(try store.ingestd(["people", "set", "me", "--units", "us"]).status == 0)
        let usPage = try Chromium.dom("\(server.base)/person?name=me")
        let usWeight = try #require(HTMLProbe.figures(usPage).first { $0.contains("id=\"weight\"") })
        #expect(usWeight.contains("Weight (lb)") && !usWeight.contains("Weight (kg)"))
        let quarterFrom = formatter.string(from: start.addingTimeInterval(-90 * 86_400))
        let cliPounds = try store.ingestd(["stats", "bodyMass", "--average", "--by", "day", "--from", quarterFrom, "--to", to,
                                           "--tz", "UTC", "--person", "me", "--unit", "lb", "--json"]).lines.map(Self.json)
            .compactMap { $0["value"] as? Double }
        let tablePounds = HTMLProbe.rows(usWeight).compactMap { $0.last.flatMap(Double.init) }
        #expect(!tablePounds.isEmpty && tablePounds == cliPounds.map { ($0 * 10).rounded() / 10 }, "\(tablePounds) against \(cliPounds)")
        let miles = try #require(HTMLProbe.text(ofID: "today-distance", in: usPage).flatMap(Double.init))
        #expect(abs(miles - km / 1.609344) < 0.006, "\(miles) mi against \(km) km")
    }

    @Test func theGrantFormBringsHeldSamplesInAndFailsWithoutItsCSRFToken() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.importExport(grant: false)
        #expect(try store.ingestd(["samples", "stepCount", "--json"]).lines.isEmpty)
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let page = try Chromium.dom("\(server.base)/decisions")
        _ = try Chromium.screenshot("\(server.base)/decisions", name: "decisions.png")
        #expect(page.contains("<table id=\"pending\">"))
        let csrf = try #require(page.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.prefix { $0 != "\"" })
        let http = RawHTTP(port: server.port)
        // The same form without its token, or with another, changes nothing.
        #expect(RawHTTP.status(http.post("/decisions", form: "source=Watch&action=grant")) == 403)
        #expect(RawHTTP.status(http.post("/decisions", form: "csrf=0000&source=Watch&action=grant")) == 403)
        #expect(try store.ingestd(["samples", "stepCount", "--json"]).lines.isEmpty)
        // The form as the Grant button sends it.
        let granted = http.post("/decisions", form: "csrf=\(csrf)&source=Watch&action=grant")
        #expect(RawHTTP.status(granted) == 200)
        #expect(granted.contains("granted Watch every type: brought in"))
        #expect(try store.ingestd(["samples", "stepCount", "--json"]).lines.count == 120)
        // Deny: the cuff's held readings are discarded.
        #expect(http.post("/decisions", form: "csrf=\(csrf)&source=Cuff&action=deny").contains("denied Cuff"))
        let after = try Chromium.dom("\(server.base)/decisions")
        #expect(!after.contains(">Watch<"))
        #expect(!after.contains(">Cuff<"))
        #expect(after.contains(">Scale<"))
    }

    /// "This is mine" (issue 29): a shared Mi scale's weighing nobody could be told apart for (the
    /// household capture: 61.2 kg alice's, 84.1 kg bob's, 72.0 kg nobody's) is listed with a form per
    /// reading; without its CSRF token nothing moves; with it the reading becomes bob's, as
    /// `ingestd samples` shows; the stale form sent again (or for alice) changes nothing.
    @Test func anUnassignedReadingBecomesThePersonsWhoClaimsIt() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("IngestdProcessTests/Captures/household/household-mi-scale.btsnoop").path
        try store.ingestd(steps: [["people", "add", "alice", "--weight", "60", "--unit", "kg", "--height", "165", "--unit", "cm",
                                   "--scale-user-index", "1"],
                                  ["people", "add", "bob", "--weight", "85", "--unit", "kg", "--scale-user-index", "2"],
                                  ["people", "remove", "me"], ["auth", "grant", "xiaomi-scale", "--all"],
                                  ["replay", capture, "--tz", "Europe/Berlin"]])
        func masses(_ person: String) throws -> [Double] {
            try store.ingestd(["samples", "bodyMass", "--person", person, "--json"]).lines.compactMap {
                (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["value"] as? Double
            }
        }
        #expect(try masses("bob") == [84.1])
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        #expect(try Chromium.dom("\(server.base)/").contains("1 reading nobody was assigned"))
        let page = try Chromium.dom("\(server.base)/unassigned")
        _ = try Chromium.screenshot("\(server.base)/unassigned", name: "unassigned.png")
        #expect(page.contains("<table id=\"unassigned\">") && page.contains("72.0 kg") && page.contains("This is mine"), "\(page)")
        let csrf = try #require(page.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.prefix { $0 != "\"" })
        let uuid = try #require(page.components(separatedBy: "name=\"uuid\" value=\"").dropFirst().first?.prefix { $0 != "\"" })
        let http = RawHTTP(port: server.port)
        #expect(RawHTTP.status(http.post("/unassigned", form: "uuid=\(uuid)&person=bob")) == 403)
        #expect(RawHTTP.status(http.post("/unassigned", form: "csrf=\(csrf)&uuid=\(uuid)&person=carol")) == 400)
        #expect(RawHTTP.status(http.post("/unassigned", form: "csrf=\(csrf)&uuid=not-a-uuid&person=bob")) == 400)
        #expect(try masses("bob") == [84.1])
        let claimed = http.post("/unassigned", form: "csrf=\(csrf)&uuid=\(uuid)&person=bob")
        #expect(RawHTTP.status(claimed) == 200 && claimed.contains("the reading is bob&#39;s now"), "\(claimed)")
        #expect(try Set(masses("bob")) == [84.1, 72.0])
        #expect(try store.ingestd(["unassigned", "--json"]).lines.isEmpty)
        // The stale form, for alice: the reading stays bob's.
        let stale = http.post("/unassigned", form: "csrf=\(csrf)&uuid=\(uuid)&person=alice")
        #expect(stale.contains("no longer unassigned"), "\(stale)")
        #expect(try masses("alice") == [61.2])
        #expect(try Chromium.dom("\(server.base)/unassigned").contains("Every reading belongs to someone."))
    }

    /// The devices page: each device's newest reading, its battery as the device said it (real
    /// ATC1441/PVVX frames: 81 %, 100 %, 75 %), none for a source that had no grant when its
    /// device said it (the Govee frames' 100 % was not kept), and the decision a device waits for.
    @Test func theDevicesPageShowsEachDevicesLastReadingBatteryAndWhatItWaitsFor() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let thermometers = tests.appendingPathComponent("AdapterTests/Captures/room-thermometer").path
        let scale = tests.appendingPathComponent("IngestdProcessTests/Captures/household/household-mi-scale.btsnoop").path
        try store.ingestd(steps: [["replay", thermometers + "/govee.btsnoop"], ["auth", "grant", "room-thermometer", "--all"],
                                  ["replay", thermometers + "/atc-pvvx.btsnoop"], ["replay", scale]])
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let page = try Chromium.dom("\(server.base)/devices")
        _ = try Chromium.screenshot("\(server.base)/devices", name: "devices.png")
        let table = try #require(HTMLProbe.table(id: "device-status", in: page), "\(page)")
        let rows = table.components(separatedBy: "<tr").dropFirst().map { String($0) }
        func row(_ device: String) -> String? { rows.first { $0.contains(device) } }
        let atc = try #require(row("ATC_800021 (A4:C1:38:D5:D4:98)"))
        #expect(atc.contains("81 %") && atc.contains("Ambient temperature") && atc.contains("room-thermometer"), "\(atc)")
        #expect(try #require(row("(A4:C1:38:CF:01:56)")).contains("100 %"))
        #expect(try #require(row("CGG_1233DC (58:2D:34:12:33:DC)")).contains("75 %"))
        let govee = try #require(row("GVH5075_1234"))
        #expect(govee.contains("not said") && govee.contains("Ambient temperature") && govee.contains("26.8"), "\(govee)")
        #expect(govee.contains("<td>nothing</td>"))
        let waiting = try #require(rows.first { $0.contains("xiaomi-scale") }, "\(table)")
        #expect(waiting.contains("your decision</a> on") && waiting.contains("held sample") && waiting.contains("none stored"), "\(waiting)")
        #expect(page.contains("<h2>Sources</h2>") && page.contains("id=\"device-table\""))
    }

    @Test func aNonLoopbackBindWithoutATokenIsRefusedAndWithOneNeedsIt() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.importExport()
        let refused = try store.ingestd(["serve", "--listen", "0.0.0.0:0"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--token @FILE"))
        let literal = try store.ingestd(["serve", "--listen", "0.0.0.0:0", "--token", "secret-on-the-command-line"])
        #expect(literal.status == 64)
        #expect(!literal.stderr.contains("secret-on-the-command-line"))
        let tokenFile = store.directory.appendingPathComponent("token")
        let token = "4f1c2d9e8b7a6f5e4d3c2b1a"
        try (token + "\n").write(to: tokenFile, atomically: true, encoding: .utf8)
        let server = try DashboardServer(store: store, extra: ["--token", "@" + tokenFile.path])
        defer { server.stop() }
        let http = RawHTTP(port: server.port)
        #expect(RawHTTP.status(http.get("/api/v1/people")) == 401)
        #expect(http.get("/").contains("Location: /login"))
        #expect(RawHTTP.status(http.get("/api/v1/people", headers: ["Authorization: Bearer \(token)"])) == 200)
        let login = http.post("/login", form: "token=\(token)")
        #expect(RawHTTP.status(login) == 303)
        let cookie = try #require(login.components(separatedBy: "Set-Cookie: ").dropFirst().first?.prefix { $0 != ";" })
        #expect(!cookie.contains(token))
        #expect(RawHTTP.status(http.get("/", headers: ["Cookie: \(cookie)"])) == 200)
        #expect(RawHTTP.status(http.post("/login", form: "token=wrong")) == 403)
        // The token is on no page.
        #expect(!http.get("/", headers: ["Cookie: \(cookie)"]).contains(token))
    }

    @Test func theReportOpensAndPrintsToPDFWithEverySection() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.importExport()
        let out = store.directory.appendingPathComponent("report.html").path
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let result = try store.ingestd(["report", "--person", "me", "--from", formatter.string(from: Date().addingTimeInterval(-45 * 86_400)),
                                        "--to", formatter.string(from: Date()), "--tz", "UTC", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(!html.contains("<script"))
        let links = html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
        #expect(!links.contains("http://") && !links.contains("https://") && !links.contains("src="),
                "nothing loaded from the network (the SVG namespace is no link)")
        let attributes = try FileManager.default.attributesOfItem(atPath: out)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let dom = try Chromium.dom("file://" + out)
        for section in ["report-blood-pressure", "report-body", "report-steps", "report-heart", "blood-pressure-log", "weekly-steps"] {
            #expect(dom.contains("id=\"\(section)\""), "section \(section)")
        }
        let pdf = Chromium.artifacts.appendingPathComponent("report.pdf").path
        try? FileManager.default.removeItem(atPath: pdf)
        let printed = try Chromium.run(["--no-pdf-header-footer", "--print-to-pdf=\(pdf)", "file://" + out])
        #expect(printed.status == 0, "\(printed.stderr.suffix(2000))")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: pdf))
        #expect(bytes.starts(with: Array("%PDF-".utf8)))
        #expect(bytes.count > 10_000)
        _ = try Chromium.screenshot("file://" + out, name: "report.png")
    }
}
