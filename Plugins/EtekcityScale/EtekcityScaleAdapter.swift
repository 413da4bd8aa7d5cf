import AdapterKit
import Foundation
import HealthModel
import Transport

/// The built-in adapter for Etekcity scales advertising under company id 0x06D0 (1744): the Fit 8S
/// broadcasts its weight (and impedance); the ESF-551 and its siblings advertise only their model
/// and give their weight over a connection, which this adapter does not hold.
public struct EtekcityScaleAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "etekcity-scale"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Etekcity scales (company 0x06D0)",
            version: "1",
            summary: "Body mass (with impedance) from the Etekcity Fit 8S's advertisements",
            matches: [.ble(BLEMatch(companyIDs: [EtekcityAdvertisementDecoder.companyID]))],
            produces: [.bodyMass],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Etekcity", name: "Fit 8S", offers: "weight, impedance",
                             reads: [.bodyMass], note: "impedance as metadata", capture: "fit8s-weighings"),
                AdapterModel(maker: "Etekcity", name: "ESF-551", offers: "model id in advertisements; weight and impedance over GATT",
                             reads: [], note: "recognised; its weighing needs a connection", capture: "esf551-advertisement"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: EtekcityAdvertisementDecoder())
    }
}

/// The Etekcity-platform frame: header (its low nibble the layout generation, 0–2), the device's
/// address little-endian at 1–6, the model id big-endian at 7–8, then the model's payload. The
/// Fit 8S (model 0xC0A9) sends 20 bytes: weight in grams (24-bit little-endian) at 10, impedance
/// in ohms at 13 (0: not measured), 0x01 at 15 when the weight is final, the display unit at 16.
public struct EtekcityAdvertisementDecoder: AdvertisementReadingDecoder {
    public static let companyID: UInt16 = 0x06D0
    static let fit8SModel = 0xC0A9
    static let fit8SLength = 20
    /// The ESF-551's model ids.
    static let esf551Models: Set<Int> = [1, 2]

    public init() {}

    public var manufacturer: String? { "Etekcity" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard let data = advertisement.manufacturerData[Self.companyID] else { return .nothing("no-etekcity-frame") }
        guard data.count >= 9 else { throw .short(data, needs: 9, what: "Etekcity frame") }
        guard data[0] & 0x0F <= 2 else {
            throw AdvertisementFrameError(reason: "unknown-layout",
                                          detail: String(format: "header 0x%02x names layout %d, not 0-2: ", data[0], data[0] & 0x0F) + hexString(data))
        }
        let model = FrameBytes.be16(data, 7)
        if Self.esf551Models.contains(model) { return .nothing("esf-551-weighs-over-gatt") }
        guard model == Self.fit8SModel else { return .nothing(String(format: "model-0x%04x-not-read", model)) }
        guard data.count == Self.fit8SLength else {
            throw AdvertisementFrameError(reason: "bad-length", detail: "a Fit 8S frame has 20 bytes, got \(data.count): \(hexString(data))")
        }
        let grams = FrameBytes.le24(data, 10)
        if grams == 0 { return .loadRemoved }
        guard data[15] == 0x01 else { return .settling }
        let ohms = FrameBytes.le16(data, 13)
        let metadata: [String: MetadataValue] = ohms == 0 ? [:] : [AdapterMetadataKey.impedanceOhm: .number(Double(ohms))]
        return .values([AdvertisedValue(.bodyMass, Double(grams), .gram, metadata: metadata)],
                       identity: Array(data[10..<15]), model: "Fit 8S")
    }
}
