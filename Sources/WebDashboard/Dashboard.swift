import Charts
import Foundation
import HealthModel
import Pipeline

/// How the dashboard is served: the token that non-loopback clients must present, the time zone
/// of its pages, and the clock.
public struct DashboardConfiguration: Sendable {
    /// The access token (bearer header or login form); nil on loopback only.
    public var token: String?
    public var zone: TimeZone
    /// The zone's name as it was given (`--tz UTC`, whose identifier Foundation may call "GMT"),
    /// printed where the CLI prints it (`today`'s `tz`).
    public var zoneName: String
    public var now: @Sendable () -> Date

    public init(token: String?, zone: TimeZone, zoneName: String? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.token = token
        self.zone = zone
        self.zoneName = zoneName ?? zone.identifier
        self.now = now
    }
}

/// The web dashboard: routes requests to pages, the JSON API and `/metrics`; checks the token and
/// the CSRF token of state-changing POSTs; one request reads the store at a time.
public final class Dashboard: @unchecked Sendable {
    private let store: any QueryStore
    private let administration: (any DashboardAdministration)?
    private let configuration: DashboardConfiguration
    private let lock = NSLock()
    /// Put in every form and required back with every POST.
    let csrfToken: String
    /// The session cookie's value after a login with the token.
    private let sessionSecret: String

