import Foundation
import Testing
import TestSupport

/// Prometheus's text exposition format (0.0.4), read strictly: every sample's family has its
/// HELP and TYPE lines before it, names and labels are well formed, no series is given twice.
struct PrometheusExposition {
    struct Series: Hashable {
        var name: String
        var labels: [String: String]
    }

    var types: [String: String] = [:]
    var values: [Series: Double] = [:]

    init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw HarnessError("the exposition does not end with a newline") }
        let name = try NSRegularExpression(pattern: "^[a-zA-Z_:][a-zA-Z0-9_:]*$")
        func isName(_ text: String) -> Bool { name.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil }
        var helped = Set<String>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count == 4, isName(parts[2]) else { throw HarnessError("malformed comment line: \(line)") }
                if parts[1] == "HELP" {
                    guard helped.insert(parts[2]).inserted else { throw HarnessError("HELP twice for \(parts[2])") }
                } else {
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]), types[parts[2]] == nil,
                          !values.keys.contains(where: { $0.name == parts[2] }) else {
                        throw HarnessError("bad or late TYPE line: \(line)")
                    }
                    types[parts[2]] = parts[3]
                }
                continue
            }
            let series = try Self.series(line, isName: isName)
            guard types[series.0.name] != nil, helped.contains(series.0.name) else {
                throw HarnessError("sample before its family's HELP and TYPE: \(line)")
            }
            guard values.updateValue(series.1, forKey: series.0) == nil else { throw HarnessError("series given twice: \(line)") }
        }
    }

    /// `name{label="value",…} value`, the label values unescaped.
    static func series(_ line: String, isName: (String) -> Bool) throws -> (Series, Double) {
        var rest = Substring(line)
        let name = String(rest.prefix { $0 != "{" && $0 != " " })
        guard isName(name) else { throw HarnessError("bad metric name: \(line)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0 != "=" })
                rest = rest.dropFirst(label.count)
                guard isName(label), rest.hasPrefix("=\"") else { throw HarnessError("bad label: \(line)") }
                rest = rest.dropFirst(2)
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\" {
                        guard let escaped = rest.first, "\\\"n".contains(escaped) else { throw HarnessError("bad escape: \(line)") }
                        value.append(escaped == "n" ? "\n" : escaped)
                        rest = rest.dropFirst()
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"", labels.updateValue(value, forKey: label) == nil else { throw HarnessError("bad label value: \(line)") }
                rest = rest.dropFirst()
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " ", let value = Double(rest.dropFirst()) else { throw HarnessError("bad value: \(line)") }
        return (Series(name: name, labels: labels), value)
    }

    /// The values of the family `name`, by their labels.
    func family(_ name: String) -> [[String: String]: Double] {
        Dictionary(uniqueKeysWithValues: values.filter { $0.key.name == name }.map { ($0.key.labels, $0.value) })
    }
}

/// `/metrics` of `ingestd serve` on a store made by replaying real captures: valid exposition text,
/// samples, held samples and rejections as `ingestd status` counts them, and the last commit's time.
@Suite(.serialized, .offCooperativePool) struct DashboardMetricsTests {
    @Test func metricsCountSamplesHeldAndRejectedAndTellTheLastCommit() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let thermometers = tests.appendingPathComponent("AdapterTests/Captures/room-thermometer").path
        let scale = tests.appendingPathComponent("IngestdProcessTests/Captures/household/household-mi-scale.btsnoop").path
        let started = Date().timeIntervalSince1970.rounded(.down)
        // Govee readings denied (counted as rejections), the ATC/PVVX ones granted and written,
        // the Mi scale's held for a decision.
        try store.ingestd(steps: [["auth", "deny", "room-thermometer", "--all"], ["replay", thermometers + "/govee.btsnoop"],
                                  ["auth", "grant", "room-thermometer", "--all"], ["replay", thermometers + "/atc-pvvx.btsnoop"],
                                  ["replay", scale]])
        let finished = Date().timeIntervalSince1970
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let http = RawHTTP(port: server.port)
        // The sources with their devices' batteries (ATC/PVVX) and held samples (the scale), as the CLI prints them.
        let sources = try store.ingestd(["sources", "--json"]).stdout
        #expect(sources.contains("\"batteries\":[{") && sources.contains("\"held\":"))
        #expect(RawHTTP.body(http.get("/api/v1/sources")) == sources)
        let answer = http.get("/metrics")
        #expect(RawHTTP.status(answer) == 200)
        #expect(answer.contains("Content-Type: text/plain; version=0.0.4"))
        let metrics = try PrometheusExposition(RawHTTP.body(answer))
        #expect(metrics.types["ingestd_samples_rejected_total"] == "counter")
        #expect(metrics.types["ingestd_last_commit_timestamp_seconds"] == "gauge")

        // The same counts as `ingestd status --json`.
        var stored: [[String: String]: Double] = [:]
        var held: [String: Double] = [:]
        var rejected: [[String: String]: Double] = [:]
        for line in try store.ingestd(["status", "--json"]).lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if let count = object["count"] as? Double, let source = object["source"] as? String, let type = object["type"] as? String {
                stored[["source": source, "type": type]] = count
            } else if let count = object["held"] as? Double, let source = object["source"] as? String {
                held[source] = count
            } else if let count = object["rejected"] as? Double, let source = object["source"] as? String,
                      let type = object["type"] as? String, let reason = object["reason"] as? String {
                rejected[["source": source, "type": type, "reason": reason]] = count
            }
        }
        #expect(!stored.isEmpty && !held.isEmpty && !rejected.isEmpty, "the store has written, held and rejected samples")
        #expect(metrics.family("ingestd_samples") == stored)
        #expect(metrics.family("ingestd_samples_rejected_total") == rejected)
        #expect(rejected.keys.allSatisfy { $0["source"] == "room-thermometer" && $0["reason"] == "denied" }, "\(rejected)")
        let goveeReadings = try String(contentsOfFile: thermometers + "/govee.expected.jsonl", encoding: .utf8)
            .split(separator: "\n").count
        #expect(goveeReadings == 8)
        #expect(rejected.values.reduce(0, +) == Double(goveeReadings), "every Govee reading the capture holds")
        var heldBySource: [String: Double] = [:]
        for (labels, count) in metrics.family("ingestd_held_samples") { heldBySource[labels["source"] ?? "", default: 0] += count }
        #expect(heldBySource == held)
        let lastCommit = try #require(metrics.family("ingestd_last_commit_timestamp_seconds")[[:]])
        #expect(lastCommit >= started && lastCommit <= finished, "\(lastCommit) within [\(started), \(finished)]")
    }

    @Test func anEmptyStoreHasNoLastCommitYet() throws {
        let store = try DashboardStore()
        defer { store.remove() }
        try store.ingestd(steps: [["people", "add", "ann"]])
        let server = try DashboardServer(store: store)
        defer { server.stop() }
        let metrics = try PrometheusExposition(RawHTTP.body(RawHTTP(port: server.port).get("/metrics")))
        #expect(metrics.types["ingestd_last_commit_timestamp_seconds"] == "gauge")
        #expect(metrics.family("ingestd_last_commit_timestamp_seconds").isEmpty)
        #expect(metrics.family("ingestd_samples_rejected_total").isEmpty)
    }
}
