import Foundation
import HealthModel

/// How one quantity type appears in Home Assistant: its entity's name, unit, device and state
/// class, display precision, and whether its state is today's running total or the latest reading.
public struct HomeAssistantEntity: Sendable, Equatable {
    public var type: QuantityType
    /// The entity's name in plain words ("Weight", "Steps today").
    public var name: String
    /// The unit shown in Home Assistant (`unit_of_measurement`); nil for unitless values.
    public var unit: String?
    /// The HKUnit string values are published in (states and per-sample messages); nil: the
    /// type's canonical unit.
    public var convertTo: String?
    /// A factor applied to states after conversion (HealthKit's fractions shown as percentages).
    public var scale: Double
    public var deviceClass: String?
    /// `total` with `last_reset` (today's total, a new cycle each local midnight) or `measurement`.
    public var stateClass: String
    /// Whether the state is today's total (cumulative types) rather than the latest reading.
    public var isDailyTotal: Bool
    /// Decimals Home Assistant shows by default (`suggested_display_precision`).
    public var displayPrecision: Int
    /// Whether the entity belongs to the gateway (room sensors) rather than to a person.
    public var isAmbient: Bool

    /// The entity of `type` for a person who reads `system`: in US units, masses in lb,
    /// distances in mi, lengths in in, temperatures in °F and speeds in mph (HA converts none of
    /// them by itself for an MQTT sensor); everything else as `init(_:)`.
    public init(_ type: QuantityType, system: UnitSystem) {
        self.init(type)
        guard system == .us, let unit, let us = Self.usUnits[unit] else { return }
        self.unit = us.shown
        convertTo = us.hkUnit
    }

    /// A metric entity unit → its US entity unit (shown, HKUnit string).
    static let usUnits: [String: (shown: String, hkUnit: String)] = [
        "kg": ("lb", "lb"), "km": ("mi", "mi"), "cm": ("in", "in"), "°C": ("°F", "degF"), "km/h": ("mph", "mi/hr"),
    ]

    /// The entity of `type`: from `HomeAssistantEntity.table` for the known types, a generic one
    /// (words of the identifier, the canonical unit) for the rest.
    public init(_ type: QuantityType) {
        self.type = type
        isDailyTotal = type.aggregationStyle.isCumulative
        stateClass = isDailyTotal ? "total" : "measurement"
        let row = Self.table[type.shortName]
        name = row?.name ?? (type.shortNameInWords + (isDailyTotal ? " today" : ""))
        unit = row.map { $0.unit } ?? (type.canonicalUnit.description == "count" ? nil : type.canonicalUnit.description)
        convertTo = row?.convertTo
        scale = row?.scale ?? 1
        deviceClass = row?.deviceClass
        displayPrecision = row?.precision ?? 2
        isAmbient = row?.isAmbient ?? false
    }

    /// One row of the table: what a Home Assistant user expects for a type.
    struct Row: Sendable {
        var name: String
        var unit: String?
        var convertTo: String? = nil
        var scale: Double = 1
        var deviceClass: String? = nil
        var precision: Int
        var isAmbient = false
    }

