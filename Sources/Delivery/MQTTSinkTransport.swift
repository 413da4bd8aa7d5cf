import Foundation
import HealthModel

/// Delivers to an MQTT broker: one QoS 1 message per sample (`{"deleted":uuid}` for deletions),
/// not retained, on `<prefix>/<person>/<type>`; birth `online` and last will `offline` retained on
/// `<prefix>/status`; with Home Assistant discovery, the gateway's config and per person a device
/// with retained configs per granted type and retained states on `<prefix>/<person>/<type>/state`,
/// configs re-sent when `homeassistant/status` is `online`, and emptied (the entity removed) when
/// the last sample of its person and type goes. Publishes are pipelined: up to
/// `MosquittoClient.window` messages wait for their PUBACK at once, and `send` returns when
/// every message of the batch is acknowledged.
final class MQTTSinkTransport: SinkTransport {
    /// Seconds to wait for CONNACK, and for progress in PUBACKs.
    static let acknowledgementTimeout = 10.0
    private let configuration: SinkConfiguration
    private let options: MQTTSinkOptions
    private let secrets: SecretResolver
    private let discovery: HomeAssistantDiscovery
    private var client: MosquittoClient?
    private var discoveryDue = true

    init(_ configuration: SinkConfiguration, options: MQTTSinkOptions, secrets: SecretResolver, softwareVersion: String) {
        self.configuration = configuration
        self.options = options
        self.secrets = secrets
        discovery = HomeAssistantDiscovery(discoveryPrefix: options.discoveryPrefix, topicPrefix: options.resolvedPrefix,
                                           gatewayID: options.gatewayID, softwareVersion: softwareVersion)
    }

    var wantsDailyTotals: Bool { options.homeAssistant }

    private var targetName: String { "MQTT broker \(configuration.target.host):\(configuration.target.port)" }

