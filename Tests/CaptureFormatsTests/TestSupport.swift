import BLEWire
import CaptureFormats
import Foundation
import TestSupport
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

/// HCI packets laid out as the Core specification defines them (packets without the H4 byte).
enum HCI {
    /// HCI Event packet (Vol 4 Part E 5.4.4): event code, parameter length, parameters.
    static func event(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        [code, UInt8(parameters.count)] + parameters
    }

    /// LE Meta event (Vol 4 Part E 7.7.65): event 0x3E, subevent code first.
    static func leMeta(_ subevent: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        event(0x3E, [subevent] + parameters)
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

    /// LE Connection Complete (7.7.65.1).
    static func connectionComplete(status: UInt8 = 0, handle: UInt16, role: UInt8 = 0, peerType: UInt8,
                                   peer: BLEAddress) -> [UInt8] {
        leMeta(0x01, [status] + le16(handle) + [role, peerType] + peer.littleEndianBytes
            + le16(0x0027) + le16(0) + le16(0x07D0) + [0x05])
    }

    /// Disconnection Complete (7.7.5).
    static func disconnectionComplete(handle: UInt16, reason: UInt8) -> [UInt8] {
        event(0x05, [0x00] + le16(handle) + [reason])
    }

    /// An L2CAP basic frame (Vol 3 Part A 3.1): length, channel id, payload.
    static func l2cap(channel: UInt16 = 0x0004, _ payload: [UInt8]) -> [UInt8] {
        le16(UInt16(payload.count)) + le16(channel) + payload
    }

    /// HCI ACL Data packets (Vol 4 Part E 5.4.2) carrying `frame`, cut after the given sizes;
    /// the first packet has packet-boundary flag 0b10 (first, flushable), the rest 0b01.
    static func acl(handle: UInt16, frame: [UInt8], fragmentSizes: [Int] = []) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var rest = frame[...]
        for size in fragmentSizes where !rest.isEmpty {
            pieces.append(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
        if !rest.isEmpty || pieces.isEmpty { pieces.append(Array(rest)) }
        return pieces.enumerated().map { index, piece in
            let flags: UInt16 = index == 0 ? 0b10 : 0b01
            return le16(handle | flags << 12) + le16(UInt16(piece.count)) + piece
        }
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
