import AdapterKit
import Foundation
import Transport

/// The built-in adapter for the Amazfit Smart Scale's advertised weighings (service data 0xFEE0,
/// 20 bytes): weight, impedance and the heart rate it measured.
public struct AmazfitScaleAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "amazfit-scale"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Amazfit Smart Scale",
            version: "1",
            summary: "Body mass (with impedance) and heart rate from the Amazfit Smart Scale's advertisements",
            matches: [.ble(BLEMatch(serviceDataUUIDs: [AmazfitScaleDecoder.serviceUUID], serviceDataLengths: [AmazfitScaleDecoder.length]))],
            produces: [.bodyMass, .heartRate],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Amazfit", name: "Smart Scale", offers: "weight, impedance, heart rate",
                             reads: [.bodyMass, .heartRate], note: "impedance as metadata", capture: "smart-scale"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: AmazfitScaleDecoder())
    }
}

/// The scale's frame (ble_monitor `amazfit.py`): 20 bytes of service data 0xFEE0; impedance
/// little-endian 0.1 ohm at 5, weight little-endian in 1/200 kg at 7, bytes 9–11 all zero while
/// the weight is settling, the heart rate at 12 (0: none).
public struct AmazfitScaleDecoder: AdvertisementReadingDecoder {
    public static let serviceUUID = BLEUUID(UInt16(0xFEE0))
    public static let length = 20

    public init() {}

    public var manufacturer: String? { "Amazfit" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard let data = advertisement.serviceData[Self.serviceUUID], data.count == Self.length else {
            return .nothing("no-scale-frame")
        }
        let raw = FrameBytes.le16(data, 7)
        if raw == 0 { return .loadRemoved }
        guard data[9] != 0 || data[10] != 0 || data[11] != 0 else { return .settling }
        let impedance = Double(FrameBytes.le16(data, 5)) / 10
        var values = [AdvertisedValue(.bodyMass, Double(raw) / 200, .kilogram,
                                      metadata: impedance > 0 ? [AdapterMetadataKey.impedanceOhm: .number(impedance)] : [:])]
        if data[12] != 0 { values.append(AdvertisedValue(.heartRate, Double(data[12]), .countPerMinute)) }
        return .values(values, identity: Array(data[5..<13]), model: "Smart Scale")
    }
}