    private func connected() throws(SinkDeliveryError) -> MosquittoClient {
        if let client { return client }
        let password = try secrets.password(option: options.password, target: configuration.target)
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

    /// The entities (owner, type) whose configs were published since the last (re)connect or
    /// Home Assistant's `online`.
    private var discoveredEntities: Set<EntityKey> = []
    /// Every entity with data the sink knows of (the published states and this run's samples),
    /// for configs re-sent while idle.
    private var knownEntities: Set<EntityKey> = []

    /// One Home Assistant entity: whose device it is on, its type, and the measurement system it
    /// is shown in (its person's; a change publishes its config again with the new unit).
    private struct EntityKey: Hashable {
        var owner: HomeAssistantOwner
        var type: QuantityType
        var system: UnitSystem = .metric

        func isSameEntity(as other: EntityKey) -> Bool { owner == other.owner && type == other.type }
    }

    /// The system `owner`'s entities are shown in: its person's, metric for the gateway.
    private static func system(of owner: HomeAssistantOwner, _ context: DeliveryContext) -> UnitSystem {
        if case .person(let person) = owner { return context.unitSystems[person] ?? .metric }
        return .metric
    }

    /// Publishes the gateway's config when due, and the config of every entity in `entities`
    /// not yet published: only types with data get an entity.
    private func publishDiscovery(_ client: MosquittoClient, entities: Set<EntityKey>) throws(SinkDeliveryError) {
        if discoveryDue {
            try client.publish(topic: discovery.gatewayConfigTopic, payload: discovery.gatewayConfigPayload, retain: true)
            discoveredEntities = []
            discoveryDue = false
        }
        // An entity whose system changed is known once, in its new system.
        knownEntities = knownEntities.filter { known in !entities.contains { $0.isSameEntity(as: known) && $0.system != known.system } }
        knownEntities.formUnion(entities)
        let sorted = knownEntities.subtracting(discoveredEntities).sorted {
            (discovery.nodeID($0.owner), $0.type.identifier) < (discovery.nodeID($1.owner), $1.type.identifier)
        }
        for entity in sorted {
            try client.publish(topic: discovery.configTopic(entity.owner, entity.type),
                               payload: discovery.configPayload(entity.owner, entity.type, system: entity.system), retain: true)
            discoveredEntities.insert(entity)
        }
    }

    /// The entities with data: those with a published state, and those of `records`' samples.
    private func entitiesWithData(_ records: [OutgoingRecord], context: DeliveryContext) -> Set<EntityKey> {
        var entities: Set<EntityKey> = []
        for key in context.publishedStates.keys where !context.retiredStates.contains(key) {
            let (person, identifier) = DeliveryContext.parts(ofKey: key)
            if let type = QuantityType.named(identifier), let owner = HomeAssistantOwner.of(person: person, type) {
                entities.insert(EntityKey(owner: owner, type: type, system: Self.system(of: owner, context)))
            }
        }
        for record in records {
            if let sample = record.sample, let owner = HomeAssistantOwner.of(person: record.person, sample.type) {
                entities.insert(EntityKey(owner: owner, type: sample.type, system: Self.system(of: owner, context)))
            }
        }
        return entities
    }

    /// Removes the entities of `keys` (`DeliveryContext.retiredStates`) from Home Assistant: an
    /// empty retained config deletes the entity, empty retained state and attributes clear what
    /// the broker keeps for it.
    private func retire(_ client: MosquittoClient, _ keys: Set<String>) throws(SinkDeliveryError) {
        for key in keys.sorted() {
            let (person, identifier) = DeliveryContext.parts(ofKey: key)
            guard let type = QuantityType.named(identifier), let owner = HomeAssistantOwner.of(person: person, type) else { continue }
            for topic in [discovery.configTopic(owner, type), discovery.stateTopic(owner, type), discovery.attributesTopic(owner, type)] {
                try client.publish(topic: topic, payload: "", retain: true)
            }
            let entity = EntityKey(owner: owner, type: type)
            knownEntities = knownEntities.filter { !$0.isSameEntity(as: entity) }
            discoveredEntities = discoveredEntities.filter { !$0.isSameEntity(as: entity) }
        }
    }

    private func noteIncoming(_ client: MosquittoClient) {
        for message in client.takeIncoming()
        where message.topic == discovery.discoveryPrefix + "/status" && message.payload == "online" {
            discoveryDue = true
        }
    }

    /// The per-sample topic of a (person, type), computed once per batch.
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
            if options.homeAssistant {
                try retire(client, context.retiredStates)
                try publishDiscovery(client, entities: entitiesWithData(records, context: context))
            }
            let prefix = options.resolvedPrefix
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
                messageIDs.append(try client.publish(topic: topic, payload: Self.samplePayload(record), retain: false))
            }
            if options.homeAssistant {
                try publishStates(client, context: context)
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

    /// Retained states and attributes, only from the context's current readings (never one
    /// older than the state already shown): today's total for cumulative types, the reading for
    /// the others. Attributes go first, so a daily total's `day_start` (its `last_reset`) is there with its state.
    private func publishStates(_ client: MosquittoClient, context: DeliveryContext) throws(SinkDeliveryError) {
        let zone = TimeZone.current
        let today = HomeAssistantDiscovery.dayStart(at: Date(), zone: zone)
        for (key, sample) in context.currentReadings.sorted(by: { $0.key < $1.key }) {
            let person = DeliveryContext.parts(ofKey: key).person
            guard let owner = HomeAssistantOwner.of(person: person, sample.type) else { continue }
            let entity = HomeAssistantEntity(sample.type, system: Self.system(of: owner, context))
            let total = context.dailyTotal(person: person, type: sample.type.identifier)
            let canonical = entity.isDailyTotal ? (total ?? 0) : sample.quantity.value
            let measuredAt = max(sample.end, context.publishedStates[key] ?? sample.end)
            let attributes = discovery.attributesPayload(reading: sample, measuredAt: measuredAt,
                                                         dayStart: entity.isDailyTotal ? today : nil, zone: zone)
            try client.publish(topic: discovery.attributesTopic(owner, sample.type), payload: attributes, retain: true)
            try client.publish(topic: discovery.stateTopic(owner, sample.type),
                               payload: JSONNumber.format(entity.displayValue(canonical)), retain: true)
        }
    }

    /// A record's per-sample message: DESIGN.md's sample JSON with the value in the unit of
    /// the type's Home Assistant entity (`count/min` for heart rate, `km` for distances; `%` stays
    /// HealthKit's fraction) without conversion noise; a deletion or a sample of an unknown type
    /// as the record's own JSON.
    static func samplePayload(_ record: OutgoingRecord) -> String {
        guard var sample = record.sample,
              let canonical = try? sample.quantity.doubleValue(for: sample.type.canonicalUnit) else { return record.json }
        let entity = HomeAssistantEntity(sample.type)
        sample.quantity = Quantity(value: entity.publishedValue(canonical), unit: entity.publishedUnit)
        return HealthRecordEncoder().encode(sample)
    }

    func idle(milliseconds: Int) {
        guard let client else { return }
        do {
            try client.pump(milliseconds: Int32(max(0, min(milliseconds, 1000))))
            noteIncoming(client)
            if options.homeAssistant, discoveryDue {
                try publishDiscovery(client, entities: [])
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
        _ = try? client.publish(topic: discovery.statusTopic, payload: "offline", retain: true)
        try? client.waitForAcknowledgements(timeout: 2)
        client.disconnect()
        self.client = nil
    }
}
