import AdapterKit
import Foundation
import Transport

/// The built-in adapter for the weight the Eufy C1 (T9146) and P1 (T9147) advertise in an 18-byte
/// frame. The P2 family's advertisements (a 19-byte frame under company id 0xFF48, read by
/// ``EufyAdvertisementDecoder`` too) are `eufy-p2-scale`'s, which also connects to them: one
/// adapter, so that an advertised and a connected weighing are one sample.
public struct EufyScaleAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "eufy-scale"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Eufy C1 / P1 smart scales (advertised weight)",
            version: "2",
            summary: "Body mass from Eufy C1 and P1 smart scales' advertisements",
            matches: [.ble(BLEMatch(namePattern: "^eufy T914[67]"))],
            produces: [.bodyMass],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Eufy", name: "Smart Scale C1 (T9146)", offers: "weight", reads: [.bodyMass],
                             capture: "c1-weighing"),
                AdapterModel(maker: "Eufy", name: "Smart Scale P1 (T9147)", offers: "weight", reads: [.bodyMass],
                             capture: "p1-weighing"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: EufyAdvertisementDecoder())
    }
}

/// Eufy's advertised weighings (bdr99/eufylife-ble-client, KristianP26/ble-scale-sync):
/// - P2 / P2 Pro, 19 bytes under 0xFF48: the scale's address at 0–5, `CF` at 6, heart rate at 7
///   (valid when the top two bits of byte 8 are both set, 0 meaning none), weight at 9–10
///   (little-endian, 0.01 kg), 0x00 at 15 when final.
/// - C1 / P1, 18 bytes: `CF` at 4, then an 11-byte frame (4–14) whose last byte is the XOR of the
///   others: weight at 7–8 (little-endian, 0.01 kg), at 13 0x00 final, 0x02 over the limit.
public struct EufyAdvertisementDecoder: AdvertisementReadingDecoder {
    public static let p2CompanyID: UInt16 = 0xFF48

    public init() {}

    public var manufacturer: String? { "Eufy" }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        if let data = advertisement.manufacturerData[Self.p2CompanyID], data.count >= 7, data[6] == 0xCF {
            return try p2Reading(data, name: advertisement.localName)
        }
        for (_, data) in advertisement.manufacturerData.sorted(by: { $0.key < $1.key }) where data.count >= 5 && data[4] == 0xCF {
            return try c1Reading(data)
        }
        return .nothing("no-eufy-weight-frame")
    }

    private func p2Reading(_ data: [UInt8], name: String?) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard data.count == 19 else {
            throw AdvertisementFrameError(reason: "bad-length", detail: "a P2 frame has 19 bytes, got \(data.count): \(hexString(data))")
        }
        let raw = FrameBytes.le16(data, 9)
        if raw == 0 { return .loadRemoved }
        guard data[15] == 0x00 else { return .settling }
        var values = [AdvertisedValue(.bodyMass, Double(raw) / 100, .kilogram)]
        let hasHeartRate = data[8] >> 6 == 0b11 && data[7] != 0
        if hasHeartRate { values.append(AdvertisedValue(.heartRate, Double(data[7]), .countPerMinute)) }
        return .values(values, identity: [data[9], data[10], hasHeartRate ? data[7] : 0],
                       model: hasHeartRate ? "Smart Scale P2 Pro" : nil)
    }

    private func c1Reading(_ data: [UInt8]) throws(AdvertisementFrameError) -> AdvertisedReading {
        guard data.count == 18 else {
            throw AdvertisementFrameError(reason: "bad-length", detail: "a C1/P1 frame has 18 bytes, got \(data.count): \(hexString(data))")
        }
        let frame = Array(data[4..<15])
        let checksum = frame.dropLast().reduce(0, ^)
        guard checksum == frame[10] else {
            throw AdvertisementFrameError(reason: "bad-checksum",
                                          detail: String(format: "XOR of bytes 4-13 is 0x%02x, byte 14 says 0x%02x: ", checksum, frame[10]) + hexString(data))
        }
        let raw = FrameBytes.le16(frame, 3)
        if raw == 0 { return .loadRemoved }
        switch frame[9] {
        case 0x00:
            return .values([AdvertisedValue(.bodyMass, Double(raw) / 100, .kilogram)], identity: [frame[3], frame[4]])
        case 0x02:
            throw AdvertisementFrameError(reason: "over-limit", detail: "the scale says its weight limit is exceeded: \(hexString(data))")
        default:
            return .settling
        }
    }
}
