import AdapterKit
import Foundation
import HealthModel
import Transport

/// The built-in adapter for Senssun scales that advertise their weighings (the IF_B7), with the
/// impedance they measured.
public struct SenssunScaleAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "senssun-scale"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Senssun scales (advertised weight)",
            version: "1",
            summary: "Body mass (with impedance) from Senssun IF_B7 scales' advertisements",
            matches: [.ble(BLEMatch(companyIDs: [SenssunScaleDecoder.companyID], namePattern: "^IF_B7"))],
            produces: [.bodyMass],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Senssun", name: "IF_B7", offers: "weight, impedance", reads: [.bodyMass],
                             note: "impedance as metadata", capture: "if-b7"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: SenssunScaleDecoder())
    }
}

/// The IF_B7's frame (ble_monitor `senssun.py`): 17 bytes after company id 0x0100; the scale's
/// address at 3–8, a division byte at 9, the weight big-endian in 0.01 kg at 10, the impedance
/// big-endian in ohms at 12, and a control byte at 14 whose bits 0xA0 are both set once the weight
/// has settled.
public struct SenssunScaleDecoder: AdvertisementReadingDecoder {
    public static let companyID: UInt16 = 0x0100
    static let length = 17

    public init() {}

    public var manufacturer: String? { "Senssun" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard let data = advertisement.manufacturerData[Self.companyID] else { return .nothing("no-senssun-frame") }
        guard data.count == Self.length else {
            throw AdvertisementFrameError(reason: "bad-length", detail: "a Senssun frame has 17 bytes, got \(data.count): \(hexString(data))")
        }
        let raw = FrameBytes.be16(data, 10)
        if raw == 0 { return .loadRemoved }
        guard data[14] & 0xA0 == 0xA0 else { return .settling }
        let ohms = FrameBytes.be16(data, 12)
        let metadata: [String: MetadataValue] = ohms == 0 ? [:] : [AdapterMetadataKey.impedanceOhm: .number(Double(ohms))]
        return .values([AdvertisedValue(.bodyMass, Double(raw) / 100, .kilogram, metadata: metadata)],
                       identity: Array(data[9..<15]), model: "IF_B7")
    }
}
