/// The physical device that measured a sample (HealthKit's `HKDevice`). All fields are optional.
///
/// `localIdentifier` is the host-local id (for BLE the peripheral address); `udiDeviceIdentifier`
/// is the FDA Unique Device Identifier.
public struct Device: Hashable, Sendable, Codable {
    /// The fields, in one box that copies share until one changes a field.
    private var storage: CopyOnWriteBox<Fields>

    private struct Fields: Equatable, Hashable, Sendable {
        var name: String?
        var manufacturer: String?
        var model: String?
        var hardwareVersion: String?
        var firmwareVersion: String?
        var softwareVersion: String?
        var localIdentifier: String?
        var udiDeviceIdentifier: String?
    }

    public var name: String? { get { storage.value.name } set { CopyOnWriteBox.change(&storage) { $0.name = newValue } } }
    public var manufacturer: String? { get { storage.value.manufacturer } set { CopyOnWriteBox.change(&storage) { $0.manufacturer = newValue } } }
    public var model: String? { get { storage.value.model } set { CopyOnWriteBox.change(&storage) { $0.model = newValue } } }
    public var hardwareVersion: String? { get { storage.value.hardwareVersion } set { CopyOnWriteBox.change(&storage) { $0.hardwareVersion = newValue } } }
    public var firmwareVersion: String? { get { storage.value.firmwareVersion } set { CopyOnWriteBox.change(&storage) { $0.firmwareVersion = newValue } } }
    public var softwareVersion: String? { get { storage.value.softwareVersion } set { CopyOnWriteBox.change(&storage) { $0.softwareVersion = newValue } } }
    public var localIdentifier: String? { get { storage.value.localIdentifier } set { CopyOnWriteBox.change(&storage) { $0.localIdentifier = newValue } } }
    public var udiDeviceIdentifier: String? { get { storage.value.udiDeviceIdentifier } set { CopyOnWriteBox.change(&storage) { $0.udiDeviceIdentifier = newValue } } }

    public init(
        name: String? = nil,
        manufacturer: String? = nil,
        model: String? = nil,
        hardwareVersion: String? = nil,
        firmwareVersion: String? = nil,
        softwareVersion: String? = nil,
        localIdentifier: String? = nil,
        udiDeviceIdentifier: String? = nil
    ) {
        storage = CopyOnWriteBox(Fields(name: name, manufacturer: manufacturer, model: model, hardwareVersion: hardwareVersion,
                                        firmwareVersion: firmwareVersion, softwareVersion: softwareVersion,
                                        localIdentifier: localIdentifier, udiDeviceIdentifier: udiDeviceIdentifier))
    }

    private enum CodingKeys: String, CodingKey {
        case name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decodeIfPresent(String.self, forKey: .name),
            manufacturer: try container.decodeIfPresent(String.self, forKey: .manufacturer),
            model: try container.decodeIfPresent(String.self, forKey: .model),
            hardwareVersion: try container.decodeIfPresent(String.self, forKey: .hardwareVersion),
            firmwareVersion: try container.decodeIfPresent(String.self, forKey: .firmwareVersion),
            softwareVersion: try container.decodeIfPresent(String.self, forKey: .softwareVersion),
            localIdentifier: try container.decodeIfPresent(String.self, forKey: .localIdentifier),
            udiDeviceIdentifier: try container.decodeIfPresent(String.self, forKey: .udiDeviceIdentifier))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(manufacturer, forKey: .manufacturer)
        try container.encodeIfPresent(model, forKey: .model)
        try container.encodeIfPresent(hardwareVersion, forKey: .hardwareVersion)
        try container.encodeIfPresent(firmwareVersion, forKey: .firmwareVersion)
        try container.encodeIfPresent(softwareVersion, forKey: .softwareVersion)
        try container.encodeIfPresent(localIdentifier, forKey: .localIdentifier)
        try container.encodeIfPresent(udiDeviceIdentifier, forKey: .udiDeviceIdentifier)
    }

    public static func == (lhs: Device, rhs: Device) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.value == rhs.storage.value
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage.value) }

    /// The JSON field names in output order, with their values.
    var fields: [(key: String, value: String?)] {
        [
            ("name", name), ("manufacturer", manufacturer), ("model", model),
            ("hardwareVersion", hardwareVersion), ("firmwareVersion", firmwareVersion),
            ("softwareVersion", softwareVersion), ("localIdentifier", localIdentifier),
            ("udiDeviceIdentifier", udiDeviceIdentifier),
        ]
    }

    /// Whether every field is nil.
    public var isEmpty: Bool { fields.allSatisfy { $0.value == nil } }
}
