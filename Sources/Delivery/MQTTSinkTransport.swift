import Foundation
import HealthModel

/// Delivers to an MQTT broker: one QoS 1 message per sample (`{"deleted":uuid}` for deletions),
/// not retained, on `<prefix>/<type>`; birth `online` and last will `offline` retained on
/// `<prefix>/status`; with Home Assistant discovery, retained configs per granted type and
/// retained states on `<prefix>/<type>/state`, configs re-sent when `homeassistant/status` is `online`.
final class MQTTSinkTransport: SinkTransport {
    /// Seconds to wait for CONNACK, and for progress in PUBACKs.
    static let acknowledgementTimeout = 10.0
    private let configuration: SinkConfiguration
    private let secrets: SecretResolver
    private let discovery: HomeAssistantDiscovery
    private var client: MosquittoClient?
    private var discoveryDue = true

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
        let client = try MosquittoClient(settings: settings, target: targetName)
        try client.connect(host: configuration.target.host, port: configuration.target.port, keepalive: 30,
                           timeout: Self.acknowledgementTimeout)
        try client.publish(topic: discovery.statusTopic, payload: "online", retain: true)
        if options.homeAssistant {
            try client.subscribe(options.discoveryPrefix + "/status")
            discoveryDue = true
        }
        try client.waitForAcknowledgements(timeout: Self.acknowledgementTimeout)
        self.client = client
        return client
    }

    private func publishDiscovery(_ client: MosquittoClient) throws(SinkDeliveryError) {
        for type in configuration.grantedTypes {
            try client.publish(topic: discovery.configTopic(type), payload: discovery.configPayload(type), retain: true)
        }
        discoveryDue = false
    }

    private func noteIncoming(_ client: MosquittoClient) {
        for message in client.takeIncoming()
        where message.topic == configuration.options.discoveryPrefix + "/status" && message.payload == "online" {
            discoveryDue = true
        }
    }

    func send(_ records: [OutgoingRecord], dailyTotals: [String: Double]) throws(SinkDeliveryError) -> SendResult {
        do {
            let client = try connected()
            noteIncoming(client)
            if configuration.options.homeAssistant, discoveryDue { try publishDiscovery(client) }
            let prefix = configuration.options.resolvedPrefix
            var latest: [String: QuantitySample] = [:]
            for record in records {
                let shortName = QuantityType.named(record.type)?.shortName ?? record.type
                try client.publish(topic: "\(prefix)/\(shortName)", payload: record.json, retain: false)
                if let sample = record.sample, latest[record.type].map({ $0.end <= sample.end }) ?? true {
                    latest[record.type] = sample
                }
            }
            if configuration.options.homeAssistant {
                try publishStates(client, latest: latest, dailyTotals: dailyTotals)
            }
            try client.waitForAcknowledgements(timeout: Self.acknowledgementTimeout)
            noteIncoming(client)
            return .accepted
        } catch {
            drop()
            throw error
        }
    }

    /// Retained states: today's total for cumulative types, the latest reading for the others.
    private func publishStates(_ client: MosquittoClient, latest: [String: QuantitySample],
                               dailyTotals: [String: Double]) throws(SinkDeliveryError) {
        for (identifier, sample) in latest.sorted(by: { $0.key < $1.key }) {
            let entity = HomeAssistantEntity(sample.type)
            let canonical = entity.isDailyTotal ? (dailyTotals[identifier] ?? sample.quantity.value) : sample.quantity.value
            try client.publish(topic: discovery.stateTopic(sample.type),
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
                try publishDiscovery(client)
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
