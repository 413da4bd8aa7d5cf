import Foundation
import HealthModel

/// Delivers to an MQTT broker: one QoS 1 message per sample (`{"deleted":uuid}` for deletions),
/// not retained, on `<prefix>/<person>/<type>`; birth `online` and last will `offline` retained on
/// `<prefix>/status`; with Home Assistant discovery, the gateway's config and per person a device
/// with retained configs per granted type and retained states on `<prefix>/<person>/<type>/state`,
/// configs re-sent when `homeassistant/status` is `online`. Publishes are pipelined: up to
/// `MosquittoClient.window` messages wait for their PUBACK at once, and `send` returns when
/// every message of the batch is acknowledged.
final class MQTTSinkTransport: SinkTransport {
    /// Seconds to wait for CONNACK, and for progress in PUBACKs.
    static let acknowledgementTimeout = 10.0
    private let configuration: SinkConfiguration
    private let secrets: SecretResolver
    private let discovery: HomeAssistantDiscovery
    private var client: MosquittoClient?
    private var discoveryDue = true
    /// The people whose configs were published since the last (re)connect or `online`.
    private var discoveredPeople: Set<String> = []

    init(_ configuration: SinkConfiguration, secrets: SecretResolver, softwareVersion: String) {
        self.configuration = configuration
        self.secrets = secrets
        let options = configuration.options
        discovery = HomeAssistantDiscovery(discoveryPrefix: options.discoveryPrefix, topicPrefix: options.resolvedPrefix,
                                           gatewayID: options.gatewayID, softwareVersion: softwareVersion)
    }

    var wantsDailyTotals: Bool { configuration.options.homeAssistant }

    private var targetName: String { "MQTT broker \(configuration.target.host):\(configuration.target.port)" }

    private func connected() throws(SinkDeliveryError) -> MosquittoClient {
        if let client { return client }
        let options = configuration.options
        var password: String?
        do {
            if let reference = options.password ?? configuration.target.password {
                password = try secrets.resolve(reference)
            }
        } catch {
            throw .configuration(error)
        }
        let settings = MosquittoClient.Settings(
            clientID: options.clientID ?? "ingestd-\(options.gatewayID)-\(configuration.name)",
            version: options.protocolVersion,
            username: options.username ?? configuration.target.username, password: password,
            caFile: options.caFile, useTLS: configuration.target.usesTLS,
            will: (discovery.statusTopic, "offline"))
        let client = try MosquittoClient(settings: settings, target: targetName, acknowledgementTimeout: Self.acknowledgementTimeout)
        try client.connect(host: configuration.target.host, port: configuration.target.port, keepalive: 30,
                           timeout: Self.acknowledgementTimeout)
        try client.publish(topic: discovery.statusTopic, payload: "online", retain: true)
        if options.homeAssistant {
            try client.subscribe(discovery.discoveryPrefix + "/status")
            discoveryDue = true
        }
        try client.waitForAcknowledgements(timeout: Self.acknowledgementTimeout)
        self.client = client
        return client
    }

    /// The people Home Assistant knows of (from the last batch's context), for configs re-sent while idle.
    private var knownPeople: [String] = []

    private func publishDiscovery(_ client: MosquittoClient, people: [String]) throws(SinkDeliveryError) {
        if discoveryDue {
            try client.publish(topic: discovery.gatewayConfigTopic, payload: discovery.gatewayConfigPayload, retain: true)
            discoveredPeople = []
            discoveryDue = false
        }
        for person in people where !person.isEmpty && !discoveredPeople.contains(person) {
            for type in configuration.grantedTypes {
                try client.publish(topic: discovery.configTopic(person: person, type),
                                   payload: discovery.configPayload(person: person, type), retain: true)
            }
            discoveredPeople.insert(person)
        }
    }

    private func noteIncoming(_ client: MosquittoClient) {
        for message in client.takeIncoming()
        where message.topic == discovery.discoveryPrefix + "/status" && message.payload == "online" {
            discoveryDue = true
        }
    }

