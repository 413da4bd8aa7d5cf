import Transport

/// Builds AD structures (length, type, data) for advertising data.
public enum ADStructure {
    /// Flags (0x01), e.g. 0x06 LE General Discoverable + BR/EDR not supported.
    public static func flags(_ value: UInt8) -> [UInt8] { [2, 0x01, value] }

    /// Complete List of 16-bit Service UUIDs (0x03).
    public static func serviceUUIDs16(_ uuids: [UInt16]) -> [UInt8] {
        [UInt8(1 + 2 * uuids.count), 0x03] + uuids.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }

    /// Complete Local Name (0x09).
    public static func completeLocalName(_ name: String) -> [UInt8] {
        let bytes = Array(name.utf8)
        return [UInt8(1 + bytes.count), 0x09] + bytes
    }

    /// Service Data - 16-bit UUID (0x16): the UUID little-endian, then the payload.
    public static func serviceData16(_ uuid: UInt16, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(3 + payload.count), 0x16, UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + payload
    }

    /// Manufacturer Specific Data (0xFF): the company id little-endian, then the payload.
    public static func manufacturerData(company: UInt16, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(3 + payload.count), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + payload
    }
}

/// Builds HCI LE Meta event packets (with the 0x04 indicator) carrying advertising reports, as
/// a controller sends them.
public enum AdvertisingReportBuilder {
    /// One LE Advertising Report (subevent 0x02) with one report.
    /// - Parameters:
    ///   - eventType: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    ///   - addressType: 0 public, 1 random.
    ///   - rssi: dBm; 127 means unavailable.
    public static func legacy(eventType: UInt8 = 0x00, addressType: UInt8 = 0x00, address: BLEAddress,
                              data: [UInt8], rssi: Int8 = -60) -> [UInt8] {
        let parameters: [UInt8] = [0x02, 0x01, eventType, addressType] + address.littleEndianBytes
            + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return [0x04, 0x3E, UInt8(parameters.count)] + parameters
    }

    /// One LE Extended Advertising Report (subevent 0x0D) with one report.
    /// - Parameters:
    ///   - eventType: extended event type bits (0x13 = legacy ADV_IND; bits 5-6 data status).
    ///   - sid: advertising set id.
    public static func extended(eventType: UInt16 = 0x0013, addressType: UInt8 = 0x00, address: BLEAddress,
                                data: [UInt8], rssi: Int8 = -60, txPower: Int8 = 127, sid: UInt8 = 0xFF) -> [UInt8] {
        var parameters: [UInt8] = [0x0D, 0x01, UInt8(eventType & 0xFF), UInt8(eventType >> 8), addressType]
        parameters += address.littleEndianBytes
        parameters += [0x01, 0x00, sid, UInt8(bitPattern: txPower), UInt8(bitPattern: rssi), 0x00, 0x00]
        parameters += [0x00, 0, 0, 0, 0, 0, 0]
        parameters += [UInt8(data.count)] + data
        return [0x04, 0x3E, UInt8(parameters.count)] + parameters
    }
}
