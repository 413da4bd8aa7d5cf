import Transport

/// Keeps one device's reports in HCI advertising report events (what `ingestd capture --ble`
/// records of a busy room).
public enum AdvertisingReportFilter {
    /// What became of one event.
    public enum Outcome: Equatable, Sendable {
        /// An advertising report event rebuilt with the kept reports (event code, length, parameters).
        case advertising(event: [UInt8], kept: Int, dropped: Int)
        /// Another event, to be written as it is.
        case other
    }

    /// Classifies an HCI event (without the indicator byte). Nil: leave the event out — a
    /// connection-related LE Meta event, or a malformed advertising report.
    public static func filter(event: [UInt8], keeping target: BLEAddress?) -> Outcome? {
        guard event.count >= 2 else { return .other }
        guard event[0] == HCIEventBuilder.leMetaCode else { return .other }
        guard event.count >= 4 else { return nil }
        let subevent = event[2]
        let parameters = Array(event.dropFirst(2))
        let reportLength: ([UInt8], Int) -> Int?
        switch subevent {
        case 0x02:  // LE Advertising Report: type, address type, address, length, data, RSSI
            reportLength = { bytes, offset in offset + 9 <= bytes.count ? 10 + Int(bytes[offset + 8]) : nil }
        case 0x0B:  // LE Directed Advertising Report: fixed 16 bytes
            reportLength = { _, _ in 16 }
        case 0x0D:  // LE Extended Advertising Report: 24 bytes, then the data
            reportLength = { bytes, offset in offset + 24 <= bytes.count ? 24 + Int(bytes[offset + 23]) : nil }
        default:
            return nil
        }
        guard parameters.count >= 2 else { return nil }
        let count = Int(parameters[1])
        var offset = 2
        var kept: [UInt8] = []
        var keptCount = 0
        for _ in 0..<count {
            guard let length = reportLength(parameters, offset), offset + length <= parameters.count else { return nil }
            let addressOffset = offset + (subevent == 0x0D ? 3 : 2)
            let address = BLEAddress(littleEndianBytes: parameters[addressOffset..<(addressOffset + 6)])
            if target == nil || address == target {
                kept += parameters[offset..<(offset + length)]
                keptCount += 1
            }
            offset += length
        }
        return .advertising(event: HCIEventBuilder.leMeta(subevent, [UInt8(keptCount)] + kept), kept: keptCount,
                            dropped: count - keptCount)
    }
}
