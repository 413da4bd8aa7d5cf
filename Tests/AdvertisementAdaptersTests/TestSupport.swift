import AdapterKit
import Foundation
import HealthModel
import Testing
import Transport

/// Builds a legacy advertisement from its parts, encoding the AD structures the way a device
/// would send them (flags, complete local name, 16-bit service data, manufacturer data).
func makeAdvertisement(
    address: String,
    name: String? = nil,
    serviceData: [(uuid: UInt16, payload: [UInt8])] = [],
    serviceUUIDs: [UInt16] = [],
    manufacturer: (company: UInt16, payload: [UInt8])? = nil,
    time: Date = Date(timeIntervalSince1970: 1_700_000_000)
) throws -> BLEAdvertisement {
    var data: [UInt8] = [0x02, 0x01, 0x06]
    if let name {
        let utf8 = Array(name.utf8)
        data += [UInt8(utf8.count + 1), 0x09] + utf8
    }
    if !serviceUUIDs.isEmpty {
        data += [UInt8(serviceUUIDs.count * 2 + 1), 0x03]
        for uuid in serviceUUIDs { data += [UInt8(uuid & 0xFF), UInt8(uuid >> 8)] }
    }
    for (uuid, payload) in serviceData {
        data += [UInt8(payload.count + 3), 0x16, UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + payload
    }
    if let manufacturer {
        data += [UInt8(manufacturer.payload.count + 3), 0xFF,
                 UInt8(manufacturer.company & 0xFF), UInt8(manufacturer.company >> 8)] + manufacturer.payload
    }
    let parsedAddress = try #require(BLEAddress(address))
    return BLEAdvertisement(time: time, address: parsedAddress, addressType: .public, eventType: .advInd,
                            rssi: -60, data: data)
}

/// Parses `"22 9e 43"` into bytes.
func bytes(_ hex: String) throws -> [UInt8] {
    try hex.split(separator: " ").map { try #require(UInt8($0, radix: 16), "bad hex byte \($0)") }
}

/// The quantity samples an output holds, in order.
func samples(_ output: AdapterOutput) -> [QuantitySample] {
    output.records.flatMap(\.samples)
}

/// An instant given in UTC, for comparing sample times.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) throws -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
    return try #require(calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)))
}
