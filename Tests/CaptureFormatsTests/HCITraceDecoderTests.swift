import BLEWire
import CaptureFormats
import Foundation
import TestSupport
import Testing
import Transport

/// Real captures: counts from Captures/captures.md, each re-checked by Captures/count_check.py.
@Suite struct HCITraceDecoderCaptureTests {
    @Test func dsd6Session() throws {
        let trace = try DecodedTrace(path: Fixture.dsd6)
        #expect(trace.statistics.records == 571)
        #expect(trace.statistics.malformed.isEmpty)
        #expect(trace.warnings.isEmpty)

        let advertisements = trace.events.compactMap(\.advertisement)
        #expect(advertisements.count == 12)
        #expect(trace.statistics.advertisements == 12)
        // First report: 04 3e 1d 02 01 00 01 f5 d1 1d 46 22 40 11 <flags, tx power, Apple data> a9
        let first = try #require(advertisements.first)
        #expect(first.address.description == "40:22:46:1D:D1:F5")
        #expect(first.addressType == .random)
        #expect(first.eventType == .advInd)
        #expect(first.rssi == -87)
        #expect(first.flags == 0x1A)
        #expect(first.txPower == 12)
        #expect(first.manufacturerData == [0x004C: hex("10 05 06 18 77 87 9d")])
        #expect(first.time == Date(microsecondsSince1970: 1_589_754_369_232_724))
        #expect(advertisements.filter { $0.localName == "DS-D6" }.count == 1)

        let connection = try #require(trace.events.compactMap(\.connection).first)
        #expect(trace.statistics.connections == 1)
        #expect(connection.handle == 0x0002)
        #expect(connection.peerAddress.description == "F9:E5:10:60:E8:60")
        #expect(connection.peerAddressType == .random)
        #expect(connection.role == .central)

        let notifications = trace.events.compactMap(\.gattValue).filter { $0.kind == .notification }
        #expect(notifications.count == 28)
        #expect(trace.statistics.notifications == 28)
        #expect(notifications.allSatisfy {
            $0.handle == 0x000B && $0.connection == 2 && $0.peerAddress == connection.peerAddress
                && $0.serviceUUID == BLEUUID(0x190A) && $0.characteristicUUID == BLEUUID(0x0002)
        })
        #expect(notifications.first?.value == Array("AT+TOPACE:0\r\n".utf8))
        #expect(notifications.contains { $0.value == Array("AT+BATT:9\r\n".utf8) })
        #expect(notifications.last?.value == Array("BT+VER:100.016.051\r\n".utf8))

        // CCCD write `0c 00 <- 01 00` found through Find Information.
        let subscriptions = trace.events.compactMap(\.subscription)
        #expect(subscriptions.count == 1)
        #expect(subscriptions.first?.descriptorHandle == 0x000C)
        #expect(subscriptions.first?.characteristicHandle == 0x000B)
        #expect(subscriptions.first?.characteristicUUID == BLEUUID(0x0002))
        #expect(subscriptions.first?.notificationsEnabled == true)
        #expect(subscriptions.first?.indicationsEnabled == false)

        let writes = trace.events.compactMap(\.gattValue).filter { $0.kind == .writeWithoutResponse }
        #expect(writes.count == 29)
        #expect(writes.allSatisfy { $0.characteristicUUID == BLEUUID(0x0001) && $0.serviceUUID == BLEUUID(0x190A) })

        let disconnection = try #require(trace.events.compactMap(\.disconnection).first)
        #expect(disconnection.handle == 2 && disconnection.reason == 0x16)
        #expect(disconnection.peerAddress == connection.peerAddress)
    }

    @Test func dsd6ScanOnly() throws {
        let trace = try DecodedTrace(path: Fixture.dsd6ScanOnly)
        #expect(trace.statistics.records == 470)
        let advertisements = trace.events.compactMap(\.advertisement)
        #expect(advertisements.count == 145)
        #expect(trace.events.count == 145)
        var byType: [String: Int] = [:]
        for advertisement in advertisements { byType[advertisement.eventType.description, default: 0] += 1 }
        #expect(byType == ["ADV_IND": 51, "SCAN_RSP": 48, "ADV_NONCONN_IND": 26, "ADV_SCAN_IND": 20])
        #expect(advertisements.filter { $0.localName == "MI Band 2" }.count == 3)
        #expect(advertisements.filter { $0.localName == "Mi Smart Band 4" }.count == 1)
        #expect(advertisements.filter { $0.manufacturerData[0x0157] != nil }.count == 4)
        #expect(advertisements.filter { $0.serviceData[BLEUUID(0xFE9F)] != nil }.count == 20)
        #expect(advertisements.filter { $0.serviceData[BLEUUID(0xFEB8)] != nil }.count == 6)
        #expect(trace.statistics.connections == 0 && trace.statistics.malformed.isEmpty)
    }

    @Test func hidrateSession() throws {
        let trace = try DecodedTrace(path: Fixture.hidrate)
        #expect(trace.statistics.records == 3_046)
        // Two ADV_IND reports (at 1580483971849585 and 1580484024051804 µs) carry data whose first
        // AD length (0x20) exceeds the 25 data bytes; count_check.py's overrun scan finds the same two.
        #expect(trace.statistics.malformed == [.advertisingDataMalformed: 2])
        let advertisements = trace.events.compactMap(\.advertisement)
        #expect(advertisements.count == 2_565)
        #expect(advertisements.filter { $0.eventType == .advNonconnInd && $0.manufacturerData[0x0006] != nil }.count
            == 2_512)
        #expect(advertisements.filter { $0.eventType == .advInd }.count == 44)
        #expect(advertisements.filter { $0.eventType == .scanResponse }.count == 9)
        #expect(advertisements.filter { $0.localName == "h2o4152D" }.count == 5)

        #expect(trace.events.compactMap(\.connection).map(\.handle) == [2, 3])
        #expect(trace.events.compactMap(\.disconnection).map(\.handle) == [2])

        // 21 notifications; the 15 on the second connection (handle 3) come without a new
        // discovery and are mapped through the table learnt on the first.
        let notifications = trace.events.compactMap(\.gattValue).filter { $0.kind == .notification }
        #expect(notifications.count == 21)
        #expect(notifications.filter { $0.connection == 3 }.count == 15)
        let first = try #require(BLEUUID("016E11B1-6C8A-4074-9E5A-076053F93784"))
        let firstService = try #require(BLEUUID("45855422-6565-4CD7-A2A9-FE8AF41B85E8"))
        let second = try #require(BLEUUID("E3578B0D-CAA7-46D6-B7C2-7331C08DE044"))
        let secondService = try #require(BLEUUID("593F756E-FAFC-49BA-8695-B39CA851B00B"))
        let on17 = notifications.filter { $0.handle == 0x0017 }
        let on1E = notifications.filter { $0.handle == 0x001E }
        #expect(on17.count == 11 && on1E.count == 10)
        #expect(on17.allSatisfy { $0.characteristicUUID == first && $0.serviceUUID == firstService })
        #expect(on1E.allSatisfy { $0.characteristicUUID == second && $0.serviceUUID == secondService })

        // Read Request 0x000E -> Read Response 0x64: Battery Level (0x2A19) in Battery Service (0x180F).
        let reads = trace.events.compactMap(\.gattValue).filter { $0.kind == .read }
        #expect(reads.count == 8)
        let battery = reads.filter { $0.characteristicUUID == BLEUUID(0x2A19) }
        #expect(battery.map(\.value) == [[0x64], [0x64]])
        #expect(battery.allSatisfy { $0.serviceUUID == BLEUUID(0x180F) && $0.handle == 0x000E })
        #expect(reads.filter { $0.characteristicUUID == BLEUUID(0x2A26) }.map(\.value)
            == [Array("32.37".utf8), Array("32.37".utf8)])

        let subscriptions = trace.events.compactMap(\.subscription)
        #expect(subscriptions.map(\.descriptorHandle) == [0x0018, 0x001F, 0x0018, 0x001F])
        #expect(subscriptions.map(\.characteristicUUID) == [first, second, first, second])
        #expect(trace.statistics.writes == 35)
    }

    @Test func airbilyPcapng() throws {
        let trace = try DecodedTrace(path: Fixture.airbily)
        #expect(trace.statistics.records == 810)
        #expect(trace.statistics.malformed.isEmpty)
        let advertisements = trace.events.compactMap(\.advertisement)
        #expect(advertisements.count == 5)
        #expect(advertisements.filter { $0.localName == "YG-SW01" }.count == 1)
        #expect(trace.events.compactMap(\.connection).map(\.peerAddress.description) == ["E7:40:B8:61:56:5E"])
        #expect(trace.statistics.disconnections == 1)
        let notifications = trace.events.compactMap(\.gattValue).filter { $0.kind == .notification }
        #expect(notifications.count == 277)
        #expect(notifications.filter { $0.handle == 0x0012 }.count == 16)
        #expect(notifications.filter { $0.handle == 0x0015 }.count == 261)
    }
}

