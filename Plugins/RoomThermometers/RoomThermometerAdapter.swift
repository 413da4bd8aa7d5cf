import AdapterKit
import Foundation
import Transport

/// The built-in adapter for popular room thermometers' advertisements: Xiaomi/Qingping sensors
/// running the ATC1441 or PVVX custom firmware (service data 0x181A), Govee thermo-hygrometers and
/// Inkbird IBS-TH sensors. They measure the air, so every reading is ingestd's
/// `IngestQuantityTypeIdentifierAmbientTemperature`, never body temperature; humidity, battery
/// and voltage are not health data and are not read.
public struct RoomThermometerAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "room-thermometer"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Room thermometers (ATC/PVVX firmware, Govee, Inkbird)",
            version: "1",
            summary: "Ambient temperature from ATC/PVVX, Govee and Inkbird thermometers' advertisements",
            matches: [
                .ble(BLEMatch(serviceDataUUIDs: [RoomThermometerDecoder.environmentalSensing],
                              serviceDataLengths: [RoomThermometerDecoder.atc1441Length, RoomThermometerDecoder.pvvxLength])),
                .ble(BLEMatch(companyIDs: [RoomThermometerDecoder.goveeCompanyID])),
                .ble(BLEMatch(companyIDs: [RoomThermometerDecoder.goveeH510xCompanyID], namePattern: "^GVH51(0[0-5]|7[47])")),
                .ble(BLEMatch(namePattern: "^(sps|tps)$")),
            ],
            produces: [.ambientTemperature],
            how: "advertisements",
            models: [
                AdapterModel(maker: "Xiaomi", name: "LYWSD03MMC, MJWSD05MMC with ATC1441 or PVVX firmware",
                             offers: "temperature, humidity, battery", reads: [.ambientTemperature], capture: "atc-pvvx"),
                AdapterModel(maker: "Qingping", name: "CGG1, CGDK2 with ATC1441 or PVVX firmware",
                             offers: "temperature, humidity, battery", reads: [.ambientTemperature], capture: "atc-pvvx"),
                AdapterModel(maker: "Govee", name: "H5072, H5075, H5074", offers: "temperature, humidity, battery",
                             reads: [.ambientTemperature], capture: "govee"),
                AdapterModel(maker: "Govee", name: "H5100, H5101, H5102, H5104, H5105, H5174, H5177",
                             offers: "temperature, humidity, battery", reads: [.ambientTemperature], capture: "govee"),
                AdapterModel(maker: "Inkbird", name: "IBS-TH1, IBS-TH2, IBS-P01B", offers: "temperature, humidity, battery; an external probe",
                             reads: [.ambientTemperature], note: "the external probe's readings are not read", capture: "inkbird"),
            ])
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        AdvertisedReadingSession(device: device, context: context, decoder: RoomThermometerDecoder())
    }
}

/// The thermometers' frames (ble_monitor `atc.py`, `govee.py`, `inkbird.py`; theengs/decoder
/// `LYWSD03MMC_json.h`, `H5072_json.h`, `H5074_json.h`, `IBS_TH1_json.h`):
/// - ATC1441, 13 bytes of 0x181A service data: address, temperature big-endian signed 0.1 °C at 6.
/// - PVVX, 15 bytes: address little-endian, temperature little-endian signed 0.01 °C at 6.
/// - Govee H5072/H5075, company 0xEC88, 6 bytes: a 24-bit big-endian number at 1 (top bit: below
///   zero) whose thousands are 0.1 °C and whose rest is 0.1 % humidity. H5074, 7 bytes: temperature
///   little-endian signed 0.01 °C at 1. H510x/H517x, company 0x0001, the same 24-bit number at 2.
/// - Inkbird IBS-TH (named `sps` or `tps`): the first two bytes, where a company id would be, are
///   the temperature (little-endian signed 0.01 °C); byte 2 after them is 1 with an external probe.
public struct RoomThermometerDecoder: AdvertisementReadingDecoder {
    public static let environmentalSensing = BLEUUID(UInt16(0x181A))
    public static let atc1441Length = 13
    public static let pvvxLength = 15
    public static let goveeCompanyID: UInt16 = 0xEC88
    public static let goveeH510xCompanyID: UInt16 = 0x0001

    public init() {}

    public var manufacturer: String? { nil }

