import Foundation
import HealthModel

/// How one quantity type appears in Home Assistant: its entity's unit, device and state class,
/// and whether its state is today's running total or the latest reading.
public struct HomeAssistantEntity: Sendable, Equatable {
    public var type: QuantityType
    public var name: String
    /// The unit shown in Home Assistant (`unit_of_measurement`); nil for unitless values.
    public var unit: String?
    /// The HKUnit string the canonical value is converted to before publishing, if any.
    public var convertTo: String?
    /// A factor applied after conversion (HealthKit's fractions shown as percentages).
    public var scale: Double
    public var deviceClass: String?
    /// `total_increasing` (today's total, resets daily) or `measurement`.
    public var stateClass: String
    /// Whether the state is today's total (cumulative types) rather than the latest reading.
    public var isDailyTotal: Bool
    /// Seconds after which Home Assistant marks a continuous reading stale; nil for others.
    public var expireAfter: Int?

    /// The entity of `type`: HA's conventions for the common types, a generic one for the rest.
    public init(_ type: QuantityType) {
        self.type = type
        scale = 1
        convertTo = nil
        deviceClass = nil
        unit = type.canonicalUnit.description
        isDailyTotal = type.aggregationStyle.isCumulative
        stateClass = isDailyTotal ? "total_increasing" : "measurement"
        expireAfter = type.aggregationStyle == .discreteTemporallyWeighted ? 600 : nil
        name = Self.words(type.shortName) + (isDailyTotal ? " today" : "")
        switch type.shortName {
        case "stepCount": name = "Steps today"; unit = "steps"
        case "distanceWalkingRunning", "distanceCycling", "distanceWheelchair":
            unit = "km"; convertTo = "km"; deviceClass = "distance"
        case "distanceSwimming", "height", "waistCircumference": unit = "m"; deviceClass = "distance"
        case "activeEnergyBurned", "basalEnergyBurned": unit = "kcal"
        case "bodyMass", "leanBodyMass": unit = "kg"; deviceClass = "weight"
        case "bodyMassIndex": unit = nil
        case "bodyFatPercentage", "oxygenSaturation", "peripheralPerfusionIndex", "atrialFibrillationBurden":
            unit = "%"; scale = 100
        case "bodyTemperature", "basalBodyTemperature", "appleSleepingWristTemperature":
            unit = "°C"; deviceClass = "temperature"
        case "ambientTemperature":
            unit = "°C"; deviceClass = "temperature"; expireAfter = 600
        case "heartRate", "restingHeartRate", "walkingHeartRateAverage", "heartRateRecoveryOneMinute":
            unit = "bpm"; convertTo = "count/min"
        case "respiratoryRate": unit = "breaths/min"; convertTo = "count/min"
        case "bloodPressureSystolic", "bloodPressureDiastolic": unit = "mmHg"; deviceClass = "pressure"
        case "bloodGlucose": unit = "mg/dL"
        default: break
        }
        if unit == "count" { unit = nil }
    }

    /// "bodyMassIndex" → "Body mass index".
    static func words(_ shortName: String) -> String {
        var result = ""
        for character in shortName {
            if character.isUppercase, !result.isEmpty { result += " " + character.lowercased() } else { result.append(character) }
        }
        return result.prefix(1).uppercased() + result.dropFirst()
    }

    /// The value to publish for `canonicalValue`, in the entity's unit.
    public func displayValue(_ canonicalValue: Double) -> Double {
        var value = canonicalValue
        if let convertTo, let target = try? Unit(from: convertTo),
           let converted = try? type.canonicalUnit.convert(canonicalValue, to: target) {
            value = converted
        }
        return value * scale
    }
}

/// Builds Home Assistant MQTT discovery: the gateway as a device of its own (a connectivity
/// sensor on `<prefix>/status`), and per person one device (`via_device` the gateway) with a
/// retained `config` per granted type, its state topics and availability on `<prefix>/status`.
public struct HomeAssistantDiscovery: Sendable {
    public var discoveryPrefix: String
    public var topicPrefix: String
    public var gatewayID: String
    public var softwareVersion: String