    /// Names, units and precision per type (short name), in Home Assistant's conventions
    /// (bpm, kg, %, °C, mmHg, mg/dL; device classes only where HA accepts the unit).
    static let table: [String: Row] = [
        "stepCount": Row(name: "Steps today", unit: "steps", precision: 0),
        "distanceWalkingRunning": Row(name: "Walking and running distance today", unit: "km", convertTo: "km", deviceClass: "distance", precision: 2),
        "distanceCycling": Row(name: "Cycling distance today", unit: "km", convertTo: "km", deviceClass: "distance", precision: 2),
        "distanceWheelchair": Row(name: "Wheelchair distance today", unit: "km", convertTo: "km", deviceClass: "distance", precision: 2),
        "distanceSwimming": Row(name: "Swimming distance today", unit: "m", deviceClass: "distance", precision: 0),
        "flightsClimbed": Row(name: "Floors climbed today", unit: "floors", precision: 0),
        "pushCount": Row(name: "Wheelchair pushes today", unit: "pushes", precision: 0),
        "swimmingStrokeCount": Row(name: "Swimming strokes today", unit: "strokes", precision: 0),
        "activeEnergyBurned": Row(name: "Active energy today", unit: "kcal", precision: 0),
        "basalEnergyBurned": Row(name: "Resting energy today", unit: "kcal", precision: 0),
        "appleExerciseTime": Row(name: "Exercise minutes today", unit: "min", deviceClass: "duration", precision: 0),
        "appleStandTime": Row(name: "Stand minutes today", unit: "min", deviceClass: "duration", precision: 0),
        "appleMoveTime": Row(name: "Move minutes today", unit: "min", deviceClass: "duration", precision: 0),
        "bodyMass": Row(name: "Weight", unit: "kg", deviceClass: "weight", precision: 2),
        "bodyFatPercentage": Row(name: "Body fat", unit: "%", scale: 100, precision: 1),
        "leanBodyMass": Row(name: "Lean body mass", unit: "kg", deviceClass: "weight", precision: 1),
        "bodyMassIndex": Row(name: "Body mass index", unit: nil, precision: 1),
        "height": Row(name: "Height", unit: "cm", convertTo: "cm", deviceClass: "distance", precision: 0),
        "waistCircumference": Row(name: "Waist circumference", unit: "cm", convertTo: "cm", deviceClass: "distance", precision: 0),
        "bodyTemperature": Row(name: "Body temperature", unit: "°C", deviceClass: "temperature", precision: 1),
        "basalBodyTemperature": Row(name: "Basal body temperature", unit: "°C", deviceClass: "temperature", precision: 2),
        "appleSleepingWristTemperature": Row(name: "Sleeping wrist temperature", unit: "°C", deviceClass: "temperature", precision: 2),
        "heartRate": Row(name: "Heart rate", unit: "bpm", convertTo: "count/min", precision: 0),
        "restingHeartRate": Row(name: "Resting heart rate", unit: "bpm", convertTo: "count/min", precision: 0),
        "walkingHeartRateAverage": Row(name: "Walking heart rate", unit: "bpm", convertTo: "count/min", precision: 0),
        "heartRateRecoveryOneMinute": Row(name: "Heart rate recovery after one minute", unit: "bpm", convertTo: "count/min", precision: 0),
        "heartRateVariabilitySDNN": Row(name: "Heart rate variability", unit: "ms", deviceClass: "duration", precision: 0),
        "atrialFibrillationBurden": Row(name: "AFib burden", unit: "%", scale: 100, precision: 0),
        "bloodPressureSystolic": Row(name: "Blood pressure systolic", unit: "mmHg", deviceClass: "pressure", precision: 0),
        "bloodPressureDiastolic": Row(name: "Blood pressure diastolic", unit: "mmHg", deviceClass: "pressure", precision: 0),
        "peripheralPerfusionIndex": Row(name: "Perfusion index", unit: "%", scale: 100, precision: 1),
        "oxygenSaturation": Row(name: "Blood oxygen", unit: "%", scale: 100, precision: 0),
        "respiratoryRate": Row(name: "Breathing rate", unit: "breaths/min", convertTo: "count/min", precision: 0),
        "bloodGlucose": Row(name: "Blood glucose", unit: "mg/dL", precision: 0),
        "vo2Max": Row(name: "Cardio fitness (VO2 max)", unit: "mL/(kg·min)", precision: 1),
        "bloodAlcoholContent": Row(name: "Blood alcohol", unit: "%", scale: 100, precision: 2),
        "environmentalAudioExposure": Row(name: "Environmental sound level", unit: "dB", deviceClass: "sound_pressure", precision: 0),
        "headphoneAudioExposure": Row(name: "Headphone sound level", unit: "dB", deviceClass: "sound_pressure", precision: 0),
        "walkingSpeed": Row(name: "Walking speed", unit: "km/h", convertTo: "km/hr", deviceClass: "speed", precision: 1),
        "runningSpeed": Row(name: "Running speed", unit: "km/h", convertTo: "km/hr", deviceClass: "speed", precision: 1),
        "cyclingSpeed": Row(name: "Cycling speed", unit: "km/h", convertTo: "km/hr", deviceClass: "speed", precision: 1),
        "cyclingPower": Row(name: "Cycling power", unit: "W", deviceClass: "power", precision: 0),
        "runningPower": Row(name: "Running power", unit: "W", deviceClass: "power", precision: 0),
        "ambientTemperature": Row(name: "Room temperature", unit: "°C", deviceClass: "temperature", precision: 1, isAmbient: true),
        "bodyWaterPercentage": Row(name: "Body water", unit: "%", scale: 100, precision: 1),
        "skeletalMuscleMass": Row(name: "Skeletal muscle mass", unit: "kg", deviceClass: "weight", precision: 1),
        "boneMass": Row(name: "Bone mass", unit: "kg", deviceClass: "weight", precision: 1),
        "visceralFatRating": Row(name: "Visceral fat rating", unit: nil, precision: 0),
        "basalMetabolicRate": Row(name: "Basal metabolic rate", unit: "kcal/d", precision: 0),
    ]

