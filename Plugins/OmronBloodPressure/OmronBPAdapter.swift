import AdapterKit
import Foundation
import HealthModel
import Transport

/// Omron blood-pressure monitors with Bluetooth (HEM-7142T2, HEM-7155T, HEM-7361T, HEM-7600T,
/// BP5360 and the variants sharing their memory maps): once connected and unlocked, each user's
/// stored readings are read from the monitor's memory, the new ones only after the first
/// contact; the memory is left intact unless `omron-erase=true`. See README.md.
public struct OmronBPAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "omron-bp"
    /// Advertised names of Omron's connected blood-pressure monitors (`BLESmart_0000…`; the
    /// scales are `BLEsmart_0001…`).
    public static let namePattern = "^BLE[Ss]mart_0000"

    public let descriptor = AdapterDescriptor(
        id: OmronBPAdapter.id,
        name: "Omron blood-pressure monitors (HEM-7142T2, HEM-7155T, HEM-7361T, HEM-7600T, BP5360)",
        version: "1.0.0",
        summary: "Stored readings (blood pressure and pulse) of each user of Omron Bluetooth blood-pressure monitors",
        matches: [.ble(BLEMatch(namePattern: OmronBPAdapter.namePattern))],
        produces: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate],
        how: "GATT conversation: unlocked (its key programmed in pairing mode, or a token), clock checked and set, each user's stored readings read from the monitor's memory, only the new ones after the first contact; memory left intact unless `omron-erase=true`",
        models: [
            AdapterModel(maker: "Omron", name: "HEM-7142T2", offers: "blood pressure, pulse, stored readings of 1 user",
                         reads: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate], note: "with the user slot", capture: "hem-7142t2"),
            AdapterModel(maker: "Omron", name: "HEM-7600T", offers: "blood pressure, pulse, stored readings of 1 user",
                         reads: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate], note: "with the user slot", capture: "hem-7600t"),
            AdapterModel(maker: "Omron", name: "HEM-7155T, HEM-7361T, BP5360 (HEM-7377T1) and regional variants",
                         offers: "blood pressure, pulse, stored readings of 2 users",
                         reads: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate],
                         note: "with the user slot; memory maps from the public decoders, no capture of their own"),
        ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        OmronBPConversation(device: device, context: context)
    }
}

/// The adapter's options (`--adapter-option KEY=VALUE`).
public enum OmronBPOption {
    /// The monitor's model (`HEM-7361T`, `BP5360`, …) when it does not say so itself.
    public static let model = "omron-model"
    /// `true`: erase each user's readings on the monitor once they were committed (default: keep).
    public static let erase = "omron-erase"
    /// `false`: never set the monitor's clock.
    public static let setClock = "omron-set-clock"
}

/// The monitor's GATT characteristics (service ECBE3980-C9A2-11E1-B1BD-0002A5D5C51B).
public enum OmronBPUUID {
    public static let service = BLEUUID(high: 0xECBE_3980_C9A2_11E1, low: 0xB1BD_0002_A5D5_C51B)
    /// Written by the host, 16 bytes each: a longer frame continues on the next.
    public static let transmit: [BLEUUID] = [
        BLEUUID(high: 0xDB5B_55E0_AEE7_11E1, low: 0x965E_0002_A5D5_C51B),
        BLEUUID(high: 0xE0B8_A060_AEE7_11E1, low: 0x92F4_0002_A5D5_C51B),
        BLEUUID(high: 0x0AE1_2B00_AEE8_11E1, low: 0xA192_0002_A5D5_C51B),
        BLEUUID(high: 0x10E1_BA60_AEE8_11E1, low: 0x89E5_0002_A5D5_C51B),
    ]
    /// Notified by the monitor, 16 bytes each: an answer longer than the first continues on the next.
    public static let receive: [BLEUUID] = [
        BLEUUID(high: 0x4912_3040_AEE8_11E1, low: 0xA74D_0002_A5D5_C51B),
        BLEUUID(high: 0x4D0B_F320_AEE8_11E1, low: 0xA0D9_0002_A5D5_C51B),
        BLEUUID(high: 0x5128_CE60_AEE8_11E1, low: 0xB84B_0002_A5D5_C51B),
        BLEUUID(high: 0x560F_1420_AEE8_11E1, low: 0x8184_0002_A5D5_C51B),
    ]
    /// The unlock characteristic (key or token), written and notified.
    public static let unlock = BLEUUID(high: 0xB305_B680_AEE7_11E1, low: 0xA730_0002_A5D5_C51B)
    /// Model Number String of the Device Information service.
    public static let modelNumber = BLEUUID(0x2A24)
}

