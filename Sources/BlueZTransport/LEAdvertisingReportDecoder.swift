import Foundation
import Transport

/// A report that could not be decoded, with the offset inside the LE Meta event's parameters
/// (after the subevent byte) where decoding stopped.
public struct LEAdvertisingReportProblem: Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: String, Hashable, Sendable {
        /// The report's fixed fields or its data run past the end of the event.
        case truncated
        /// Extended advertising data ended with data status 2 (truncated by the controller), or
        /// fragments were dropped because too many advertisers had unfinished data at once.
        case incompleteData
    }

    public var subevent: UInt8
    public var reason: Reason
    public var offset: Int

    public var description: String {
        "LE subevent 0x\(String(subevent, radix: 16)): \(reason.rawValue) report at parameter offset \(offset)"
    }
}

/// Decodes LE Advertising Reports (subevent 0x02) and LE Extended Advertising Reports
/// (subevent 0x0D) into ``BLEAdvertisement`` values, reassembling extended advertising data
/// that arrives in several reports (data status 1 "more to come").
///
/// The AD structures themselves are decoded by ``BLEAdvertisement``.
public struct LEAdvertisingReportDecoder: Sendable {
    private struct FragmentKey: Hashable, Sendable {
        var address: BLEAddress
        var addressType: UInt8
        var sid: UInt8
    }

    private var fragments: [FragmentKey: [UInt8]] = [:]

    /// At most this many advertisers may have unfinished extended data at once.
    public static let maximumPendingAdvertisers = 64
    /// Reassembled extended data is cut at the spec's maximum advertising data length.
    public static let maximumDataLength = 1650

    public init() {}

    /// Decodes one LE Meta event's parameters (without the subevent byte). Other subevents give
    /// nothing. Reports decoded before a problem are kept.
    public mutating func decode(subevent: UInt8, parameters: [UInt8], time: Date)
        -> (advertisements: [BLEAdvertisement], problems: [LEAdvertisingReportProblem])
    {
        switch subevent {
        case 0x02: decodeLegacy(parameters, time: time)
        case 0x0D: decodeExtended(parameters, time: time)
        default: ([], [])
        }
    }

    private func decodeLegacy(_ p: [UInt8], time: Date)
        -> (advertisements: [BLEAdvertisement], problems: [LEAdvertisingReportProblem])
    {
        guard let count = p.first else { return ([], [.init(subevent: 0x02, reason: .truncated, offset: 0)]) }
        var result: [BLEAdvertisement] = []
        var offset = 1
        for _ in 0..<Int(count) {
            // event type, address type, address (6), data length, data, RSSI
            guard offset + 9 <= p.count, offset + 10 + Int(p[offset + 8]) <= p.count,
                  let address = BLEAddress(littleEndianBytes: p[(offset + 2)..<(offset + 8)])
            else { return (result, [.init(subevent: 0x02, reason: .truncated, offset: offset)]) }
            let length = Int(p[offset + 8])
            let rssi = Int8(bitPattern: p[offset + 9 + length])
            result.append(BLEAdvertisement(
                time: time, address: address, addressType: BLEAddressType(rawValue: p[offset + 1]),
                eventType: BLEAdvertisingEventType(legacyType: p[offset]), rssi: rssi == 127 ? nil : rssi,
                data: Array(p[(offset + 9)..<(offset + 9 + length)])))
            offset += 10 + length
        }
        return (result, [])
    }

    private mutating func decodeExtended(_ p: [UInt8], time: Date)
        -> (advertisements: [BLEAdvertisement], problems: [LEAdvertisingReportProblem])
    {
        guard let count = p.first else { return ([], [.init(subevent: 0x0D, reason: .truncated, offset: 0)]) }
        var result: [BLEAdvertisement] = []
        var problems: [LEAdvertisingReportProblem] = []
        var offset = 1
        for _ in 0..<Int(count) {
            // event type (2), address type, address (6), primary PHY, secondary PHY, SID, TX power,
            // RSSI, periodic interval (2), direct address type, direct address (6), length, data
            guard offset + 24 <= p.count, offset + 24 + Int(p[offset + 23]) <= p.count,
                  let address = BLEAddress(littleEndianBytes: p[(offset + 3)..<(offset + 9)])
            else {
                problems.append(.init(subevent: 0x0D, reason: .truncated, offset: offset))
                return (result, problems)
            }
            let eventType = UInt16(p[offset]) | UInt16(p[offset + 1]) << 8
            let addressType = p[offset + 2]
            let sid = p[offset + 11]
            let txPower = Int8(bitPattern: p[offset + 12])
            let rssi = Int8(bitPattern: p[offset + 13])
            let length = Int(p[offset + 23])
            let fragment = p[(offset + 24)..<(offset + 24 + length)]
            let reportOffset = offset
            offset += 24 + length

            let key = FragmentKey(address: address, addressType: addressType, sid: sid)
            var data = fragments.removeValue(forKey: key) ?? []
            data.append(contentsOf: fragment.prefix(max(0, Self.maximumDataLength - data.count)))
            let dataStatus = (eventType >> 5) & 0x03
            if dataStatus == 1 {
                if fragments.count >= Self.maximumPendingAdvertisers {
                    problems.append(.init(subevent: 0x0D, reason: .incompleteData, offset: reportOffset))
                    fragments.removeAll()
                }
                fragments[key] = data
                continue
            }
            if dataStatus == 2 {
                problems.append(.init(subevent: 0x0D, reason: .incompleteData, offset: reportOffset))
            }
            var advertisement = BLEAdvertisement(
                time: time, address: address, addressType: BLEAddressType(rawValue: addressType),
                eventType: BLEAdvertisingEventType(extendedEventType: eventType), rssi: rssi == 127 ? nil : rssi,
                data: data)
            if advertisement.txPower == nil && txPower != 127 { advertisement.txPower = txPower }
            result.append(advertisement)
        }
        return (result, problems)
    }
}
