import Delivery
import FuzzSupport

/// libFuzzer target for the MQTT topic builder (`MQTTTopicName`, `HomeAssistantDiscovery`). The
/// input is split at its first NUL byte into two names. Whatever the bytes: a level is never
/// empty for a non-empty name, has at most 49 bytes unless the name is simple, holds only ASCII
/// letters, digits, `_` and `-`, is stable, maps a simple name to itself, and two different
/// names get different levels unless their FNV-1a hashes collide; the topics built from them
/// carry no wildcard, no space and no NUL.
func fuzzMQTTTopics(_ bytes: [UInt8]) {
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let first = String(decoding: bytes[..<split], as: UTF8.self)
    let second = String(decoding: bytes[min(split + 1, bytes.count)...], as: UTF8.self)
    for name in [first, second] {
        let level = MQTTTopicName.level(name)
        precondition(level == MQTTTopicName.level(name), "level of \(name.debugDescription) is not stable")
        precondition(name.isEmpty == level.isEmpty, "level of \(name.debugDescription) is \(level.debugDescription)")
        precondition(level.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
        }, "level \(level.debugDescription) of \(name.debugDescription) has a character outside [A-Za-z0-9_-]")
        if MQTTTopicName.isSimple(name) {
            precondition(level == name, "the simple name \(name.debugDescription) became \(level.debugDescription)")
        } else if !name.isEmpty {
            precondition(level.utf8.count <= MQTTTopicName.keptLength + 9, "level \(level.debugDescription) is too long")
        }
        let discovery = HomeAssistantDiscovery(discoveryPrefix: "homeassistant", topicPrefix: "ingestd/" + name,
                                               gatewayID: name, softwareVersion: "fuzz")
        for topic in [discovery.statusTopic, discovery.sampleTopic(person: name, .bodyMass),
                      discovery.configTopic(person: name, .bodyMass), discovery.gatewayConfigTopic] {
            precondition(!topic.contains("+") && !topic.contains("#") && !topic.contains(" ") && !topic.contains("\u{0}"),
                         "topic \(topic.debugDescription) from \(name.debugDescription)")
        }
    }
    if first != second, !first.isEmpty, !second.isEmpty {
        let levels = (MQTTTopicName.level(first), MQTTTopicName.level(second))
        let bothEncoded = !MQTTTopicName.isSimple(first) && !MQTTTopicName.isSimple(second)
        let hashesCollide = MQTTTopicName.hash(first) == MQTTTopicName.hash(second)
        if levels.0 == levels.1 {
            // Only a hash collision, or a simple name written as another's encoding, can share a level.
            precondition((bothEncoded && hashesCollide) || MQTTTopicName.isSimple(first) || MQTTTopicName.isSimple(second),
                         "\(first.debugDescription) and \(second.debugDescription) share level \(levels.0.debugDescription)")
            precondition(MQTTTopicName.problem(withPerson: second, among: [first]) != nil,
                         "people add would accept \(second.debugDescription) beside \(first.debugDescription)")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzMQTTTopics)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzMQTTTopics) }
}
#endif