    /// A person's latest sample of a type in a batch.
    private struct StateKey: Hashable {
        var person: String
        var type: String
    }

    func send(_ records: [OutgoingRecord], context: DeliveryContext) throws(SinkDeliveryError) -> SendResult {
        // The message id of each record published so far, in order.
        var messageIDs: [Int32] = []
        messageIDs.reserveCapacity(records.count)
        var publishing: MosquittoClient?
        do {
            let client = try connected()
            publishing = client
            noteIncoming(client)
            if configuration.options.homeAssistant {
                knownPeople = context.people
                let seen = records.map(\.person)
                try publishDiscovery(client, people: context.people + seen.filter { !context.people.contains($0) })
            }
            let prefix = configuration.options.resolvedPrefix
            var latest: [StateKey: (person: String, sample: QuantitySample)] = [:]
            var topics: [StateKey: String] = [:]
            for record in records {
                let key = StateKey(person: record.person, type: record.type)
                let topic: String
                if let known = topics[key] {
                    topic = known
                } else {
                    let shortName = QuantityType.named(record.type)?.shortName ?? MQTTTopicName.level(record.type)
                    topic = "\(prefix)/\(MQTTTopicName.level(record.person))/\(shortName)"
                    topics[key] = topic
                }
                messageIDs.append(try client.publish(topic: topic, payload: record.json, retain: false))
                if let sample = record.sample, latest[key].map({ $0.sample.end <= sample.end }) ?? true {
                    latest[key] = (record.person, sample)
                }
            }
            if configuration.options.homeAssistant {
                try publishStates(client, latest: latest.values.sorted { ($0.person, $0.sample.type.identifier) < ($1.person, $1.sample.type.identifier) },
                                  context: context)
            }
            try client.waitForAcknowledgements(timeout: Self.acknowledgementTimeout)
            noteIncoming(client)
            return .accepted
        } catch {
            drop()
            // The records acknowledged in order before the break are delivered: the cursor moves
            // past them (README: the highest contiguous acknowledged message).
            let acknowledged = publishing.map { client in messageIDs.firstIndex { !client.isAcknowledged($0) } ?? messageIDs.count } ?? 0
            throw acknowledged > 0 ? .interrupted(acknowledged: acknowledged, error) : error
        }
    }

    /// Retained states per person: today's total for cumulative types, the latest reading for the others.
    private func publishStates(_ client: MosquittoClient, latest: [(person: String, sample: QuantitySample)],
                               context: DeliveryContext) throws(SinkDeliveryError) {
        for (person, sample) in latest where !person.isEmpty {
            let entity = HomeAssistantEntity(sample.type)
            let total = context.dailyTotal(person: person, type: sample.type.identifier)
            let canonical = entity.isDailyTotal ? (total ?? sample.quantity.value) : sample.quantity.value
            try client.publish(topic: discovery.stateTopic(person: person, sample.type),
                               payload: JSONNumber.format(Self.rounded(entity.displayValue(canonical))), retain: true)
        }
    }

    static func rounded(_ value: Double) -> Double {
        (value * 1000).rounded() / 1000
    }

    func idle(milliseconds: Int) {
        guard let client else { return }
        do {
            try client.pump(milliseconds: Int32(max(0, min(milliseconds, 1000))))
            noteIncoming(client)
            if configuration.options.homeAssistant, discoveryDue {
                try publishDiscovery(client, people: knownPeople)
                try client.waitForAcknowledgements(timeout: Self.acknowledgementTimeout)
            }
        } catch {
            drop()
        }
    }

    private func drop() {
        client = nil
    }

    func close() {
        guard let client else { return }
        try? client.publish(topic: discovery.statusTopic, payload: "offline", retain: true)
        try? client.waitForAcknowledgements(timeout: 2)
        client.disconnect()
        self.client = nil
    }
}
