import AdapterKit
import Foundation
import GATTHealthProfiles

/// Medisana BU 530 connect and BU 580 connect upper-arm blood-pressure monitors: once
/// connected they indicate their stored readings as standard Blood Pressure Measurements
/// (0x2A35) with time stamp, pulse and user, and are done after a silence. The conversation is
/// ``GATTHealthAdapter``'s, bounded per contact. See README.md.
public struct MedisanaBPAdapter: StandardProfileFamily {
    /// The adapter id, also the samples' source.
    public static let id = "medisana-bp"
    /// The companies in the monitors' advertisements (bkbilly/medisanabp_ble's manifest).
    public static let companyIDs: [UInt16] = [0x4842, 0x7A18]
    /// The advertised name of the BU 530/580 connect (the manifest's `local_name`).
    public static let namePattern = "^1872B"
    /// Readings in one contact before the link is closed: a monitor keeps at most 2 × 120; silence after
    /// which the monitor has sent everything (the public client waits 15 s).
    public static let contactBounds = ContactBounds(maximumValues: 250, silence: .seconds(15))

    public let descriptor = AdapterDescriptor(
        id: MedisanaBPAdapter.id,
        name: "Medisana BU 530 / BU 580 connect blood-pressure monitors",
        version: "1.0.0",
        summary: "Stored readings (blood pressure and pulse, with the user) of Medisana's connected upper-arm monitors",
        matches: [.ble(BLEMatch(companyIDs: MedisanaBPAdapter.companyIDs)),
                  .ble(BLEMatch(namePattern: MedisanaBPAdapter.namePattern))],
        produces: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate],
        how: "GATT conversation: indications of Blood Pressure Measurement, the monitor's stored readings until 15 s of silence, at most 250 a contact",
        models: [
            AdapterModel(maker: "Medisana", name: "BU 530 connect, BU 580 connect",
                         offers: "blood pressure, mean arterial pressure, pulse, stored readings of 2 users, battery",
                         reads: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate],
                         note: "with the monitor's user", capture: "bu530"),
        ]
    )

    public init() {}
}