/// Synthetic traces written with BTSnoopWriter from packets laid out per the Core
/// specification: LE Meta events (Vol 4 Part E 7.7.65), Disconnection Complete (7.7.5),
/// ACL data (Vol 4 Part E 5.4.2), L2CAP basic frames (Vol 3 Part A 3.1), ATT PDUs (Vol 3 Part F 3.4).
@Suite struct HCITraceDecoderSyntheticTests {
    let thermometer = BLEAddress("C8:47:8C:00:11:22")!
    /// Temperature Measurement 37.60 °C, 2012-12-05 11:50:27, finger (research/ble-protocols.md,
    /// from the Nordic Android-BLE-Common-Library tests).
    let temperature = hex("06 b0 0e 00 fe dc 07 0c 05 0b 32 1b 04")

    /// Connection, then discovery of a Health Thermometer service (0x1809, handles 1-5) with
    /// Temperature Measurement (0x2A1C, indicate, value handle 3, CCCD 4), then the CCCD write.
    func discovery(_ capture: inout SyntheticCapture) throws {
        try capture.event(HCI.connectionComplete(handle: 0x0040, peerType: 0, peer: thermometer))
        try capture.acl(.sent, handle: 0x40, att: hex("10 01 00 ff ff 00 28"))            // Read By Group Type
        try capture.acl(.received, handle: 0x40, att: hex("11 06 01 00 05 00 09 18"))     // 0x1809, 1-5
        try capture.acl(.sent, handle: 0x40, att: hex("08 01 00 05 00 03 28"))            // Read By Type 0x2803
        try capture.acl(.received, handle: 0x40, att: hex("09 07 02 00 20 03 00 1c 2a"))  // indicate, 3, 2A1C
        try capture.acl(.sent, handle: 0x40, att: hex("04 04 00 05 00"))                  // Find Information
        try capture.acl(.received, handle: 0x40, att: hex("05 01 04 00 02 29"))           // 4: 0x2902
        try capture.acl(.sent, handle: 0x40, att: hex("12 04 00 02 00"))                  // enable indications
        try capture.acl(.received, handle: 0x40, att: hex("13"))
    }