    /// The layouts this decoder reads, told apart by where the advertisement carries its bytes.
    private enum Frame {
        /// Service data 0x181A: the ATC1441 or PVVX firmware by its length.
        case environmentalSensing([UInt8])
        /// Manufacturer data 0xEC88: H5072/H5075 (6 bytes), H5074 (7).
        case govee([UInt8])
        /// Manufacturer data 0x0001 of a device named `GVH51…`.
        case goveeH510x([UInt8])
        /// An Inkbird named `sps` or `tps`: its first two bytes stand where a company id would.
        case inkbird(company: UInt16, rest: [UInt8])
    }

    private func frame(of advertisement: BLEAdvertisement) -> Frame? {
        if let data = advertisement.serviceData[Self.environmentalSensing] { return .environmentalSensing(data) }
        if let data = advertisement.manufacturerData[Self.goveeCompanyID] { return .govee(data) }
        if let name = advertisement.localName, name.hasPrefix("GVH51"), let data = advertisement.manufacturerData[Self.goveeH510xCompanyID] {
            return .goveeH510x(data)
        }
        if let name = advertisement.localName, name == "sps" || name == "tps", let (company, rest) = advertisement.manufacturerData.first {
            return .inkbird(company: company, rest: rest)
        }
        return nil
    }

    public func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading {
        switch frame(of: advertisement) {
        case .environmentalSensing(let data):
            switch data.count {
            case Self.atc1441Length:
                return celsius(Double(FrameBytes.sbe16(data, 6)) / 10, data, model: "ATC1441 firmware")
            case Self.pvvxLength:
                return celsius(Double(FrameBytes.sle16(data, 6)) / 100, data, model: "PVVX firmware")
            default:
                return .nothing("environmental-sensing-frame-not-read")
            }
        case .govee(let data):
            switch data.count {
            case 6: return celsius(goveeCombined(FrameBytes.be24(data, 1)), data, model: nil, maker: "Govee")
            case 7: return celsius(Double(FrameBytes.sle16(data, 1)) / 100, data, model: nil, maker: "Govee")
            default:
                throw AdvertisementFrameError(reason: "bad-length",
                                              detail: "a Govee frame has 6 or 7 bytes, got \(data.count): \(hexString(data))")
            }
        case .goveeH510x(let data):
            guard data.count >= 6 else { throw .short(data, needs: 6, what: "Govee H510x frame") }
            return celsius(goveeCombined(FrameBytes.be24(data, 2)), data, model: nil, maker: "Govee")
        case .inkbird(let company, let rest):
            guard rest.count == 7 else {
                throw AdvertisementFrameError(reason: "bad-length", detail: "an Inkbird frame has 9 bytes, got \(rest.count + 2)")
            }
            if rest[2] == 1 { return .nothing("external-probe-not-read") }
            let bytes = [UInt8(company & 0xFF), UInt8(company >> 8)] + rest
            return celsius(Double(FrameBytes.sle16(bytes, 0)) / 100, bytes, model: nil, maker: "Inkbird")
        case nil:
            return .nothing("no-thermometer-frame")
        }
    }

    /// The battery charge of the same frames (README: where each layout keeps it).
    public func batteryPercent(from advertisement: BLEAdvertisement) -> Int? {
        switch frame(of: advertisement) {
        case .environmentalSensing(let data) where data.count == Self.atc1441Length: Int(data[9])
        case .environmentalSensing(let data) where data.count == Self.pvvxLength: Int(data[12])
        case .govee(let data) where data.count == 6: Int(data[4])
        case .govee(let data) where data.count == 7: Int(data[5])
        case .goveeH510x(let data) where data.count >= 6: Int(data[5])
        case .inkbird(_, let rest) where rest.count == 7: Int(rest[5])
        default: nil
        }
    }

    /// Govee's combined number: thousands are tenths of a degree, the top bit says below zero.
    private func goveeCombined(_ number: Int) -> Double {
        let magnitude = number & 0x7F_FFFF
        let celsius = Double(magnitude / 1000) / 10
        return number & 0x80_0000 != 0 ? -celsius : celsius
    }

    private func celsius(_ value: Double, _ frame: [UInt8], model: String?, maker: String? = nil) -> AdvertisedReading {
        .values([AdvertisedValue(.ambientTemperature, value, .degreeCelsius)], identity: frame, model: model, manufacturer: maker)
    }
}