    public static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    public init(store: any QueryStore, administration: (any DashboardAdministration)?, configuration: DashboardConfiguration) {
        self.store = store
        self.administration = administration
        self.configuration = configuration
        csrfToken = Self.randomToken()
        sessionSecret = Self.randomToken()
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// Answers one request (called on the server's threads).
    public func respond(_ request: HTTPRequest) -> HTTPResponse {
        var response = route(request)
        response.headers += [
            ("Content-Security-Policy", Self.contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-store"), ("X-Frame-Options", "DENY"),
        ]
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "POST" || request.method == "HEAD" else {
            return Self.plain(405, "method \(request.method) is not allowed; use GET or POST", headers: [("Allow", "GET, POST")])
        }
        if request.bodyTooLarge { return Self.plain(413, "the request body is too large") }
        if request.path == "/style.css" {
            return HTTPResponse(status: 200, contentType: "text/css; charset=utf-8", text: PageStyle.css)
        }
        if request.path == "/login" { return login(request) }
        if !isAuthorized(request) {
            if request.path.hasPrefix("/api/") || request.path == "/metrics" {
                return Self.plain(401, "this dashboard needs its token: send 'Authorization: Bearer TOKEN'",
                                  headers: [("WWW-Authenticate", "Bearer")])
            }
            return HTTPResponse(status: 303, contentType: "text/plain", text: "log in", headers: [("Location", "/login")])
        }
        if let key = request.malformedQueryKeys.first {
            return Self.plain(400, "query parameter '\(PrintableText.escaped(key))' is given twice or without a value")
        }
        do {
            lock.lock()
            defer { lock.unlock() }
            switch (request.method, request.path) {
            case ("GET", "/"), ("HEAD", "/"): return try page(try overviewPage(request))
            case ("GET", "/person"): return try page(try personPage(request))
            case ("GET", "/decisions"): return try page(try decisionsPage(message: nil))
            case ("POST", "/decisions"): return try decide(request)
            case ("GET", "/unassigned"): return try page(try unassignedPage(message: nil))
            case ("POST", "/unassigned"): return try assign(request)
            case ("GET", "/sinks"): return try page(try sinksPage())
            case ("GET", "/devices"): return try page(try devicesPage())
            case ("GET", "/metrics"):
                return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", text: try metrics())
            case ("GET", let path) where path.hasPrefix("/api/v1/"):
                return try DashboardAPI(store: store, zone: configuration.zone, zoneName: configuration.zoneName, now: configuration.now())
                    .answer(String(path.dropFirst("/api/v1/".count)), query: request.query)
            default:
                return Self.plain(404, "no page at \(PrintableText.escaped(request.path))")
            }
        } catch let error as DashboardError {
            return Self.plain(400, error.description)
        } catch {
            return Self.plain(500, "the store could not answer: \(error)")
        }
    }

    static func plain(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", text: text + "\n", headers: headers)
    }

    // MARK: - Access

    private func isAuthorized(_ request: HTTPRequest) -> Bool {
        guard let token = configuration.token else { return true }
        if let header = request.headers["authorization"], header.hasPrefix("Bearer "),
           Self.constantTimeEqual(String(header.dropFirst(7)), token) {
            return true
        }
        if let cookie = request.cookie("ingestd_session"), Self.constantTimeEqual(cookie, sessionSecret) { return true }
        return false
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    private func login(_ request: HTTPRequest) -> HTTPResponse {
        if request.method == "POST" {
            let fields = request.formFields
            if let token = configuration.token, let given = fields["token"], Self.constantTimeEqual(given, token) {
                return HTTPResponse(status: 303, contentType: "text/plain", text: "logged in", headers: [
                    ("Location", "/"), ("Set-Cookie", "ingestd_session=\(sessionSecret); HttpOnly; SameSite=Strict; Path=/"),
                ])
            }
            return HTTPResponse(status: 403, contentType: "text/html; charset=utf-8", text: loginPage(failed: true))
        }
        return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", text: loginPage(failed: false))
    }

    private func loginPage(failed: Bool) -> String {
        let body = (failed ? "<p class=\"error\">That is not the token.</p>" : "")
            + "<form method=\"post\" action=\"/login\"><label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\"></label> <button type=\"submit\">Log in</button></form>"
        return Self.document(title: "Log in", body: "<h1>ingestd: log in</h1>" + body, nav: false)
    }

    // MARK: - Pages

    private func page(_ html: String) throws -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", text: html)
    }

    static func document(title: String, body: String, nav: Bool = true, inlineStyle: Bool = false) -> String {
        var out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        out += "<title>\(HTMLText.escaped(title))</title>"
        out += inlineStyle ? "<style>\(PageStyle.css)</style>" : "<link rel=\"stylesheet\" href=\"/style.css\">"
        out += "</head><body>"
        if nav {
            out += "<header class=\"top\"><strong>ingestd</strong><nav><a href=\"/\">People</a><a href=\"/decisions\">Decisions</a><a href=\"/unassigned\">Unassigned</a><a href=\"/devices\">Devices</a><a href=\"/sinks\">Sinks</a><a href=\"/metrics\">Metrics</a></nav></header>"
        }
        return out + "<main>" + body + "</main></body></html>\n"
    }

    private func overviewPage(_ request: HTTPRequest) throws -> String {
        let names = try store.queryPeopleNames()
        var body = "<h1>People</h1>"
        if names.isEmpty { body += "<p>The store has no people yet: add one with <code>ingestd people add NAME</code>.</p>" }
        body += "<ul class=\"people\">" + names.map {
            "<li><a href=\"/person?name=\(Self.queryEscaped($0))\">\(HTMLText.escaped($0))</a></li>"
        }.joined() + "</ul>"
        if let unassigned = try administration?.unassignedReadings(limit: Self.unassignedShown), !unassigned.isEmpty {
            let count = unassigned.count == Self.unassignedShown ? "\(Self.unassignedShown) or more" : String(unassigned.count)
            body += "<p><a href=\"/unassigned\">\(count) reading\(unassigned.count == 1 ? "" : "s") nobody was assigned</a></p>"
        }
        if let pending = try administration?.pendingDecisions(), !pending.isEmpty {
            body += "<p><a href=\"/decisions\">\(pending.count) first-contact decision\(pending.count == 1 ? "" : "s") waiting</a></p>"
        }
        return Self.document(title: "ingestd", body: body)
    }

    func resolvePerson(_ name: String?) throws -> (String, QueryScope) {
        let names = try store.queryPeopleNames()
        if let name {
            guard names.contains(name) else { throw DashboardError.unknownPerson(name, known: names) }
            return (name, QueryScope(people: .named(name)))
        }
        guard names.count == 1, let only = names.first else {
            throw DashboardError.invalidParameter(name: "name", value: "", expected: "one of " + names.joined(separator: ", "))
        }
        return (only, QueryScope(people: .named(only)))
    }

    private func personPage(_ request: HTTPRequest) throws -> String {
        let (name, scope) = try resolvePerson(request.query["name"])
        let page = try PersonPage(store: store, scope: scope, zone: configuration.zone, now: configuration.now())
        return Self.document(title: "\(name): ingestd", body: "<h1>\(HTMLText.escaped(name))</h1>" + page.html)
    }

    private func decisionsPage(message: String?) throws -> String {
        var body = "<h1>First-contact decisions</h1>"
        if let message { body += "<p class=\"notice\" id=\"decision-result\">\(HTMLText.escaped(message))</p>" }
        let pending = try administration?.pendingDecisions() ?? []
        if pending.isEmpty {
            body += "<p>Nothing is waiting for a decision.</p>"
        } else {
            let format = ChartFormat(zone: configuration.zone, showsTime: true)
            body += "<table id=\"pending\"><thead><tr><th>Source</th><th>Type</th><th>Device</th><th>Held</th><th>From</th><th>To</th><th>Decide</th></tr></thead><tbody>"
            for decision in pending {
                body += "<tr><th scope=\"row\">\(HTMLText.escaped(decision.source))</th><td>\(HTMLText.escaped(QuantityType.named(decision.type)?.shortName ?? decision.type))</td>"
                body += "<td>\(HTMLText.escaped(decision.device))</td><td>\(decision.count)</td>"
                body += "<td>\(format.dateText(decision.firstStart))</td><td>\(format.dateText(decision.lastEnd))</td><td>"
                for (action, label) in [("grant", "Grant"), ("deny", "Deny")] {
                    body += "<form class=\"inline\" method=\"post\" action=\"/decisions\"><input type=\"hidden\" name=\"csrf\" value=\"\(csrfToken)\">"
                    body += "<input type=\"hidden\" name=\"source\" value=\"\(HTMLText.escaped(decision.source))\"><input type=\"hidden\" name=\"action\" value=\"\(action)\">"
                    body += "<button type=\"submit\" class=\"\(action)\">\(label)</button></form> "
                }
                body += "</td></tr>"
            }
            body += "</tbody></table><p class=\"muted\">Grant lets the source write every type it sent and brings its held samples in; deny discards them.</p>"
        }
        return Self.document(title: "Decisions: ingestd", body: body)
    }

    /// A POST's form fields when it carries this server's CSRF token, else nil.
    private func csrfCheckedFields(_ request: HTTPRequest) -> [String: String]? {
        let fields = request.formFields
        guard let given = fields["csrf"], Self.constantTimeEqual(given, csrfToken) else { return nil }
        return fields
    }

    static let csrfRefusal = plain(403, "the form's CSRF token is missing or wrong; reload the page and try again")

    private func decide(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let fields = csrfCheckedFields(request) else { return Self.csrfRefusal }
        guard let source = fields["source"], !source.isEmpty, let action = fields["action"], action == "grant" || action == "deny" else {
            return Self.plain(400, "a decision needs a source and action=grant or action=deny")
        }
        guard let administration else { return Self.plain(503, "this server cannot change the store") }
        let message = try administration.decide(source: source, grant: action == "grant")
        return try page(try decisionsPage(message: message))
    }

    /// Readings listed on the unassigned page at most (the rest: `ingestd unassigned`).
    static let unassignedShown = 200

    /// The readings nobody was assigned, each with a "This is mine" form per person.
    private func unassignedPage(message: String?) throws -> String {
        var body = "<h1>Readings nobody was assigned</h1>"
        if let message { body += "<p class=\"notice\" id=\"assign-result\">\(HTMLText.escaped(message))</p>" }
        let readings = try administration?.unassignedReadings(limit: Self.unassignedShown) ?? []
        let people = try store.queryPeopleNames()
        if readings.isEmpty {
            body += "<p>Every reading belongs to someone.</p>"
        } else if people.isEmpty {
            body += "<p>The store has no people yet: add one with <code>ingestd people add NAME</code>.</p>"
        } else {
            let format = ChartFormat(zone: configuration.zone, showsTime: true)
            body += "<table id=\"unassigned\"><thead><tr><th>Reading</th><th>Value</th><th>Measured</th><th>Device</th><th>Whose</th></tr></thead><tbody>"
            for reading in readings {
                body += "<tr><th scope=\"row\">\(HTMLText.escaped(reading.type.shortName))</th>"
                body += "<td>\(HTMLText.escaped(DisplayUnits.text(reading.value, of: reading.type, system: .metric)))</td>"
                body += "<td>\(format.dateText(reading.start))</td><td>\(HTMLText.escaped(reading.device))</td><td>"
                body += "<form class=\"inline\" method=\"post\" action=\"/unassigned\"><input type=\"hidden\" name=\"csrf\" value=\"\(csrfToken)\">"
                body += "<input type=\"hidden\" name=\"uuid\" value=\"\(reading.uuid.uuidString.lowercased())\">"
                body += "<select name=\"person\" aria-label=\"person\">" + people.map {
                    "<option value=\"\(HTMLText.escaped($0))\">\(HTMLText.escaped($0))</option>"
                }.joined() + "</select> <button type=\"submit\" class=\"grant\">This is mine</button></form></td></tr>"
            }
            body += "</tbody></table>"
            if readings.count == Self.unassignedShown { body += "<p class=\"muted\">The first \(Self.unassignedShown) are shown; <code>ingestd unassigned</code> lists all.</p>" }
            body += "<p class=\"muted\">A shared scale could not tell who stood on it; the reading moves to the person chosen.</p>"
        }
        return Self.document(title: "Unassigned: ingestd", body: body)
    }

    private func assign(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let fields = csrfCheckedFields(request) else { return Self.csrfRefusal }
        guard let text = fields["uuid"], let uuid = UUID(uuidString: text) else {
            return Self.plain(400, "an assignment needs the reading's uuid")
        }
        guard let person = fields["person"], !person.isEmpty else { return Self.plain(400, "an assignment needs a person") }
        let people = try store.queryPeopleNames()
        guard people.contains(person) else { throw DashboardError.unknownPerson(person, known: people) }
        guard let administration else { return Self.plain(503, "this server cannot change the store") }
        return try page(try unassignedPage(message: try administration.assign(uuid, to: person)))
    }

    /// Every device with its newest reading, battery and what it waits for; then the sources
    /// with their counts.
    private func devicesPage() throws -> String {
        var body = "<h1>Devices</h1>"
        let statuses = try administration?.deviceStatuses() ?? []
        if statuses.isEmpty {
            body += "<p>No device has sent samples yet.</p>"
        } else {
            let format = ChartFormat(zone: configuration.zone, showsTime: true)
            body += "<table id=\"device-status\"><thead><tr><th>Device</th><th>Source</th><th>Last reading</th><th>Battery</th><th>Waiting for</th></tr></thead><tbody>"
            for status in statuses {
                body += "<tr><th scope=\"row\">\(HTMLText.escaped(status.device.isEmpty ? "(unnamed)" : status.device))</th>"
                body += "<td>\(HTMLText.escaped(status.source))</td><td>"
                if let type = status.lastType, let end = status.lastEnd {
                    let value = status.lastValue.map { " " + DisplayUnits.text($0, of: type, system: .metric) } ?? ""
                    body += "\(HTMLText.escaped(type.shortNameInWords + value)), \(format.dateText(end))"
                } else {
                    body += "none stored"
                }
                body += "</td><td>"
                if let percent = status.batteryPercent, let at = status.batteryAt {
                    body += "<span class=\"battery\(percent <= 15 ? " low" : "")\">\(percent) %</span> <span class=\"muted\">(\(format.dateText(at)))</span>"
                } else {
                    body += "<span class=\"muted\">not said</span>"
                }
                body += "</td><td>"
                if status.held.isEmpty {
                    body += "nothing"
                } else {
                    let count = status.held.values.reduce(0, +)
                    let types = status.held.keys.sorted().map { QuantityType.words(QuantityType.named($0)?.shortName ?? $0) }.joined(separator: ", ")
                    body += "<a href=\"/decisions\">your decision</a> on \(count) held sample\(count == 1 ? "" : "s") (\(HTMLText.escaped(types)))"
                }
                body += "</td></tr>"
            }
            body += "</tbody></table>"
            body += "<p class=\"muted\">Battery: as the device last said it (BTHome devices and room thermometers broadcast it); a device that never says one shows none.</p>"
        }
        body += "<h2>Sources</h2>" + (try PersonPage.devices(store: store, scope: QueryScope()))
        return Self.document(title: "Devices: ingestd", body: body)
    }

    private func sinksPage() throws -> String {
        var body = "<h1>Sinks</h1>"
        let sinks = try administration?.sinkSummaries() ?? []
        if sinks.isEmpty {
            body += "<p>No sinks: see <code>ingestd sinks add</code>.</p>"
        } else {
            let format = ChartFormat(zone: configuration.zone, showsTime: true)
            body += "<table id=\"sinks\"><thead><tr><th>Sink</th><th>Kind</th><th>Backlog</th><th>Last success</th><th>Last error</th><th>Dead letters</th></tr></thead><tbody>"
            for sink in sinks {
                body += "<tr><th scope=\"row\">\(HTMLText.escaped(sink.name))</th><td>\(HTMLText.escaped(sink.kind))</td><td>\(sink.backlog)</td>"
                body += "<td>\(sink.lastSuccess.map(format.dateText) ?? "never")</td><td>\(HTMLText.escaped(sink.lastError ?? "-"))</td><td>\(sink.deadLetters)</td></tr>"
            }
            body += "</tbody></table>"
        }
        return Self.document(title: "Sinks: ingestd", body: body)
    }

    // MARK: - Metrics

    private func metrics() throws -> String {
        var out = "# HELP ingestd_samples Samples in the store by source and type.\n# TYPE ingestd_samples gauge\n"
        var devices = Set<Device>()
        for summary in try store.sourceSummaries(scope: QueryScope()).sorted(by: { $0.name < $1.name }) {
            for (type, count) in summary.countsByType.sorted(by: { $0.key < $1.key }) {
                out += "ingestd_samples{source=\"\(Self.label(summary.name))\",type=\"\(Self.label(type))\"} \(count)\n"
            }
            devices.formUnion(summary.devices)
        }
        out += "# HELP ingestd_held_samples Samples held for a first-contact decision by source and type.\n# TYPE ingestd_held_samples gauge\n"
        // Summed over devices: one series per source and type.
        var held: [String: [String: Int]] = [:]
        for decision in try administration?.pendingDecisions() ?? [] {
            held[decision.source, default: [:]][decision.type, default: 0] += decision.count
        }
        for (source, types) in held.sorted(by: { $0.key < $1.key }) {
            for (type, count) in types.sorted(by: { $0.key < $1.key }) {
                out += "ingestd_held_samples{source=\"\(Self.label(source))\",type=\"\(Self.label(type))\"} \(count)\n"
            }
        }
        out += "# HELP ingestd_sink_backlog Changes a sink has not delivered yet.\n# TYPE ingestd_sink_backlog gauge\n"
        for sink in try administration?.sinkSummaries() ?? [] {
            out += "ingestd_sink_backlog{sink=\"\(Self.label(sink.name))\"} \(sink.backlog)\n"
        }
        out += "# HELP ingestd_devices_seen Devices that wrote samples.\n# TYPE ingestd_devices_seen gauge\ningestd_devices_seen \(devices.count)\n"
        out += "# HELP ingestd_samples_rejected_total Samples refused by the pipeline (invalid, denied, ...) by source, type and reason, since the store was created.\n"
        out += "# TYPE ingestd_samples_rejected_total counter\n"
        for (key, count) in try administration?.rejectionCounts().sorted(by: { $0.key < $1.key }) ?? [] {
            out += "ingestd_samples_rejected_total{source=\"\(Self.label(key.source))\",type=\"\(Self.label(key.type))\",reason=\"\(Self.label(key.reason))\"} \(count)\n"
        }
        out += "# HELP ingestd_last_commit_timestamp_seconds When the store last committed samples, in seconds since 1970 (absent before the first commit).\n"
        out += "# TYPE ingestd_last_commit_timestamp_seconds gauge\n"
        if let last = try administration?.lastCommitTime() {
            out += "ingestd_last_commit_timestamp_seconds \(JSONNumber.format(last.timeIntervalSince1970))\n"
        }
        return out
    }

    static func label(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func queryEscaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}
