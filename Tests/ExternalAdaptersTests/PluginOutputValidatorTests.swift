import ExternalAdapters
import Foundation
import HealthModel
import Testing

@Suite("PluginOutputValidator")
struct PluginOutputValidatorTests {
    let device = Device(name: "MI_SCALE", localIdentifier: "50:FB:19:1B:B5:DC")
    var validator: PluginOutputValidator {
        PluginOutputValidator(adapterID: "acme-scale", produces: [.bodyMass, .bloodPressureSystolic, .bloodPressureDiastolic],
                              device: device)
    }

    func check(_ line: String) -> PluginLine { validator.validate(Array(line.utf8)) }

    func reason(_ line: String) -> PluginRejectionReason? {
        if case .rejected(let rejection) = check(line) { return rejection.reason }
        return nil
    }

    @Test("A valid sample is accepted with the plugin's id as source and the served device filled in")
    func validSample() throws {
        let result = check(#"{"type":"HKQuantityTypeIdentifierBodyMass","value":154.3,"unit":"lb","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#)
        guard case .record(.sample(let sample)) = result else {
            Issue.record("not accepted: \(result)")
            return
        }
        #expect(sample.type == .bodyMass)
        #expect(sample.quantity == Quantity(value: 154.3, unit: try HealthModel.Unit(from: "lb")))
        #expect(sample.source == "acme-scale")
        #expect(sample.device == device)
        #expect(sample.start == ISO8601DateTime.date(from: "2026-01-01T08:00:00Z"))
    }

    @Test("A source the plugin claims is replaced by its own id; its own device is kept")
    func sourceForced() {
        let result = check(#"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","source":"xiaomi-scale","device":{"name":"Other"}}"#)
        guard case .record(.sample(let sample)) = result else {
            Issue.record("not accepted: \(result)")
            return
        }
        #expect(sample.source == "acme-scale")
        #expect(sample.device == Device(name: "Other"))
    }

    @Test("A blood pressure correlation is accepted with every member's source forced")
    func correlation() {
        let line = """
            {"correlation":"HKCorrelationTypeIdentifierBloodPressure","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","source":"evil",\
            "objects":[{"type":"bloodPressureSystolic","value":120,"unit":"mmHg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","source":"evil"},\
            {"type":"bloodPressureDiastolic","value":80,"unit":"mmHg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}]}
            """
        guard case .record(.correlation(let correlation)) = check(line) else {
            Issue.record("not accepted")
            return
        }
        #expect(correlation.source == "acme-scale")
        #expect(correlation.objects.map(\.source) == ["acme-scale", "acme-scale"])
        #expect(correlation.device == device)
    }

    @Test("log and done messages")
    func protocolMessages() {
        #expect(check(#"{"log":{"level":"warning","message":"low battery"}}"#) == .log(.warning, "low battery"))
        #expect(check(#" {"done":true} "#) == .done)
    }

    static let rejected: [(String, PluginRejectionReason)] = [
        ("not json", .invalidJSON),
        ("", .invalidJSON),
        ("[1,2,3]", .invalidJSON),
        (String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000), .invalidJSON),
        ("{\"type\":\"bodyMass\",\"value\":70,\"unit\":\"kg\",\"start\":\"2026-01-01T08:00:00Z\",\"end\":\"2026-01-01T08:00:00Z\"", .invalidJSON),
        (#"{"hello":"world"}"#, .unknownMessage),
        (#"{"done":false}"#, .invalidMessage),
        (#"{"done":1}"#, .invalidMessage),
        (#"{"log":{"level":"shout","message":"x"}}"#, .invalidMessage),
        (#"{"log":"x"}"#, .invalidMessage),
        (#"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-01T08:00:00Z"}"#, .invalidRecord),
        (#"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","colour":"red"}"#, .invalidRecord),
        (#"{"type":"bodyMass","value":70,"unit":"stone-ish","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .invalidRecord),
        (#"{"type":"unicornCount","value":1,"unit":"count","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .unknownType),
        (#"{"type":"heartRate","value":60,"unit":"count/min","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .undeclaredType),
        (#"{"type":"bodyMass","value":1e999,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .nonFinite),
        (#"{"type":"bodyMass","value":70,"unit":"count","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .incompatibleUnit),
        (#"{"type":"bodyMass","value":1000,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .outOfRange),
        (#"{"type":"bodyMass","value":0.1,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .outOfRange),
        (#"{"type":"bodyMass","value":2000000,"unit":"lb","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#, .outOfRange),
        ("""
         {"correlation":"HKCorrelationTypeIdentifierBloodPressure","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z",\
         "objects":[{"type":"bloodPressureSystolic","value":120,"unit":"mmHg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"},\
         {"type":"heartRate","value":80,"unit":"count/min","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}]}
         """, .undeclaredType),
    ]

    @Test("Untrusted lines are rejected with a reason", arguments: rejected.indices)
    func rejections(_ index: Int) {
        let (line, expected) = Self.rejected[index]
        #expect(reason(line) == expected, "\(line.prefix(100))")
    }

    @Test("Rejection details name the problem")
    func details() {
        guard case .rejected(let rejection) = check(#"{"type":"heartRate","value":60,"unit":"count/min","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#) else {
            Issue.record("accepted")
            return
        }
        #expect(rejection.description == "undeclared-type: HKQuantityTypeIdentifierHeartRate is not in the plugin's \"produces\"")
    }

    /// Issue 10, finding 2 (no unbounded recursion on untrusted input): lines as deep as the 64 KiB limit allows, in
    /// each place a plugin controls, are rejected with a reason, never a stack overflow.
    @Test("Deeply nested lines within the line limit are rejected, not fatal")
    func deepNesting() {
        let deepUnit = String(repeating: "(", count: 30_000) + "kg" + String(repeating: ")", count: 30_000)
        let lines = [
            String(repeating: "[", count: 65_000),
            String(repeating: #"{"log":"#, count: 8_000) + "1" + String(repeating: "}", count: 8_000),
            #"{"type":"bodyMass","value":70,"unit":"kg","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z","metadata":{"a":"#
                + String(repeating: "[", count: 60_000),
            #"{"type":"bodyMass","value":70,"unit":"\#(deepUnit)","start":"2026-01-01T08:00:00Z","end":"2026-01-01T08:00:00Z"}"#,
        ]
        for line in lines {
            #expect(line.utf8.count <= 64 * 1024)
            #expect(reason(line) != nil, "\(line.prefix(60))")
        }
        #expect(reason(lines[3]) == .invalidRecord || reason(lines[3]) == .incompatibleUnit)
    }
}
