import AdapterKit
import Foundation
import Transport

/// The built-in adapter for heart-rate straps that put their rate in their advertisements (besides
/// the standard Heart Rate service a connection gets): Polar (company id 0x006B) and XOSS
/// (company id 0xFF04).
public struct HeartRateStrapAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "heart-rate-strap-broadcast"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Heart-rate straps' advertised rate (Polar, XOSS)",
            version: "1",
            summary: "Heart rate from Polar and XOSS straps' advertisements",
            matches: [
                .ble(BLEMatch(companyIDs: [HeartRateStrapDecoder.polarCompanyID])),
                .ble(BLEMatch(companyIDs: [HeartRateStrapDecoder.xossCompanyID], namePattern: "^(XOSS|X2)")),
            ],
            produces: [.heartRate],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Polar", name: "H10", offers: "heart rate (advertised and over GATT)",
                             reads: [.heartRate], capture: "polar-h10"),
                AdapterModel(maker: "Polar", name: "H9, OH1, Verity Sense", offers: "heart rate (advertised and over GATT)",
                             reads: [.heartRate], note: "same frame as the H10; no published capture"),
                AdapterModel(maker: "XOSS", name: "X2", offers: "heart rate, battery", reads: [.heartRate], capture: "xoss-x2"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: HeartRateStrapDecoder())
    }
}

/// The straps' frame (theengs/decoder `PH10_json.h`, `XOSSX2_json.h`): four bytes after the company
/// id, the heart rate in beats per minute in the last (0: no skin contact). XOSS keeps its battery
/// level in the low seven bits of byte 1.
public struct HeartRateStrapDecoder: AdvertisementReadingDecoder {
    public static let polarCompanyID: UInt16 = 0x006B
    public static let xossCompanyID: UInt16 = 0xFF04

    public init() {}

    public var manufacturer: String? { nil }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        for (company, maker) in [(Self.polarCompanyID, "Polar"), (Self.xossCompanyID, "XOSS")] {
            guard let data = advertisement.manufacturerData[company] else { continue }
            guard data.count == 4 else { return .nothing("not-a-heart-rate-frame") }
            guard data[3] != 0 else { return .nothing("no-contact") }
            return .values([AdvertisedValue(.heartRate, Double(data[3]), .countPerMinute)], identity: data, manufacturer: maker)
        }
        return .nothing("no-strap-frame")
    }
}
