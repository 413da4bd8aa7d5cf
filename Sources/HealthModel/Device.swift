/// The physical device that measured a sample (HealthKit's `HKDevice`). All fields are optional.
///
/// `localIdentifier` is the host-local id (for BLE the peripheral address); `udiDeviceIdentifier`
/// is the FDA Unique Device Identifier.
public struct Device: Hashable, Sendable, Codable {
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?
    public var localIdentifier: String?
    public var udiDeviceIdentifier: String?

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
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardwareVersion = hardwareVersion
        self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion
        self.localIdentifier = localIdentifier
        self.udiDeviceIdentifier = udiDeviceIdentifier
    }

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
