import AdapterKit
import Foundation
import Transport

/// The built-in adapter for Laica smart scales' advertised weighings (manufacturer data whose first
/// bytes read as company id 0xA0AC).
public struct LaicaScaleAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "laica-scale"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Laica smart scales (advertised weight)",
            version: "1",
            summary: "Body mass from Laica smart scales' advertisements",
            matches: [.ble(BLEMatch(companyIDs: [LaicaScaleDecoder.companyID]))],
            produces: [.bodyMass],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Laica", name: "Smart Scale (PS7002 and kin)", offers: "weight; impedance in separate frames",
                             reads: [.bodyMass], note: "impedance frames not read", capture: "laica-weighing"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: LaicaScaleDecoder())
    }
}

/// Laica's frame (ble_monitor `laica.py`): 12 bytes after the company id bytes `AC A0`, every byte
/// XORed with 0xA0; the scale's address at 0–5; byte 10 says what the frame holds: 0x0D a weight,
/// the low 18 bits of bytes 6–9 (big-endian, after the XOR) in grams, which the scale shows
/// rounded to 0.1 kg; 0x06 an impedance.
public struct LaicaScaleDecoder: AdvertisementReadingDecoder {
    public static let companyID: UInt16 = 0xA0AC
    static let length = 12

    public init() {}

    public var manufacturer: String? { "Laica" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard let data = advertisement.manufacturerData[Self.companyID] else { return .nothing("no-laica-frame") }
        guard data.count == Self.length else {
            throw AdvertisementFrameError(reason: "bad-length", detail: "a Laica frame has 12 bytes, got \(data.count): \(hexString(data))")
        }
        switch data[10] {
        case 0x0D:
            let plain = data[6..<10].map { $0 ^ 0xA0 }
            let grams = (Int(plain[0]) << 24 | Int(plain[1]) << 16 | Int(plain[2]) << 8 | Int(plain[3])) & 0x3FFFF
            if grams == 0 { return .loadRemoved }
            let tenths = (Double(grams) / 100).rounded()
            return .values([AdvertisedValue(.bodyMass, tenths / 10, .kilogram)], identity: Array(data[6..<11]))
        case 0x06:
            return .nothing("impedance-frame-not-read")
        default:
            return .nothing(String(format: "frame-kind-0x%02x-not-read", data[10]))
        }
    }
}
