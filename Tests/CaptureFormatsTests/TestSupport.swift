import BLEWire
import CaptureFormats
import Foundation
import Transport

/// The real captures copied into `Captures/` (see `Captures/ORIGIN`).
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Captures")

    static let dsd6 = path("dsd6_btsnoop_hci.log")
    static let dsd6ScanOnly = path("dsd6_btsnoop_hci.log.63758104325217312")
    static let hidrate = path("hidrate-spark_wban-python_btsnoop_hci.log")
    static let airbily = path("airbily_veryfitpro_bluethoot_logs.pcapng")

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// All records of a reader.
func readAll(_ reader: any CaptureReader) throws -> [CaptureRecord] {
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

/// HCI packets laid out as the Core specification defines them (packets without the H4 byte),
/// built by BLEWire; the advertising report rows are the tests' own.
enum HCI {
    static func event(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] { HCIEventBuilder.event(code, parameters) }

    static func leMeta(_ subevent: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        HCIEventBuilder.leMeta(subevent, parameters)
    }

    /// One row of an LE Advertising Report (7.7.65.2).
    static func legacyReport(type: UInt8, addressType: UInt8, address: BLEAddress, data: [UInt8], rssi: Int8)
        -> [UInt8] {
        [type, addressType] + address.littleEndianBytes + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
    }

    /// One report of an LE Extended Advertising Report (7.7.65.13).
    static func extendedReport(eventType: UInt16, addressType: UInt8, address: BLEAddress, sid: UInt8 = 1,
                               txPower: Int8 = 127, rssi: Int8, data: [UInt8]) -> [UInt8] {
        le16(eventType) + [addressType] + address.littleEndianBytes
            + [0x01, 0x00, sid, UInt8(bitPattern: txPower), UInt8(bitPattern: rssi)]
            + [0x00, 0x00]  // periodic advertising interval
            + [0x00] + [UInt8](repeating: 0, count: 6)  // direct address type and address
            + [UInt8(data.count)] + data
    }

    /// LE Connection Complete (7.7.65.1) with a 48.75 ms interval and a 20 s supervision timeout.
    static func connectionComplete(status: UInt8 = 0, handle: UInt16, role: UInt8 = 0, peerType: UInt8,
                                   peer: BLEAddress) -> [UInt8] {
        HCIEventBuilder.leConnectionComplete(status: status, handle: handle, role: role, peerAddressType: peerType,
                                             peer: peer, interval: 0x0027, supervisionTimeout: 0x07D0, clockAccuracy: 0x05)
    }

    static func disconnectionComplete(handle: UInt16, reason: UInt8) -> [UInt8] {
        HCIEventBuilder.disconnectionComplete(handle: handle, reason: reason)
    }

    static func l2cap(channel: UInt16 = ACLPacketBuilder.attributeChannel, _ payload: [UInt8]) -> [UInt8] {
        ACLPacketBuilder.l2cap(channel: channel, payload)
    }

    /// ACL packets carrying `frame`, cut after the given sizes, as a controller delivers them.
    static func acl(handle: UInt16, frame: [UInt8], fragmentSizes: [Int] = []) -> [[UInt8]] {
        ACLPacketBuilder.packets(handle: handle, frame: frame, fragmentSizes: fragmentSizes)
    }
}

/// Builds a btsnoop capture with ``BTSnoopWriter`` and decodes it again, as a replay would.
struct SyntheticCapture {
    let writer = BTSnoopWriter()
    var time: Int64 = 1_700_000_000_000_000

    mutating func add(_ type: HCIPacketType, _ direction: CaptureDirection, _ packet: [UInt8]) throws {
        try writer.write(type: type, direction: direction, timestamp: time, packet: packet)
        time += 1_000
    }

    mutating func event(_ packet: [UInt8]) throws { try add(.event, .received, packet) }

    mutating func acl(_ direction: CaptureDirection, handle: UInt16, att: [UInt8], fragmentSizes: [Int] = [])
        throws {
        for packet in HCI.acl(handle: handle, frame: HCI.l2cap(att), fragmentSizes: fragmentSizes) {
            try add(.acl, direction, packet)
        }
    }

    var bytes: [UInt8] { writer.bytes }

    func decode() throws -> DecodedTrace {
        try DecodedTrace(reading: BTSnoopReader(bytes: writer.bytes))
    }
}

extension TransportEvent {
    var advertisement: BLEAdvertisement? {
        if case .advertisement(let value) = self { value } else { nil }
    }

    var gattValue: GATTValue? {
        if case .gattValue(let value) = self { value } else { nil }
    }

    var connection: BLEConnection? {
        if case .connected(let value) = self { value } else { nil }
    }

    var disconnection: BLEDisconnection? {
        if case .disconnected(let value) = self { value } else { nil }
    }

    var subscription: GATTSubscription? {
        if case .subscriptionChanged(let value) = self { value } else { nil }
    }
}
