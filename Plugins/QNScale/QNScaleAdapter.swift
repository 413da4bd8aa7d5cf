import AdapterKit
import Foundation
import Transport

/// The built-in adapter for QN-platform scales in broadcast mode (Renpho, FITINDEX, Arboleaf and
/// other QN-lineage scales that advertise their weight under company id 0xFFFF with an `AA BB`
/// header).
public struct QNScaleAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "qn-scale-broadcast"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "QN scale broadcast (Renpho, FITINDEX, Arboleaf)",
            version: "1",
            summary: "Body mass from QN-platform scales' AABB broadcasts (company id 0xFFFF)",
            matches: [.ble(BLEMatch(companyIDs: [QNBroadcastDecoder.companyID]))],
            produces: [.bodyMass],
            how: "advertisements",
            models: [
                AdapterModel(maker: "FITINDEX", name: "FT-26R-W", offers: "weight", reads: [.bodyMass],
                             capture: "ft26r-weighings"),
                AdapterModel(maker: "Renpho / Arboleaf / QN", name: "scales advertising the AABB frame (ES-26M-W and kin)",
                             offers: "weight; some frames carry impedance", reads: [.bodyMass],
                             note: "impedance not read: no published frame of it is real"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: QNBroadcastDecoder())
    }
}

/// The AABB broadcast frame: manufacturer data under company 0xFFFF whose first bytes are `AA BB`;
/// the scale's address at 2–7, status at 15 (bit 0 or bit 5: settled), weight at 17–18
/// (little-endian, 0.01 kg). A zero weight is the idle frame after the person stepped off.
/// Company 0xFFFF is shared by many vendors: other frames under it are not ours (`not-an-aabb-frame`).
public struct QNBroadcastDecoder: AdvertisementReadingDecoder {
    public static let companyID: UInt16 = 0xFFFF
    static let minimumLength = 19

    public init() {}

    public var manufacturer: String? { "QN" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard let data = advertisement.manufacturerData[Self.companyID] else { return .nothing("no-aabb-frame") }
        guard data.count >= 2, data[0] == 0xAA, data[1] == 0xBB else { return .nothing("not-an-aabb-frame") }
        guard data.count >= Self.minimumLength else {
            throw .short(data, needs: Self.minimumLength, what: "AABB frame")
        }
        let raw = FrameBytes.le16(data, 17)
        if raw == 0 { return .loadRemoved }
        guard data[15] & 0x21 != 0 else { return .settling }
        return .values([AdvertisedValue(.bodyMass, Double(raw) / 100, .kilogram)], identity: [data[17], data[18]])
    }
}