    public init(discoveryPrefix: String, topicPrefix: String, gatewayID: String, softwareVersion: String) {
        self.discoveryPrefix = MQTTTopicName.prefix(discoveryPrefix)
        self.topicPrefix = MQTTTopicName.prefix(topicPrefix)
        self.gatewayID = gatewayID
        self.softwareVersion = softwareVersion
    }

    /// The gateway id as a Home Assistant node id (`MQTTTopicName.level`: letters, digits, `_` and `-` only).
    public var nodeID: String { "ingestd_" + MQTTTopicName.level(gatewayID) }

    /// The node id of a person's device: the gateway's and the person's level.
    public func nodeID(person: String) -> String { nodeID + "_" + MQTTTopicName.level(person) }

    public var statusTopic: String { topicPrefix + "/status" }

    /// Where a person's samples of `type` are published, one message each.
    public func sampleTopic(person: String, _ type: QuantityType) -> String {
        "\(topicPrefix)/\(MQTTTopicName.level(person))/\(type.shortName)"
    }

    public func stateTopic(person: String, _ type: QuantityType) -> String {
        sampleTopic(person: person, type) + "/state"
    }

    public func configTopic(person: String, _ type: QuantityType) -> String {
        "\(discoveryPrefix)/sensor/\(nodeID(person: person))/\(type.shortName)/config"
    }

    /// The gateway's own entity: its connectivity, from the birth and last-will status topic.
    public var gatewayConfigTopic: String { "\(discoveryPrefix)/binary_sensor/\(nodeID)/status/config" }

    private var gatewayDevice: String {
        """
        {"identifiers":[\(JSONText.quoted(nodeID))],"name":\(JSONText.quoted("ingestd \(gatewayID)")),\
        "manufacturer":"ingestd","model":"ingestd gateway","sw_version":\(JSONText.quoted(softwareVersion))}
        """
    }

    /// The discovery config of the gateway's connectivity sensor, as JSON.
    public var gatewayConfigPayload: String {
        let fields = [
            "\"name\":\"Gateway\"",
            "\"unique_id\":\(JSONText.quoted("\(nodeID)_status"))",
            "\"object_id\":\(JSONText.quoted("\(nodeID)_status"))",
            "\"state_topic\":\(JSONText.quoted(statusTopic))",
            "\"payload_on\":\"online\"",
            "\"payload_off\":\"offline\"",
            "\"device_class\":\"connectivity\"",
            "\"entity_category\":\"diagnostic\"",
            "\"device\":" + gatewayDevice,
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The discovery config of `person`'s `type` entity, as JSON: on the person's device, which
    /// Home Assistant shows as connected through the gateway.
    public func configPayload(person: String, _ type: QuantityType) -> String {
        let entity = HomeAssistantEntity(type)
        let node = nodeID(person: person)
        var fields: [String] = [
            "\"name\":\(JSONText.quoted(entity.name))",
            "\"unique_id\":\(JSONText.quoted("\(node)_\(type.shortName)"))",
            "\"object_id\":\(JSONText.quoted("\(node)_\(type.shortName)"))",
            "\"state_topic\":\(JSONText.quoted(stateTopic(person: person, type)))",
            "\"availability_topic\":\(JSONText.quoted(statusTopic))",
            "\"payload_available\":\"online\"",
            "\"payload_not_available\":\"offline\"",
            "\"state_class\":\(JSONText.quoted(entity.stateClass))",
        ]
        if let unit = entity.unit { fields.append("\"unit_of_measurement\":\(JSONText.quoted(unit))") }
        if let deviceClass = entity.deviceClass { fields.append("\"device_class\":\(JSONText.quoted(deviceClass))") }
        if !entity.isDailyTotal { fields.append("\"force_update\":true") }
        if let expire = entity.expireAfter { fields.append("\"expire_after\":\(expire)") }
        fields.append("""
            "device":{"identifiers":[\(JSONText.quoted(node))],"name":\(JSONText.quoted(person)),\
            "manufacturer":"ingestd","model":"person","sw_version":\(JSONText.quoted(softwareVersion)),\
            "via_device":\(JSONText.quoted(nodeID))}
            """)
        return "{" + fields.joined(separator: ",") + "}"
    }
}
