import AdapterKit
import Foundation
import GATTHealthProfiles
import Transport

/// Beurer and Sanitas scales that speak the Bluetooth SIG standard profiles (Weight Scale, Body
/// Composition, User Data Service with a consent code): BF105, BF720, BF500, BF600, BF788, BF850,
/// BF915, BF950, Sanitas SBF72, SBF73, SBF76, SBF77. The conversation is the standard one of
/// ``GATTHealthAdapter`` with the consent code required, the vendor's take-measurement command
/// and a bound on the values per contact. See README.md.
public struct BeurerStandardScaleAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "beurer-standard-scale"
    /// The advertised names of the standard-profile models (the vendor-protocol BF700/BF710/BF800
    /// and SBF70/SBF75 go to `beurer-sanitas`).
    public static let namePattern = "^(BEURER |SANITAS )?(BF ?(105|500|600|720|788|850|915|950)|SBF ?7[2367])"
    /// The take-measurement characteristics of the model families (openScale's
    /// StandardBeurerSanitasHandler): 0x0006 (BF105/BF720/BF950, service 0xFFFF) and 0xFFF4
    /// (BF500 in 0xFFFF, BF600/BF850 in 0xFFF0).
    public static let takeMeasurement = [BLEUUID(0x0006), BLEUUID(0xFFF4)]
    /// Values (a weighing is a weight and a body composition value) in one contact before the
    /// link is closed: 100 weighings, more than these scales are known to keep for one user, and
    /// below the 256 values the daemon's link queues for a conversation.
    public static let maximumValuesPerContact = 200
    /// Silence after which the scale has sent everything.
    public static let silence: Duration = .seconds(30)
    /// The vendor's activity level characteristic (service 0xFFF0), committed with the user data.
    public static let activityLevel = BLEUUID(0xFFF3)
    /// What the vendor app commits once the user is accepted (ble-scale-sync's account of the BF788
    /// capture of its issue #229): date of birth, gender, height and activity level read and written
    /// back unchanged in this order, then `01 00 00 00` to the Database Change Increment; only
    /// after that does a BF788 send a real body composition for the user.
    public static let userDataCommit = [GATTHealthUUID.dateOfBirth, GATTHealthUUID.gender, GATTHealthUUID.height, activityLevel]
    /// The Database Change Increment written after the user data (as ble-scale-sync writes it).
    public static let changeIncrement: [UInt8] = [0x01, 0x00, 0x00, 0x00]

    private let standard = GATTHealthAdapter()

    public let descriptor = AdapterDescriptor(
        id: BeurerStandardScaleAdapter.id,
        name: "Beurer/Sanitas standard-profile scales (BF720, BF950, BF915, SBF72/73)",
        version: "1.1.0",
        summary: "Stored and live weighings (body mass, BMI, height, body fat) of the registered user of Beurer/Sanitas "
            + "scales with the Weight Scale, Body Composition and User Data services",
        matches: [.ble(BLEMatch(namePattern: BeurerStandardScaleAdapter.namePattern))],
        produces: [.bodyMass, .bodyMassIndex, .height, .bodyFatPercentage, .leanBodyMass],
        how: "GATT conversation: consent code of the configured user (or a new user registered), the scale's user data confirmed (read and written back, change increment), take measurement, the user's stored weighings and the live one",
        models: [
            AdapterModel(maker: "Beurer", name: "BF720", offers: "weight, BMI, height, body composition, stored weighings per user",
                         reads: [.bodyMass, .bodyMassIndex, .height, .bodyFatPercentage], note: "with the scale's user index",
                         capture: "history"),
            AdapterModel(maker: "Beurer", name: "BF788", offers: "weight, BMI, height, body composition, stored weighings per user",
                         reads: [.bodyMass, .bodyMassIndex, .height, .bodyFatPercentage],
                         note: "with the scale's user index; stored weighings come with an empty composition", capture: "bf788"),
            AdapterModel(maker: "Beurer / Sanitas", name: "BF105, BF500, BF600, BF850, BF915, BF950, SBF72, SBF73, SBF76, SBF77",
                         offers: "weight, BMI, height, body composition, stored weighings per user",
                         reads: [.bodyMass, .bodyMassIndex, .height, .bodyFatPercentage],
                         note: "with the scale's user index; the same standard profile, no capture of their own"),
        ]
    )

    public init() {}

    /// Advertisements and values decode as the standard profiles do.
    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        standard.makeSession(for: device, context: context)
    }

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        standard.makeConsentScaleConversation(
            for: device, context: context,
            steps: ConsentScaleSteps(takeMeasurement: Self.takeMeasurement, maximumValues: Self.maximumValuesPerContact,
                                     silence: Self.silence, userDataCommit: Self.userDataCommit,
                                     changeIncrement: Self.changeIncrement))
    }
}