    @Test func indicationAfterDiscoveryCarriesItsUUIDs() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        try capture.acl(.received, handle: 0x40, att: hex("1d 03 00") + temperature)
        try capture.acl(.sent, handle: 0x40, att: hex("1e"))
        try capture.event(HCI.disconnectionComplete(handle: 0x40, reason: 0x13))
        let trace = try capture.decode()
        let subscription = try #require(trace.events.compactMap(\.subscription).first)
        #expect(subscription.characteristicUUID == BLEUUID(0x2A1C))
        #expect(subscription.serviceUUID == BLEUUID(0x1809))
        #expect(subscription.indicationsEnabled && !subscription.notificationsEnabled)
        let values = trace.events.compactMap(\.gattValue)
        #expect(values == [GATTValue(
            time: Date(microsecondsSince1970: 1_700_000_000_000_000 + 9_000), connection: 0x40,
            peerAddress: thermometer, serviceUUID: BLEUUID(0x1809), characteristicUUID: BLEUUID(0x2A1C),
            handle: 3, value: temperature, kind: .indication)])
        #expect(trace.statistics.indications == 1)
        #expect(trace.statistics.malformed.isEmpty)
        #expect(trace.events.last == .disconnected(BLEDisconnection(
            time: Date(microsecondsSince1970: 1_700_000_000_000_000 + 11_000), handle: 0x40,
            peerAddress: thermometer, reason: 0x13)))
    }

    @Test(arguments: [[Int](), [5], [2], [7, 4], [1, 1, 1], [4, 6, 3]])
    func fragmentedIndicationGivesTheSameEvent(fragmentSizes: [Int]) throws {
        var whole = SyntheticCapture()
        try discovery(&whole)
        try whole.acl(.received, handle: 0x40, att: hex("1d 03 00") + temperature)
        var fragmented = SyntheticCapture()
        try discovery(&fragmented)
        // The L2CAP frame (4-byte header + 16-byte PDU) cut into ACL fragments of these sizes.
        try fragmented.acl(.received, handle: 0x40, att: hex("1d 03 00") + temperature, fragmentSizes: fragmentSizes)
        let expected = try whole.decode().events.compactMap(\.gattValue)
        let actual = try fragmented.decode()
        #expect(expected.count == 1)
        #expect(actual.events.compactMap(\.gattValue).map(\.value) == expected.map(\.value))
        #expect(actual.events.compactMap(\.gattValue).map(\.characteristicUUID) == [BLEUUID(0x2A1C)])
        #expect(actual.statistics.malformed.isEmpty)
    }

    @Test func fragmentsOfBothDirectionsReassembleSeparately() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        let outgoing = HCI.acl(handle: 0x40, frame: HCI.l2cap(hex("52 03 00 01 02 03 04 05 06")), fragmentSizes: [6])
        let incoming = HCI.acl(handle: 0x40, frame: HCI.l2cap(hex("1d 03 00") + temperature), fragmentSizes: [6])
        try capture.add(.acl, .sent, outgoing[0])
        try capture.add(.acl, .received, incoming[0])
        try capture.add(.acl, .sent, outgoing[1])
        try capture.add(.acl, .received, incoming[1])
        let trace = try capture.decode()
        let values = trace.events.compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.writeWithoutResponse, .indication])
        #expect(values.map(\.value) == [hex("01 02 03 04 05 06"), temperature])
        #expect(trace.statistics.malformed.isEmpty)
    }

    /// A long write: Prepare Write Requests at consecutive offsets, then Execute Write, give one
    /// write of the joined value; a cancelled one (flags 0) and one with a gap in its offsets give none.
    @Test func preparedWritesBecomeOneWriteWhenExecuted() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        let long = Array(0..<40).map { UInt8($0) }
        try capture.acl(.sent, handle: 0x40, att: hex("16 03 00 00 00") + Array(long[0..<18]))
        try capture.acl(.received, handle: 0x40, att: hex("17 03 00 00 00") + Array(long[0..<18]))
        try capture.acl(.sent, handle: 0x40, att: hex("16 03 00 12 00") + Array(long[18..<36]))
        try capture.acl(.received, handle: 0x40, att: hex("17 03 00 12 00") + Array(long[18..<36]))
        try capture.acl(.sent, handle: 0x40, att: hex("16 03 00 24 00") + Array(long[36...]))
        try capture.acl(.received, handle: 0x40, att: hex("17 03 00 24 00") + Array(long[36...]))
        try capture.acl(.sent, handle: 0x40, att: hex("18 01"))
        try capture.acl(.received, handle: 0x40, att: hex("19"))
        // Cancelled.
        try capture.acl(.sent, handle: 0x40, att: hex("16 03 00 00 00 aa bb"))
        try capture.acl(.sent, handle: 0x40, att: hex("18 00"))
        // A gap: offset 5 after 2 bytes.
        try capture.acl(.sent, handle: 0x40, att: hex("16 03 00 00 00 aa bb"))
        try capture.acl(.sent, handle: 0x40, att: hex("16 03 00 05 00 cc"))
        try capture.acl(.sent, handle: 0x40, att: hex("18 01"))
        let trace = try capture.decode()
        let values = trace.events.compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.write])
        #expect(values.first?.value == long)
        #expect(values.first?.characteristicUUID == BLEUUID(0x2A1C))
        #expect(trace.statistics.writes == 1)
        #expect(trace.statistics.malformed == [.attResponseMalformed: 1])
    }

    @Test func readResponseIsMatchedToItsRequest() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        try capture.acl(.received, handle: 0x40, att: hex("0b 99"))                 // no request seen
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("1b 03 00 aa"))          // notification in between
        try capture.acl(.received, handle: 0x40, att: hex("0b") + temperature)
        let trace = try capture.decode()
        let values = trace.events.compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.notification, .read])
        #expect(values.last?.handle == 3)
        #expect(values.last?.value == temperature)
        #expect(values.last?.characteristicUUID == BLEUUID(0x2A1C))
        #expect(trace.statistics.unmatchedResponses == 1)
        #expect(trace.statistics.reads == 1)
    }

    /// A long read: a Read Response that fills the MTU (23: 22 bytes), then Read Blob Responses
    /// at consecutive offsets until one is shorter, give one read of the joined value, stamped
    /// with its last part; a notification in between stays a notification of its own.
    @Test func readBlobPartsBecomeOneRead() throws {
        let long = Array(0..<50).map { UInt8($0) }
        var capture = SyntheticCapture()
        try discovery(&capture)
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(long[0..<22]))
        try capture.acl(.sent, handle: 0x40, att: hex("0c 03 00 16 00"))                // offset 22
        try capture.acl(.received, handle: 0x40, att: hex("1b 03 00 aa"))               // notification in between
        try capture.acl(.received, handle: 0x40, att: hex("0d") + Array(long[22..<44]))
        try capture.acl(.sent, handle: 0x40, att: hex("0c 03 00 2c 00"))                // offset 44
        let lastPartTime = Date(microsecondsSince1970: capture.time)
        try capture.acl(.received, handle: 0x40, att: hex("0d") + Array(long[44...]))
        try capture.acl(.sent, handle: 0x40, att: hex("52 03 00 01"))                   // a write after it
        let trace = try capture.decode()
        let values = trace.events.compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.notification, .read, .writeWithoutResponse])
        #expect(values[1].value == long)
        #expect(values[1].characteristicUUID == BLEUUID(0x2A1C))
        #expect(values[1].time == lastPartTime)
        #expect(trace.statistics.reads == 1)
        #expect(trace.statistics.unmatchedResponses == 0)
        #expect(trace.statistics.malformed.isEmpty)
    }

    /// How a long read ends otherwise: after an MTU exchange (64 and 48: 47-byte parts); at
    /// Attribute Not Long (the value is whole); at another request (the client wanted no more);
    /// at the disconnection, before it; at the end of the trace. Another error answering a
    /// Read Blob means the read failed: no value.
    @Test func longReadsEndAtTheMTUAnErrorAnotherRequestOrTheEnd() throws {
        let long = Array(0..<50).map { UInt8($0) }
        var capture = SyntheticCapture()
        try discovery(&capture)
        // Not Long: 22 bytes whole.
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(long[0..<22]))
        try capture.acl(.sent, handle: 0x40, att: hex("0c 03 00 16 00"))
        try capture.acl(.received, handle: 0x40, att: hex("01 0c 03 00 0b"))
        // Insufficient Encryption on the blob: the read failed.
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(repeating: 0xEE, count: 22))
        try capture.acl(.sent, handle: 0x40, att: hex("0c 03 00 16 00"))
        try capture.acl(.received, handle: 0x40, att: hex("01 0c 03 00 0f"))
        // The client asks something else: the 22 bytes are the value.
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(long[1..<23]))
        try capture.acl(.sent, handle: 0x40, att: hex("12 03 00 07"))
        try capture.acl(.received, handle: 0x40, att: hex("13"))
        // MTU 48: a 47-byte part goes on, a 3-byte one ends it; then a 22-byte read is whole at once.
        try capture.acl(.sent, handle: 0x40, att: hex("02 40 00"))
        try capture.acl(.received, handle: 0x40, att: hex("03 30 00"))
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(long[0..<47]))
        try capture.acl(.sent, handle: 0x40, att: hex("0c 03 00 2f 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0d") + Array(long[47...]))
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(long[2..<24]))
        try capture.acl(.received, handle: 0x40, att: hex("1b 03 00 aa"))
        // A full part, then the link ends.
        try capture.acl(.sent, handle: 0x40, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x40, att: hex("0b") + Array(long[0..<47]))
        try capture.event(HCI.disconnectionComplete(handle: 0x40, reason: 0x13))
        // A full part at the end of the trace.
        try capture.event(HCI.connectionComplete(handle: 0x41, peerType: 0, peer: thermometer))
        try capture.acl(.sent, handle: 0x41, att: hex("0a 03 00"))
        try capture.acl(.received, handle: 0x41, att: hex("0b") + Array(long[3..<25]))
        let trace = try capture.decode()
        let values = trace.events.compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.read, .read, .write, .read, .read, .notification, .read, .read])
        let reads = values.filter { $0.kind == .read }.map(\.value)
        #expect(reads == [Array(long[0..<22]), Array(long[1..<23]), long, Array(long[2..<24]), Array(long[0..<47]),
                          Array(long[3..<25])])
        let lastReadOfTheFirstLink = try #require(trace.events.lastIndex { $0.gattValue?.value == Array(long[0..<47]) })
        #expect(trace.events[lastReadOfTheFirstLink + 1].disconnection != nil)
        #expect(values.last?.connection == 0x41)
        #expect(trace.statistics.reads == 6)
    }

    @Test func readByTypeForACharacteristicYieldsValues() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        try capture.acl(.sent, handle: 0x40, att: hex("08 01 00 ff ff 1c 2a"))          // Read By Type 0x2A1C
        try capture.acl(.received, handle: 0x40, att: hex("09 0f 03 00") + temperature)
        let values = try capture.decode().events.compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.read])
        #expect(values.first?.value == temperature)
        #expect(values.first?.characteristicUUID == BLEUUID(0x2A1C))
    }

    @Test func reconnectionReusesTheTableOfThePeer() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        try capture.event(HCI.disconnectionComplete(handle: 0x40, reason: 0x08))
        try capture.event(HCI.connectionComplete(handle: 0x41, peerType: 0, peer: thermometer))
        try capture.acl(.received, handle: 0x41, att: hex("1d 03 00") + temperature)
        // Another peer on the same handle later knows nothing of it.
        try capture.event(HCI.disconnectionComplete(handle: 0x41, reason: 0x08))
        try capture.event(HCI.connectionComplete(handle: 0x41, peerType: 1, peer: BLEAddress("11:22:33:44:55:66")!))
        try capture.acl(.received, handle: 0x41, att: hex("1d 03 00") + temperature)
        let values = try capture.decode().events.compactMap(\.gattValue)
        #expect(values.map(\.connection) == [0x41, 0x41])
        #expect(values.map(\.characteristicUUID) == [BLEUUID(0x2A1C), nil])
    }

    @Test func advertisingReportsLegacyAndExtended() throws {
        let scale = BLEAddress("5C:CA:D3:00:00:01")!
        let sensor = BLEAddress("A4:C1:38:00:00:02")!
        var capture = SyntheticCapture()
        // Two reports in one LE Advertising Report event.
        try capture.event(HCI.leMeta(0x02, [2]
            + HCI.legacyReport(type: 0x03, addressType: 0, address: scale,
                               data: hex("0d 16 1d 18 22 3e 30 e6 07 02 0e 10 29 3a"), rssi: -70)
            + HCI.legacyReport(type: 0x04, addressType: 1, address: sensor, data: hex("06 09 41 42 43 44 45"),
                               rssi: 127)))
        // Extended report, legacy ADV_IND (0x13), advertiser TX power in the report only.
        try capture.event(HCI.leMeta(0x0D, [1]
            + HCI.extendedReport(eventType: 0x0013, addressType: 0, address: scale, txPower: -4, rssi: -50,
                                 data: hex("02 01 06"))))
        // Extended data in two fragments (data status 1, then 0).
        let bthome = hex("0a 16 d2 fc 40 00 01 02 ca 09 03")
        try capture.event(HCI.leMeta(0x0D, [1]
            + HCI.extendedReport(eventType: 0x0021, addressType: 1, address: sensor, rssi: -60,
                                 data: Array(bthome.prefix(5)))))
        try capture.event(HCI.leMeta(0x0D, [1]
            + HCI.extendedReport(eventType: 0x0001, addressType: 1, address: sensor, rssi: -60,
                                 data: Array(bthome.dropFirst(5)))))
        // Truncated by the controller (data status 2): emitted with what arrived, counted.
        try capture.event(HCI.leMeta(0x0D, [1]
            + HCI.extendedReport(eventType: 0x0041, addressType: 1, address: sensor, rssi: -61,
                                 data: hex("02 01 06"))))
        let trace = try capture.decode()
        let advertisements = trace.events.compactMap(\.advertisement)
        #expect(advertisements.count == 5)
        #expect(advertisements.map(\.address) == [scale, sensor, scale, sensor, sensor])
        #expect(advertisements[0].eventType == .advNonconnInd)
        #expect(advertisements[0].serviceData[BLEUUID(0x181D)] == hex("22 3e 30 e6 07 02 0e 10 29 3a"))
        #expect(advertisements[0].rssi == -70)
        #expect(advertisements[1].eventType == .scanResponse)
        #expect(advertisements[1].addressType == .random)
        #expect(advertisements[1].localName == "ABCDE")
        #expect(advertisements[1].rssi == nil)
        #expect(advertisements[2].eventType == .advInd)
        #expect(advertisements[2].txPower == -4)
        #expect(advertisements[3].data == bthome)
        #expect(advertisements[3].serviceData[BLEUUID(0xFCD2)] == hex("40 00 01 02 ca 09 03"))
        #expect(advertisements[3].eventType.isConnectable && !advertisements[3].eventType.isLegacyPDU)
        #expect(trace.statistics.advertisements == 5)
        #expect(trace.statistics.malformed == [.extendedAdvertisingDataTruncated: 1])
    }

    @Test func garbledPacketsAreCountedAndDecodingGoesOn() throws {
        var capture = SyntheticCapture()
        try discovery(&capture)
        try capture.add(HCIPacketType(rawValue: 0x09), .received, hex("00 01"))        // unknown indicator
        try capture.event(hex("3e 0c 02 01"))                                           // shorter than declared
        try capture.event(HCI.leMeta(0x02, [2]
            + HCI.legacyReport(type: 0, addressType: 0, address: thermometer, data: hex("02 01 06"), rssi: -1)
            + hex("00 00 01")))                                                         // second report cut short
        try capture.event(HCI.leMeta(0x02, [1]
            + HCI.legacyReport(type: 0, addressType: 0, address: thermometer, data: hex("05 09 41"), rssi: -1)))
        try capture.event(HCI.leMeta(0x01, [0x00, 0x40]))                               // connection event cut short
        try capture.event(HCI.event(0x05, [0x00]))                                      // disconnection cut short
        try capture.add(.acl, .received, hex("40 20 05"))                               // ACL header cut short
        try capture.add(.acl, .received, hex("40 20 09 00 05 00 04 00 1b"))             // fewer bytes than declared
        try capture.add(.acl, .received, hex("40 10 02 00 aa bb"))                      // continuation without start
        try capture.add(.acl, .received, hex("40 20 05 00 09 00 04 00 1b"))             // start of 9-byte frame ...
        try capture.add(.acl, .received, hex("40 20 07 00 03 00 04 00 1b 03 00"))       // ... abandoned by a new start
        try capture.add(.acl, .received, hex("40 20 05 00 02 00 04 00 1b"))             // start of 2-byte frame ...
        try capture.add(.acl, .received, hex("40 10 03 00 03 00 aa"))                   // ... overflowed
        try capture.acl(.received, handle: 0x40, att: hex("1b 03"))                     // notification too short
        try capture.acl(.received, handle: 0x40, att: [])                               // empty ATT PDU
        try capture.acl(.received, handle: 0x40, att: hex("11 05 01 00 05 00 09"))      // bad element length
        try capture.acl(.received, handle: 0x40, att: hex("05 03 04 00 02 29"))         // bad UUID format
        try capture.acl(.received, handle: 0x40, att: hex("1b 03 00 42"))               // and then a good one
        let trace = try capture.decode()
        #expect(trace.statistics.malformed == [
            .unknownPacketType: 1, .eventTruncated: 1, .advertisingReportTruncated: 1,
            .advertisingDataMalformed: 1, .connectionEventTruncated: 1, .disconnectionEventTruncated: 1,
            .aclHeaderTruncated: 1, .aclLengthMismatch: 1, .aclContinuationWithoutStart: 1,
            .aclFragmentAbandoned: 1, .l2capLengthMismatch: 1, .attPDUTooShort: 2, .attResponseMalformed: 2,
        ])
        // The frame that abandoned the earlier start, and the final good one, still decode.
        let values = trace.events.compactMap(\.gattValue)
        #expect(values.map(\.value) == [[], [0x42]])
        #expect(values.last?.characteristicUUID == BLEUUID(0x2A1C))
        #expect(trace.statistics.advertisements == 2)
    }

    @Test func recordsOfOtherLinkTypesAreCountedNotDecoded() {
        var decoder = HCITraceDecoder()
        let record = CaptureRecord(timestamp: 0, direction: nil, content: .linkLayerFrame(linkType: 189),
                                   bytes: [1, 2, 3][...], originalLength: 3, fileOffset: 24)
        #expect(decoder.process(record).isEmpty)
        #expect(decoder.statistics.nonHCIRecords == 1)
        #expect(decoder.statistics.records == 0)
    }

    /// A live scanner parses each event once (``HCIEvent``) and hands the decoder the LE Meta event's parts:
    /// the advertisements are those the whole packets give on replay.
    @Test func anLEMetaEventParsedOnceDecodesAsTheWholePacket() throws {
        var whole = HCITraceDecoder()
        var parsed = HCITraceDecoder()
        var fromWhole: [BLEAdvertisement] = []
        var fromParsed: [BLEAdvertisement] = []
        var metaEvents = 0
        for path in [Fixture.dsd6, Fixture.hidrate] {
            let reader = try BTSnoopReader(path: path)
            while let record = try reader.next() {
                guard case .hci(.event) = record.content else { continue }
                fromWhole += whole.process(record).compactMap { if case .advertisement(let a) = $0 { a } else { nil } }
                guard case .leMeta(let subevent, let parameters) = try HCIEvent(packet: [0x04] + record.bytes) else { continue }
                metaEvents += 1
                var events: [TransportEvent] = []
                parsed.processLEMeta(subevent: subevent, parameters: parameters, timestamp: record.timestamp, into: &events)
                fromParsed += events.compactMap { if case .advertisement(let a) = $0 { a } else { nil } }
            }
        }
        #expect(metaEvents > 0)
        #expect(!fromWhole.isEmpty)
        #expect(fromParsed == fromWhole)
        #expect(parsed.statistics.malformedTotal == whole.statistics.malformedTotal)
    }

    @Test func decoderExposesTheDiscoveredTable() throws {
        var decoder = HCITraceDecoder()
        var events: [TransportEvent] = []
        let reader = try BTSnoopReader(path: Fixture.dsd6)
        while let record = try reader.next() {
            decoder.process(record, into: &events)
            if decoder.statistics.subscriptions == 1 { break }
        }
        let table = try #require(decoder.peerDatabase(connection: 2))
        #expect(table.services.map(\.uuid) == [BLEUUID(0x1800), BLEUUID(0x1801), BLEUUID(0x190A), BLEUUID(0x190B)])
        #expect(table.characteristic(valueHandle: 0x000B)?.properties == 0x10)
        #expect(table.isClientCharacteristicConfiguration(0x000C))
    }
}

