import AdapterKit
import Foundation
import Transport

/// The built-in adapter for the heart rate Mi Bands and Amazfit watches broadcast when "heart rate
/// discoverable" is on (manufacturer data under Huami's company id 0x0157).
public struct MiBandHeartRateAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "mi-band-heart-rate"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Mi Band / Amazfit heart rate broadcast",
            version: "1",
            summary: "Heart rate from Mi Band and Amazfit advertisements (company id 0x0157, discoverable mode)",
            matches: [.ble(BLEMatch(companyIDs: [MiBandHeartRateDecoder.companyID]))],
            produces: [.heartRate],
            how: "advertisements (\"heart rate discoverable\" on)",
            models: [
                AdapterModel(maker: "Xiaomi", name: "Mi Smart Band 4 and other Mi Bands", offers: "heart rate; the day's steps",
                             reads: [.heartRate], note: "steps not read", capture: "mi-band-heart-rate"),
                AdapterModel(maker: "Amazfit", name: "Bip S and other Amazfit watches", offers: "heart rate when discoverable",
                             reads: [.heartRate], capture: "mi-band-heart-rate"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: MiBandHeartRateDecoder())
    }
}

/// The Huami frame (theengs/decoder `Miband_json.h`, ble_monitor `amazfit.py`): 24 bytes after the
/// company id; byte 0 is 0x02 when the frame carries a heart rate, which is byte 3 in beats per
/// minute (0xFF: not measured now); the device's address is at 18–23.
public struct MiBandHeartRateDecoder: AdvertisementReadingDecoder {
    public static let companyID: UInt16 = 0x0157
    static let length = 24

    public init() {}

    public var manufacturer: String? { "Huami" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard let data = advertisement.manufacturerData[Self.companyID] else { return .nothing("no-huami-frame") }
        guard data.count >= 4 else { throw .short(data, needs: 4, what: "Huami frame") }
        guard data[0] == 0x02 else { return .nothing("no-heart-rate-in-frame") }
        guard data[3] != 0xFF else { return .nothing("heart-rate-not-measured") }
        return .values([AdvertisedValue(.heartRate, Double(data[3]), .countPerMinute)], identity: data)
    }
}