    /// The unit values are published in: `convertTo`, or the canonical unit.
    public var publishedUnit: HealthModel.Unit {
        convertTo.flatMap { try? HealthModel.Unit(from: $0) } ?? type.canonicalUnit
    }

    /// `canonicalValue` in `publishedUnit`, without conversion noise (`cleaned`).
    public func publishedValue(_ canonicalValue: Double) -> Double {
        let converted = (try? type.canonicalUnit.convert(canonicalValue, to: publishedUnit)) ?? canonicalValue
        return Self.cleaned(converted)
    }

    /// The state for `canonicalValue`, in the entity's unit (`publishedValue` times `scale`).
    public func displayValue(_ canonicalValue: Double) -> Double {
        Self.cleaned(publishedValue(canonicalValue) * scale)
    }

    /// `value` rounded to 12 significant digits: a binary conversion's noise (85.0000000000002,
    /// 23.500000000000004) goes, every digit a device measures stays; the shortest round-trip
    /// text of the result is then what a person expects (85, 23.5).
    public static func cleaned(_ value: Double) -> Double {
        guard value.isFinite, value != 0 else { return value }
        let decimals = 11 - Int(log10(abs(value)).rounded(.down))
        guard decimals > 0, decimals <= 22 else { return value }
        let factor = pow(10, Double(decimals))
        let scaled = (value * factor).rounded()
        return scaled.isFinite ? scaled / factor : value
    }
}

/// Whose Home Assistant device an entity is on: a person's, or the gateway's (room sensors).
public enum HomeAssistantOwner: Sendable, Hashable {
    case person(String)
    case gateway

    /// The owner of `type`'s entity for a sample of `person`: ambient types belong to the
    /// gateway, every other type to its person; nil for an unassigned sample (no entity).
    public static func of(person: String, _ type: QuantityType) -> HomeAssistantOwner? {
        if HomeAssistantEntity(type).isAmbient { return .gateway }
        return person.isEmpty ? nil : .person(person)
    }
}