@Suite struct HCITraceDecoderMutationTests {
    /// Real packets with random bytes changed, cut short or extended: the decoder must count,
    /// not crash (debug builds check every buffer access), and keep decoding.
    @Test(arguments: [1, 2, 3, 4])
    func mutatedPacketsAreCountedNotFatal(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var decoder = HCITraceDecoder()
        var events: [TransportEvent] = []
        var fed = 0
        for path in [Fixture.dsd6, Fixture.hidrate] {
            let reader = try BTSnoopReader(path: path)
            while let record = try reader.next() {
                guard case .hci(let type) = record.content else { continue }
                var packet = Array(record.bytes)
                switch random.next() % 4 {
                case 0 where !packet.isEmpty:
                    for _ in 0..<(1 + random.next() % 3) {
                        packet[Int(random.next() % UInt64(packet.count))] = UInt8(truncatingIfNeeded: random.next())
                    }
                case 1:
                    packet = Array(packet.prefix(Int(random.next() % UInt64(packet.count + 1))))
                case 2:
                    packet += (0..<(random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                default:
                    break
                }
                decoder.process(timestamp: record.timestamp, direction: record.direction, type: type, packet: packet,
                                into: &events)
                fed += 1
            }
        }
        #expect(decoder.statistics.records == fed)
        #expect(decoder.statistics.malformedTotal > 100)
        #expect(decoder.statistics.advertisements > 1_000)
    }
}
