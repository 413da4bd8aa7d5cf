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

    /// A field of a device, named as its JSON (and Codable) key. The cases are in output order:
    /// the one list that the encoder, the decoders and Codable follow.
    public enum Field: String, CodingKey, CaseIterable, Sendable {
        case name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier
    }

    /// The value of `field`.
    public subscript(field: Field) -> String? {
        get {
            // Each field read where it lies in the box (a copy of all the fields would retain
            // every string).
            switch field {
            case .name: return storage.value.name
            case .manufacturer: return storage.value.manufacturer
            case .model: return storage.value.model
            case .hardwareVersion: return storage.value.hardwareVersion
            case .firmwareVersion: return storage.value.firmwareVersion
            case .softwareVersion: return storage.value.softwareVersion
            case .localIdentifier: return storage.value.localIdentifier
            case .udiDeviceIdentifier: return storage.value.udiDeviceIdentifier
            }
        }
        set {
            switch field {
            case .name: name = newValue
            case .manufacturer: manufacturer = newValue
            case .model: model = newValue
            case .hardwareVersion: hardwareVersion = newValue
            case .firmwareVersion: firmwareVersion = newValue
            case .softwareVersion: softwareVersion = newValue
            case .localIdentifier: localIdentifier = newValue
            case .udiDeviceIdentifier: udiDeviceIdentifier = newValue
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Field.self)
        self.init()
        for field in Field.allCases { self[field] = try container.decodeIfPresent(String.self, forKey: field) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Field.self)
        for field in Field.allCases { try container.encodeIfPresent(self[field], forKey: field) }
    }

    public static func == (lhs: Device, rhs: Device) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.value == rhs.storage.value
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage.value) }

    /// Whether every field is nil.
    public var isEmpty: Bool { Field.allCases.allSatisfy { self[$0] == nil } }
}