/// Builds Home Assistant MQTT discovery: the gateway as a device of its own (a connectivity
/// sensor on `<prefix>/status`, and its room sensors), and per person one device named after
/// the person (`via_device` the gateway), with a retained `config` per type that has data, its
/// retained state and attributes. Entities are not tied to the gateway's status: a reading
/// stays valid when the process that delivered it has exited (docs/sinks.md).
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

    /// The node id of `owner`'s device.
    public func nodeID(_ owner: HomeAssistantOwner) -> String {
        switch owner {
        case .person(let person): nodeID(person: person)
        case .gateway: nodeID
        }
    }

    public var statusTopic: String { topicPrefix + "/status" }

    /// Where a person's samples of `type` are published, one message each.
    public func sampleTopic(person: String, _ type: QuantityType) -> String {
        "\(topicPrefix)/\(MQTTTopicName.level(person))/\(type.shortName)"
    }

    public func stateTopic(person: String, _ type: QuantityType) -> String {
        stateTopic(.person(person), type)
    }

    /// The retained state of `owner`'s `type` entity: `<prefix>/<person>/<type>/state`, or
    /// `<prefix>/gateway/<type>/state` for the gateway's (ambient types only, so never one of
    /// a person called "gateway").
    public func stateTopic(_ owner: HomeAssistantOwner, _ type: QuantityType) -> String {
        switch owner {
        case .person(let person): sampleTopic(person: person, type) + "/state"
        case .gateway: "\(topicPrefix)/gateway/\(type.shortName)/state"
        }
    }

    /// The retained attributes (measured at, source, device…) of the entity whose state is at `stateTopic`.
    public func attributesTopic(_ owner: HomeAssistantOwner, _ type: QuantityType) -> String {
        stateTopic(owner, type) + "/attributes"
    }

    public func configTopic(person: String, _ type: QuantityType) -> String {
        configTopic(.person(person), type)
    }

    public func configTopic(_ owner: HomeAssistantOwner, _ type: QuantityType) -> String {
        "\(discoveryPrefix)/sensor/\(nodeID(owner))/\(type.shortName)/config"
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

    public func configPayload(person: String, _ type: QuantityType) -> String {
        configPayload(.person(person), type)
    }

    /// The discovery config of `owner`'s `type` entity, as JSON: on the person's device (named
    /// after the person, connected through the gateway) or on the gateway's. A daily total is a
    /// `total` whose `last_reset` (local midnight of its day) comes from its attributes, so a
    /// new day starts a new cycle even when its first total is higher than the last one.
    public func configPayload(_ owner: HomeAssistantOwner, _ type: QuantityType, system: UnitSystem = .metric) -> String {
        let entity = HomeAssistantEntity(type, system: system)
        let node = nodeID(owner)
        var fields: [String] = [
            "\"name\":\(JSONText.quoted(entity.name))",
            "\"unique_id\":\(JSONText.quoted("\(node)_\(type.shortName)"))",
            "\"object_id\":\(JSONText.quoted("\(node)_\(type.shortName)"))",
            "\"state_topic\":\(JSONText.quoted(stateTopic(owner, type)))",
            "\"json_attributes_topic\":\(JSONText.quoted(attributesTopic(owner, type)))",
            "\"state_class\":\(JSONText.quoted(entity.stateClass))",
            "\"suggested_display_precision\":\(entity.displayPrecision)",
        ]
        if let unit = entity.unit { fields.append("\"unit_of_measurement\":\(JSONText.quoted(unit))") }
        if let deviceClass = entity.deviceClass { fields.append("\"device_class\":\(JSONText.quoted(deviceClass))") }
        if entity.isDailyTotal {
            fields.append("\"last_reset_value_template\":\"{{ state_attr(entity_id, 'day_start') }}\"")
        } else {
            fields.append("\"force_update\":true")
        }
        switch owner {
        case .person(let person):
            fields.append("""
                "device":{"identifiers":[\(JSONText.quoted(node))],"name":\(JSONText.quoted(person)),\
                "manufacturer":"ingestd","model":"person","sw_version":\(JSONText.quoted(softwareVersion)),\
                "via_device":\(JSONText.quoted(nodeID))}
                """)
        case .gateway:
            fields.append("\"device\":" + gatewayDevice)
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The attributes of a state, as JSON: `measured_at` (the reading's end, ISO 8601 with the
    /// offset of `zone`), `source`, `device` (its name, or null), the body-composition `formula`
    /// when derived; for a daily total also `day_start` (the day's local midnight, the `last_reset`) and `day`.
    public func attributesPayload(reading: QuantitySample, measuredAt: Date, dayStart: Date?, zone: TimeZone) -> String {
        var fields = [
            "\"measured_at\":\(JSONText.quoted(Self.localTime(measuredAt, zone: zone)))",
            "\"source\":\(JSONText.quoted(reading.source))",
            "\"device\":" + (reading.device?.name.map(JSONText.quoted) ?? "null"),
        ]
        if case .string(let formula)? = reading.metadata.entries[Self.formulaKey] {
            fields.append("\"formula\":\(JSONText.quoted(formula))")
        }
        if let dayStart {
            fields.append("\"day_start\":\(JSONText.quoted(Self.localTime(dayStart, zone: zone)))")
            fields.append("\"day\":\(JSONText.quoted(String(Self.localTime(dayStart, zone: zone).prefix(10))))")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The local midnight starting the day `now` falls in, in `zone` as it is at `now`: a daily
    /// total's `last_reset`. A new day (or a zone change moving `now` into another local day)
    /// gives a new midnight, so Home Assistant starts a new cycle.
    public static func dayStart(at now: Date, zone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.startOfDay(for: now)
    }

    /// The metadata key of a derived sample's body-composition formula.
    static let formulaKey = "IngestBodyCompositionFormula"

    /// `date` as ISO 8601 with the offset `zone` has then (`2025-06-15T17:06:40+02:00`, `Z` in UTC).
    static func localTime(_ date: Date, zone: TimeZone) -> String {
        ISO8601DateTime.string(from: date, wholeSecondsIn: zone)
    }
}
