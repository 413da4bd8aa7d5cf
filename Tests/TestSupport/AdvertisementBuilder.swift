import BLEWire
import Foundation
import Transport

/// Why a test's advertisement could not be built.
public enum AdvertisementBuilderError: Error, Equatable, CustomStringConvertible {
    /// The address text is not `AA:BB:CC:DD:EE:FF`.
    case invalidAddress(String)

    public var description: String {
        switch self {
        case .invalidAddress(let text): "not a Bluetooth address: \"\(text)\""
        }
    }
}

/// Builds a legacy advertisement (ADV_IND, public address, -60 dBm) from its parts, encoding the
/// AD structures the way a device sends them: flags, complete local name, 16-bit service UUIDs,
/// 16-bit service data, manufacturer data.
public func makeAdvertisement(
    address: String,
    name: String? = nil,
    serviceData: [(uuid: UInt16, payload: [UInt8])] = [],
    serviceUUIDs: [UInt16] = [],
    manufacturer: (company: UInt16, payload: [UInt8])? = nil,
    time: Date = Date(timeIntervalSince1970: 1_700_000_000)
) throws(AdvertisementBuilderError) -> BLEAdvertisement {
    var data = ADStructure.flags(0x06)
    if let name { data += ADStructure.completeLocalName(name) }
    if !serviceUUIDs.isEmpty { data += ADStructure.serviceUUIDs16(serviceUUIDs) }
    for (uuid, payload) in serviceData { data += ADStructure.serviceData16(uuid, payload) }
    if let manufacturer { data += ADStructure.manufacturerData(company: manufacturer.company, manufacturer.payload) }
    guard let parsedAddress = BLEAddress(address) else { throw .invalidAddress(address) }
    return BLEAdvertisement(time: time, address: parsedAddress, addressType: .public, eventType: .advInd,
                            rssi: -60, data: data)
}
