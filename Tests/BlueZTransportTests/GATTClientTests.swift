import BLESimulators
import BlueZTransport
import Foundation
import TestSupport
import Testing
import Transport

@Suite struct GATTClientTests {
    static let peerAddress = BLEAddress("00:1B:DC:01:02:03")!

    /// A GATT client and a simulated peripheral facing each other.
    struct Rig {
        let client: GATTClient
        let peripheral: SimulatedPeripheral
        let logs = LogCollector()

        init(profile: SimulatedProfile, behaviour: SimulatedPeripheral.Behaviour = .normal, serverMTU: UInt16 = 23,
             configuration: GATTClientConfiguration = GATTClientConfiguration()) throws {
            let (clientEnd, peripheralEnd) = try SocketPair.make()
            peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: profile, behaviour: behaviour,
                                                 serverMTU: serverMTU)
            let logs = self.logs
            client = GATTClient(
                channel: try PacketChannel(adopting: clientEnd),
                peer: GATTPeer(address: GATTClientTests.peerAddress, addressType: .public, connectionHandle: 0x0040),
                configuration: configuration, log: logs.sink)
        }

        func start() async {
            await peripheral.start()
            await client.start()
        }

        func stop() async {
            await client.disconnect()
            await peripheral.stop()
        }
    }

    @Test func weightScaleDiscoveryFindsServicesCharacteristicsAndDescriptors() async throws {
        let rig = try Rig(profile: .weightScale)
        await rig.start()
        let services = try await rig.client.discover()
        #expect(services.map(\.uuid) == [BLEUUID(0x1800), BLEUUID(0x181D)])
        #expect(services.map(\.startHandle) == [0x0001, 0x0004])
        #expect(services.map(\.endHandle) == [0x0003, 0x0009])

        let scale = services[1].characteristics
        #expect(scale.map(\.uuid) == [BLEUUID(0x2A9E), BLEUUID(0x2A9D)])
        #expect(scale.map(\.declarationHandle) == [0x0005, 0x0007])
        #expect(scale.map(\.valueHandle) == [0x0006, 0x0008])
        #expect(scale[1].valueHandle == rig.peripheral.valueHandle(of: BLEUUID(0x2A9D)))
        #expect(scale[1].properties == .indicate)
        #expect(scale[1].endHandle == 0x0009)
        #expect(scale[1].descriptors == [GATTDescriptor(handle: 0x0009, uuid: .clientCharacteristicConfiguration)])
        #expect(scale[0].descriptors.isEmpty)
        await rig.stop()
    }

    @Test func weightIndicationArrivesAsGATTValueAndIsConfirmed() async throws {
        let rig = try Rig(profile: .weightScale)
        await rig.start()
        let outcomes = try await rig.client.subscribeToAll(characteristics: [BLEUUID(0x2A9D)])
        #expect(outcomes.map(\.result) == [.subscribed(.indications)])
        try await rig.peripheral.waitForConfirmations(1)

        // The indication may overtake the subscription event: the write response and the
        // indication arrive back to back.
        let events = try await take(3, from: rig.client.events)
        let connection = try #require(events[0].connection)
        #expect(connection.peerAddress == Self.peerAddress)
        #expect(connection.handle == 0x0040)
        #expect(connection.role == .central)

        let subscription = try #require(events.compactMap(\.subscription).first)
        #expect(subscription.characteristicUUID == BLEUUID(0x2A9D))
        #expect(subscription.serviceUUID == BLEUUID(0x181D))
        #expect(subscription.descriptorHandle == 0x0009)
        #expect(subscription.indicationsEnabled)

        let value = try #require(events.compactMap(\.gattValue).first)
        #expect(value.kind == .indication)
        #expect(value.value == [0x00, 0x8C, 0x3C])
        #expect(value.characteristicUUID == BLEUUID(0x2A9D))
        #expect(value.serviceUUID == BLEUUID(0x181D))
        #expect(value.peerAddress == Self.peerAddress)
        #expect(value.connection == 0x0040)

        // The CCCD write carried `02 00`, and the confirmation `1E` answered the indication.
        let pdus = await rig.peripheral.receivedPDUs
        #expect(pdus.contains(hex("12 09 00 02 00")))
        #expect(pdus.last == [0x1E])
        await rig.stop()
    }

    @Test func thermometerIndicationsArriveInOrderEachConfirmedBeforeTheNext() async throws {
        let rig = try Rig(profile: .thermometer)
        await rig.start()
        try await rig.client.discover()
        let temperatureType = try await rig.client.read(characteristic: BLEUUID(0x2A1D))
        #expect(temperatureType == [0x04])
        let outcomes = try await rig.client.subscribeToAll(characteristics: [BLEUUID(0x2A1C), BLEUUID(0x2A1E)])
        #expect(outcomes.map(\.characteristic.uuid) == [BLEUUID(0x2A1C), BLEUUID(0x2A1E)])
        #expect(outcomes.map(\.result) == [.subscribed(.indications), .subscribed(.notifications)])
        try await rig.peripheral.waitForConfirmations(2)

        let values = try await take(6, from: rig.client.events).compactMap(\.gattValue)
        #expect(values.map(\.kind) == [.read, .indication, .indication])
        #expect(values[0].characteristicUUID == BLEUUID(0x2A1D))
        #expect(values[1].value == hex("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04"))
        #expect(values[2].value == hex("00 B0 0E 00 FE"))
        #expect(values.dropFirst().allSatisfy { $0.characteristicUUID == BLEUUID(0x2A1C) && $0.serviceUUID == BLEUUID(0x1809) })
        #expect(await rig.peripheral.confirmations == 2)
        await rig.stop()
    }

    @Test func bloodPressureCuffWithAVendorServiceAndALargerMTU() async throws {
        let rig = try Rig(profile: .bloodPressureCuff, serverMTU: 185)
        await rig.start()
        #expect(try await rig.client.exchangeMTU() == 185)
        #expect(await rig.peripheral.mtu == 185)
        let services = try await rig.client.discover()
        #expect(services.map(\.uuid) == [BLEUUID(0x1800), BLEUUID(0x1810), SimulatedProfile.vendorService])

        let vendor = try #require(services.last?.characteristics.first)
        #expect(vendor.uuid == SimulatedProfile.vendorCharacteristic)
        #expect(vendor.properties == [.read, .notify])
        #expect(vendor.descriptors.map(\.uuid) == [.clientCharacteristicConfiguration, BLEUUID(0x2901)])
        #expect(try await rig.client.readValue(handle: vendor.descriptors[1].handle) == Array("Vendor status".utf8))

        try await rig.client.subscribeToAll(characteristics: [BLEUUID(0x2A35)])
        try await rig.peripheral.waitForConfirmations(1)
        let value = try #require(try await take(3, from: rig.client.events).compactMap(\.gattValue).first)
        #expect(value.characteristicUUID == BLEUUID(0x2A35))
        #expect(value.serviceUUID == BLEUUID(0x1810))
        #expect(value.value == hex("04 8A 00 58 00 67 00 3C 00"))
        await rig.stop()
    }

    @Test func discoveryWithTheDefaultMTUNeedsSeveralRoundsAndEndsOnAttributeNotFound() async throws {
        let rig = try Rig(profile: .bloodPressureCuff)
        await rig.start()
        let services = try await rig.client.discover()
        #expect(services.count == 3)
        #expect(services[1].characteristics.map(\.uuid) == [BLEUUID(0x2A35), BLEUUID(0x2A36), BLEUUID(0x2A49)])
        let pdus = await rig.peripheral.receivedPDUs
        // Read By Group Type: 1800 and 1810 fit in one response (16-bit UUIDs), the 128-bit
        // service needs its own, and the last request gets Attribute Not Found.
        let groupRequests = pdus.filter { $0.first == 0x10 }
        #expect(groupRequests.map { Array($0[1...2]) } == [[0x01, 0x00], [0x0D, 0x00], [0x12, 0x00]])
        await rig.stop()
    }

    @Test func longValuesAreReadWithReadBlob() async throws {
        let long = Array(0..<50).map { UInt8($0) }
        let profile = SimulatedProfile(name: "Long", services: [
            .init(uuid: BLEUUID(0x180A), characteristics: [.init(uuid: BLEUUID(0x2A29), properties: 0x02, value: long)]),
        ])
        let rig = try Rig(profile: profile)
        await rig.start()
        try await rig.client.discover()
        #expect(try await rig.client.read(characteristic: BLEUUID(0x2A29)) == long)
        let blobOffsets = await rig.peripheral.receivedPDUs.filter { $0.first == 0x0C }.map { Array($0[3...4]) }
        #expect(blobOffsets == [[22, 0], [44, 0]])
        await rig.stop()
    }

    /// A value longer than MTU - 3 written with response goes as Prepare Write parts of MTU - 5
    /// bytes and one Execute Write; the peripheral gets the whole value once. Past 512 bytes, or
    /// without response, it is refused; after an MTU exchange the same value fits one Write Request.
    @Test func longValuesAreWrittenWithPrepareAndExecuteWrite() async throws {
        let long = Array(0..<50).map { UInt8($0) }
        let profile = SimulatedProfile(name: "Long", services: [
            .init(uuid: BLEUUID(0xFFF0), characteristics: [.init(uuid: BLEUUID(0xFFF1), properties: 0x0C, value: [0])]),
        ])
        let rig = try Rig(profile: profile)
        await rig.start()
        let services = try await rig.client.discover()
        let characteristic = try #require(services.last?.characteristics.first)
        try await rig.client.write(long, to: characteristic, withResponse: true)
        #expect(await rig.peripheral.longWrites == [long])
        let received = await rig.peripheral.receivedPDUs
        #expect(received.filter { $0.first == 0x16 }.map { Array($0[3...4]) } == [[0, 0], [18, 0], [36, 0]])
        #expect(received.filter { $0.first == 0x18 } == [[0x18, 0x01]])
        await #expect(throws: GATTError.valueTooLong(length: 513, limit: 512)) {
            try await rig.client.write([UInt8](repeating: 1, count: 513), to: characteristic, withResponse: true)
        }
        await #expect(throws: GATTError.valueTooLong(length: 50, limit: 20)) {
            try await rig.client.write(long, to: characteristic, withResponse: false)
        }
        await rig.stop()

        let wide = try Rig(profile: profile, serverMTU: 64, configuration: GATTClientConfiguration(preferredMTU: 64))
        await wide.start()
        _ = try await wide.client.exchangeMTU()
        let found = try #require(try await wide.client.discover().last?.characteristics.first)
        try await wide.client.write(long, to: found, withResponse: true)
        #expect(await wide.peripheral.longWrites.isEmpty)
        #expect(await wide.peripheral.receivedPDUs.contains([0x12, UInt8(found.valueHandle & 0xFF), UInt8(found.valueHandle >> 8)] + long))
        await wide.stop()
    }

    @Test func notificationsAreNotConfirmed() async throws {
        let profile = SimulatedProfile(name: "HR", services: [
            .init(uuid: BLEUUID(0x180D), characteristics: [
                .init(uuid: BLEUUID(0x2A37), properties: 0x10, updates: [[0x00, 0x48], [0x00, 0x49]]),
            ]),
        ])
        let rig = try Rig(profile: profile)
        await rig.start()
        #expect(try await rig.client.subscribeToAll(characteristics: [BLEUUID(0x2A37)]).map(\.result)
            == [.subscribed(.notifications)])
        let values = try await take(4, from: rig.client.events).compactMap(\.gattValue)
        #expect(values.map(\.value) == [[0x00, 0x48], [0x00, 0x49]])
        #expect(values.allSatisfy { $0.kind == .notification && $0.characteristicUUID == BLEUUID(0x2A37) })
        #expect(await rig.peripheral.confirmations == 0)
        await rig.stop()
    }

    @Test func characteristicsWithoutNotifyOrIndicateAreReportedNotSubscribed() async throws {
        let rig = try Rig(profile: .weightScale)
        await rig.start()
        let outcomes = try await rig.client.subscribeToAll(characteristics: [BLEUUID(0x2A9E), BLEUUID(0x2A9D)])
        #expect(outcomes.map(\.result) == [.notSubscribable, .subscribed(.indications)])
        await rig.stop()
    }

    @Test func prepareExchangesMTUDiscoversReadsAndSubscribes() async throws {
        let rig = try Rig(profile: .thermometer, serverMTU: 64)
        await rig.start()
        // 2A1E has no read property: asking to read it does nothing.
        let outcomes = try await rig.client.prepare(reading: [BLEUUID(0x2A1D), BLEUUID(0x2A1E)],
                                                    subscribingTo: [BLEUUID(0x2A1C)])
        #expect(outcomes.map(\.result) == [.subscribed(.indications)])
        #expect(await rig.client.mtu == 64)
        try await rig.peripheral.waitForConfirmations(2)
        let events = try await take(5, from: rig.client.events)
        #expect(events.compactMap(\.gattValue).map(\.kind) == [.read, .indication, .indication])
        #expect(events.compactMap(\.subscription).count == 1)
        let requests = await rig.peripheral.receivedPDUs.map { $0[0] }
        #expect(requests.first == 0x02)
        #expect(requests.filter { $0 == 0x0A } .count == 1)
        await rig.stop()
    }

    @Test func tapSeesEveryPDUInBothDirections() async throws {
        let (clientEnd, peripheralEnd) = try SocketPair.make()
        let peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: .weightScale)
        let seen = PacketLog()
        let client = GATTClient(
            channel: try PacketChannel(adopting: clientEnd),
            peer: GATTPeer(address: Self.peerAddress, addressType: .public, connectionHandle: 1),
            tap: seen.record)
        await peripheral.start()
        await client.start()
        try await client.subscribeToAll(characteristics: [BLEUUID(0x2A9D)])
        try await peripheral.waitForConfirmations(1)
        _ = await client.mtu  // the client's job that sent the confirmation has finished
        let packets = seen.all
        #expect(packets.filter { $0.0 == .sent }.map(\.1) == (await peripheral.receivedPDUs))
        #expect(packets.contains { $0 == (.received, hex("1d 08 00 00 8c 3c")) })
        #expect(packets.last.map { $0 == (.sent, [0x1E]) } == true)
        await client.disconnect()
        await peripheral.stop()
    }

    @Test func peripheralThatNeverAnswersGivesATimeoutAndTheLinkEnds() async throws {
        let rig = try Rig(profile: .weightScale, behaviour: .silent,
                          configuration: GATTClientConfiguration(requestTimeout: .milliseconds(100)))
        await rig.start()
        await #expect(throws: GATTError.timedOut(request: .exchangeMTURequest, after: .milliseconds(100))) {
            try await rig.client.exchangeMTU()
        }
        let events = try await drain(rig.client.events)
        #expect(events.count == 2)
        #expect(events.last?.disconnection?.reason == 0x16)
        #expect(rig.logs.count(kind: "gatt-timeout") == 1)
        // Later requests fail at once instead of waiting again.
        await #expect(throws: GATTError.disconnected(.closedLocally)) { try await rig.client.discover() }
        await rig.peripheral.stop()
    }

    @Test func peripheralDisconnectingMidDiscoveryEndsTheSession() async throws {
        let rig = try Rig(profile: .thermometer, behaviour: .disconnect(afterRequests: 2))
        await rig.start()
        await #expect(throws: GATTError.disconnected(.closedByPeer)) { try await rig.client.discover() }
        let events = try await drain(rig.client.events)
        #expect(events.count == 2)
        let disconnection = try #require(events.last?.disconnection)
        #expect(disconnection.reason == 0x13)
        #expect(disconnection.peerAddress == Self.peerAddress)
        #expect(disconnection.handle == 0x0040)
        #expect(await rig.client.linkEnd == .closedByPeer)
        #expect(await rig.client.waitUntilDisconnected() == .closedByPeer)
        await rig.peripheral.stop()
    }

    @Test func malformedDiscoveryResponseNamesTheOffset() async throws {
        let (clientEnd, testEnd) = try SocketPair.make()
        let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                peer: GATTPeer(address: Self.peerAddress, addressType: .public, connectionHandle: 1))
        let peripheral = try PacketChannel(adopting: testEnd)
        await client.start()
        let discovery = Task { try await client.discoverPrimaryServices() }
        let request = try await take(1, from: peripheral.events)
        #expect(request == [.packet(hex("10 01 00 ff ff 00 28"))])
        // Entry length 5 is neither 6 (16-bit UUID) nor 20 (128-bit UUID).
        try peripheral.send(hex("11 05 01 00 03 00 00"))
        await #expect(throws: GATTError.malformedPDU(
            opcode: .readByGroupTypeResponse, bytes: hex("11 05 01 00 03 00 00"), offset: 1,
            reason: "entry length 5, expected one of [6, 20]")) {
            try await discovery.value
        }
        await client.disconnect()
        peripheral.close()
    }

    @Test func requestsFromThePeripheralAreAnsweredAsUnsupported() async throws {
        let (clientEnd, testEnd) = try SocketPair.make()
        let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                peer: GATTPeer(address: Self.peerAddress, addressType: .random, connectionHandle: 1),
                                configuration: GATTClientConfiguration(preferredMTU: 247))
        let peripheral = try PacketChannel(adopting: testEnd)
        await client.start()
        // The peripheral discovers the client's (absent) GATT server, then asks for the MTU.
        try peripheral.send(hex("10 01 00 ff ff 00 28"))
        try peripheral.send(hex("02 40 00"))
        let answers = try await take(2, from: peripheral.events)
        #expect(answers == [.packet(hex("01 10 01 00 06")), .packet(hex("03 f7 00"))])
        #expect(await client.mtu == 64)
        await client.disconnect()
        peripheral.close()
    }

    @Test func operationsBeforeStartAreRejected() async throws {
        let (clientEnd, otherEnd) = try SocketPair.make()
        let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                peer: GATTPeer(address: Self.peerAddress, addressType: .public, connectionHandle: 1))
        await #expect(throws: GATTError.notStarted) { try await client.exchangeMTU() }
        await client.disconnect()
        // Never started: no `connected`, just the end.
        #expect(try await drain(client.events).map(\.disconnection?.reason) == [0x16])
        close(otherEnd)
    }
}
