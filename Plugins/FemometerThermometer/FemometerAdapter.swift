import AdapterKit
import Foundation
import GATTHealthProfiles

/// Femometer Vinca II basal body thermometers (Joytech, advertised as `BM-Vinca2`): the
/// Bluetooth SIG Health Thermometer profile with Current Time; once connected the thermometer
/// indicates its readings as Temperature Measurements (0x2A1C). The conversation is
/// ``GATTHealthAdapter``'s, bounded per contact. See README.md.
public struct FemometerAdapter: StandardProfileFamily {
    /// The adapter id, also the samples' source.
    public static let id = "femometer"
    /// The advertised name (Gadgetbridge's `FemometerVinca2DeviceCoordinator`).
    public static let namePattern = "^BM-Vinca2"
    /// Readings in one contact before the link is closed, and the silence after which the
    /// thermometer has sent everything.
    public static let contactBounds = ContactBounds(maximumValues: 100, silence: .seconds(20))

    public let descriptor = AdapterDescriptor(
        id: FemometerAdapter.id,
        name: "Femometer Vinca II body thermometers",
        version: "1.0.0",
        summary: "Body temperature readings of Femometer's Bluetooth basal thermometers",
        matches: [.ble(BLEMatch(namePattern: FemometerAdapter.namePattern))],
        produces: [.bodyTemperature],
        how: "GATT conversation: Current Time set, indications of Temperature Measurement until 20 s of silence, at most 100 a contact",
        models: [
            AdapterModel(maker: "Femometer (Joytech)", name: "Vinca II (BM-Vinca2)", offers: "body temperature, battery",
                         reads: [.bodyTemperature], note: "the standard thermometer profile; its vendor settings are not written",
                         capture: "vinca2"),
        ]
    )

    public init() {}
}
