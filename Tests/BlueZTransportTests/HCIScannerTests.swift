import BLESimulators
import BLEWire
import BlueZTransport
import Foundation
import TestSupport
import Testing
import Transport

/// Real LE Advertising Report events from the DSD6 scan capture
/// (`captures/ble/dsd6_btsnoop_hci.log.63758104325217312`), one of each event type.
enum RealReports {
    /// ADV_IND from 2C:26:17:16:16:3C: flags 06, UUID 0x180A, a 128-bit UUID, company 0x058E.
    static let advInd = hex("""
        04 3e 2a 02 01 00 00 3c 16 16 17 26 2c 1e 02 01 06 03 03 0a 18 11 07 b3 83 3c 22 0f 27 11 e7 93 ae 92 36
        52 56 26 81 04 ff 8e 05 01 a8
        """)
    /// SCAN_RSP from the same advertiser: complete local name `OMVR-V190`.
    static let scanResponse = hex("04 3e 17 02 01 04 00 3c 16 16 17 26 2c 0b 0a 09 4f 4d 56 52 2d 56 31 39 30 a7")
    /// ADV_NONCONN_IND from random 07:9D:B2:C4:D2:86: Microsoft (0x0006) manufacturer data.
    static let nonconnectable = hex("""
        04 3e 2b 02 01 03 01 86 d2 c4 b2 9d 07 1f 1e ff 06 00 01 09 20 02 f5 e8 2d 57 cd 5d 3e 16 50 9b c0 0a 19
        ee 7f 01 8c 7b 71 1b fb 11 c4 c9
        """)
    /// ADV_SCAN_IND from random 5D:1C:BC:77:61:A9: UUID 0xFE9F and service data for it.
    static let scannable = hex("""
        04 3e 28 02 01 02 01 a9 61 77 bc 1c 5d 1c 03 03 9f fe 17 16 9f fe 02 5a 51 6b 73 76 4d 46 43 31 6f 34 00
        00 01 72 2a 28 8e d6 a8
        """)
}

/// A Mi Smart Scale v1 broadcast (service data 0x181D, 61.75 kg stabilised) and a standard
/// weight scale advertising the Weight Scale service.
enum ScaleReports {
    static let miScaleAddress = BLEAddress("C8:0F:10:AA:BB:CC")!
    static let miScale = AdvertisingReportBuilder.legacy(
        eventType: 0x00, addressType: 0x00, address: miScaleAddress,
        data: ADStructure.flags(0x06) + ADStructure.serviceData16(0x181D, hex("22 3E 30 E6 07 02 0E 10 29 3A")),
        rssi: -70)
    static let weightScaleAddress = BLEAddress("00:1B:DC:01:02:03")!
    static let weightScale = AdvertisingReportBuilder.legacy(
        eventType: 0x00, addressType: 0x00, address: weightScaleAddress,
        data: ADStructure.flags(0x06) + ADStructure.serviceUUIDs16([0x181D]) + ADStructure.completeLocalName("WS"),
        rssi: -62)
}

/// How long the scanner waits for the simulated controller's reply to a command. The production
/// default (2 s) is for real controllers; the simulator is an actor that shares two cores with every
/// suite running in parallel, so the tests that are not about timeouts wait longer.
private let patientCommandTimeout: Duration = .seconds(30)

@Suite struct HCIScannerTests {
    /// A scanner and a simulated controller facing each other.
    struct Rig {
        let scanner: HCIScanner
        let controller: SimulatedController
        let logs = LogCollector()

        init(script: SimulatedController.Script = .init(),
             configuration: HCIScannerConfiguration = HCIScannerConfiguration(silencePeriod: nil, commandTimeout: patientCommandTimeout)) throws {
            let (engineEnd, controllerEnd) = try SocketPair.make()
            controller = try SimulatedController(descriptor: controllerEnd, script: script)
            let logs = self.logs
            scanner = HCIScanner(channel: try PacketChannel(adopting: engineEnd), configuration: configuration,
                                 log: logs.sink)
        }

        func start() async throws {
            await controller.start()
            try await scanner.start()
        }

        func stop() async {
            await scanner.stop()
            await controller.stop()
        }
    }

    @Test func legacyStartSequenceIsFeaturesThenPassiveParametersThenEnableWithoutDuplicateFiltering() async throws {
        let rig = try Rig()
        try await rig.start()
        #expect(await rig.controller.commands == [
            hex("01 03 20 00"),
            hex("01 0b 20 07 00 60 00 30 00 00 00"),
            hex("01 0c 20 02 01 00"),
        ])
        #expect(await rig.scanner.state == .scanning)
        #expect(await rig.scanner.usesExtendedCommands == false)
        await rig.stop()
    }

    @Test func tapSeesCommandsAndEvents() async throws {
        let (engineEnd, controllerEnd) = try SocketPair.make()
        let controller = try SimulatedController(descriptor: controllerEnd,
                                                 script: .init(reportBatches: [[ScaleReports.miScale]]))
        let seen = PacketLog()
        let scanner = HCIScanner(channel: try PacketChannel(adopting: engineEnd),
                                 configuration: HCIScannerConfiguration(silencePeriod: nil, commandTimeout: patientCommandTimeout), tap: seen.record)
        await controller.start()
        try await scanner.start()
        _ = try await take(1, from: scanner.events)
        let packets = seen.all
        #expect(packets.filter { $0.0 == .sent }.map(\.1) == (await controller.commands))
        #expect(packets.filter { $0.0 == .received }.map(\.1) == [
            hex("04 0e 0c 01 03 20 00 cf 00 00 00 00 00 00 00"),
            hex("04 0e 04 01 0b 20 00"),
            hex("04 0e 04 01 0c 20 00"),
            ScaleReports.miScale,
        ])
        await scanner.stop()
        await controller.stop()
    }

    @Test func activeScanParametersMatchWhatAndroidSentInTheCapture() async throws {
        // The DSD6 capture's host sent `01 0b 20 07 01 40 1f 40 1f 01 00`: active, 5 s interval
        // and window, random own address, accept all.
        let parameters = LEScanParameters(scanType: .active, interval: 0x1F40, window: 0x1F40, ownAddressType: 1)
        let rig = try Rig(configuration: HCIScannerConfiguration(parameters: parameters, commandSet: .legacy,
                                                                 silencePeriod: nil, commandTimeout: patientCommandTimeout))
        try await rig.start()
        #expect(await rig.controller.commands == [hex("01 0b 20 07 01 40 1f 40 1f 01 00"), hex("01 0c 20 02 01 00")])
        await rig.stop()
    }

    @Test func extendedCommandsWhenTheControllerSupportsExtendedAdvertising() async throws {
        let extendedReport = AdvertisingReportBuilder.extended(
            eventType: 0x0000, addressType: 0x01, address: ScaleReports.weightScaleAddress,
            data: ADStructure.serviceUUIDs16([0x181D]), rssi: -50, txPower: 4, sid: 1)
        let rig = try Rig(script: .init(leFeatures: 0x1FCF, reportBatches: [[extendedReport]]))
        try await rig.start()
        #expect(await rig.controller.commands == [
            hex("01 03 20 00"),
            hex("01 41 20 08 00 00 01 00 60 00 30 00"),
            hex("01 42 20 06 01 00 00 00 00 00"),
        ])
        #expect(await rig.scanner.usesExtendedCommands)
        let advertisement = try #require(try await take(1, from: rig.scanner.events).first?.advertisement)
        #expect(advertisement.address == ScaleReports.weightScaleAddress)
        #expect(advertisement.addressType == .random)
        #expect(advertisement.serviceUUIDs == [BLEUUID(0x181D)])
        #expect(advertisement.rssi == -50)
        #expect(advertisement.txPower == 4)
        #expect(advertisement.eventType.isLegacyPDU == false)
        await rig.stop()
        #expect(await rig.controller.commands.last == hex("01 42 20 06 00 00 00 00 00 00"))
    }

    @Test func extendedDataInTwoReportsIsReassembled() async throws {
        let data = ADStructure.flags(0x06) + ADStructure.completeLocalName("Thermometer-Long-Name")
        let address = BLEAddress("A4:C1:38:00:11:22")!
        // Data status 1 (event type bits 5-6 = 01): more data follows in the next report.
        let head = AdvertisingReportBuilder.extended(eventType: 0x0020, address: address, data: Array(data[..<10]), sid: 3)
        let tail = AdvertisingReportBuilder.extended(eventType: 0x0000, address: address, data: Array(data[10...]), sid: 3)
        let rig = try Rig(script: .init(leFeatures: 0x1000, reportBatches: [[head, tail, ScaleReports.weightScale]]))
        try await rig.start()
        let advertisements = try await take(2, from: rig.scanner.events).compactMap(\.advertisement)
        #expect(advertisements.count == 2)
        #expect(advertisements.first?.data == data)
        #expect(advertisements.first?.localName == "Thermometer-Long-Name")
        #expect(advertisements.last?.address == ScaleReports.weightScaleAddress)
        await rig.stop()
    }

    @Test func extendedCommandsUnknownToTheControllerFallBackToLegacy() async throws {
        let rig = try Rig(script: .init(leFeatures: 0x1000, statusOverrides: [0x2041: [0x01]]))
        try await rig.start()
        #expect(await rig.controller.commands == [
            hex("01 03 20 00"),
            hex("01 41 20 08 00 00 01 00 60 00 30 00"),
            hex("01 0b 20 07 00 60 00 30 00 00 00"),
            hex("01 0c 20 02 01 00"),
        ])
        #expect(rig.logs.count(kind: "scan-legacy-fallback") == 1)
        await rig.stop()
    }

    @Test func realAdvertisingReportsBecomeAdvertisements() async throws {
        let rig = try Rig(script: .init(reportBatches: [[
            RealReports.advInd, RealReports.scanResponse, RealReports.nonconnectable, RealReports.scannable,
        ]]))
        try await rig.start()
        let advertisements = try await take(4, from: rig.scanner.events).compactMap(\.advertisement)
        try #require(advertisements.count == 4)

        let advInd = advertisements[0]
        #expect(advInd.address == BLEAddress("2C:26:17:16:16:3C"))
        #expect(advInd.addressType == .public)
        #expect(advInd.eventType == .advInd)
        #expect(advInd.flags == 0x06)
        #expect(advInd.serviceUUIDs.first == BLEUUID(0x180A))
        #expect(advInd.serviceUUIDs.count == 2)
        #expect(advInd.manufacturerData == [0x058E: [0x01]])
        #expect(advInd.rssi == -88)

        let response = advertisements[1]
        #expect(response.eventType == .scanResponse)
        #expect(response.localName == "OMVR-V190")
        #expect(response.rssi == -89)

        let nonconnectable = advertisements[2]
        #expect(nonconnectable.address == BLEAddress("07:9D:B2:C4:D2:86"))
        #expect(nonconnectable.addressType == .random)
        #expect(nonconnectable.eventType == .advNonconnInd)
        #expect(nonconnectable.manufacturerData[0x0006]?.count == 27)
        #expect(nonconnectable.rssi == -55)

        let scannable = advertisements[3]
        #expect(scannable.eventType == .advScanInd)
        #expect(scannable.serviceUUIDs == [BLEUUID(0xFE9F)])
        #expect(scannable.serviceData[BLEUUID(0xFE9F)]?.prefix(2) == [0x02, 0x5A])
        #expect(await rig.scanner.statistics.advertisements == 4)
        await rig.stop()
    }

    @Test func scaleBroadcastsArriveEveryTimeTheyAreRepeated() async throws {
        // Duplicate filtering is off, so the same Mi Scale frame arrives as often as it is sent.
        let rig = try Rig(script: .init(reportBatches: [[
            ScaleReports.miScale, ScaleReports.weightScale, ScaleReports.miScale, ScaleReports.miScale,
        ]]))
        try await rig.start()
        let advertisements = try await take(4, from: rig.scanner.events).compactMap(\.advertisement)
        #expect(advertisements.map(\.address) == [ScaleReports.miScaleAddress, ScaleReports.weightScaleAddress,
                                                  ScaleReports.miScaleAddress, ScaleReports.miScaleAddress])
        #expect(advertisements[0].serviceData[BLEUUID(0x181D)] == hex("22 3E 30 E6 07 02 0E 10 29 3A"))
        #expect(advertisements[1].serviceUUIDs == [BLEUUID(0x181D)])
        #expect(advertisements[1].localName == "WS")
        await rig.stop()
    }

    @Test func commandDisallowedOnScanParametersMeansSharingBluetoothdsScan() async throws {
        let rig = try Rig(script: .init(statusOverrides: [0x200B: [0x0C]]))
        try await rig.start()
        #expect(await rig.scanner.state == .sharing)
        // Parameters were refused, so no enable was sent.
        #expect(await rig.controller.commands(opcode: 0x200C).isEmpty)
        let busy = rig.logs.all.filter { $0.kind == "scan-busy" }
        try #require(busy.count == 1)
        #expect(busy[0].message.contains("bluetoothd"))
        #expect(busy[0].message.contains("Command Disallowed (0x0C)"))
        #expect(busy[0].level == .notice)

        // bluetoothd's scan produces reports on the shared socket: they still arrive.
        try await rig.controller.emit(ScaleReports.miScale)
        let advertisement = try await take(1, from: rig.scanner.events).first?.advertisement
        #expect(advertisement?.address == ScaleReports.miScaleAddress)
        #expect(await rig.scanner.statistics.commandsDisallowed == 1)
        await rig.stop()
        // Nothing to disable: the scan was never ours.
        #expect(await rig.controller.commands(opcode: 0x200C).isEmpty)
    }

    @Test func commandDisallowedOnScanEnableIsNotFatalEither() async throws {
        let rig = try Rig(script: .init(statusOverrides: [0x200C: [0x0C]]))
        try await rig.start()
        #expect(await rig.scanner.state == .sharing)
        #expect(rig.logs.count(kind: "scan-busy") == 1)
        await rig.stop()
    }

    @Test func sharingScannerTakesOverWhenTheOtherScanStops() async throws {
        // First parameters refused (bluetoothd scanning); after a silent period the watchdog
        // tries again, the controller accepts, and our own scan's reports arrive.
        let rig = try Rig(
            script: .init(statusOverrides: [0x200B: [0x0C]], reportBatches: [[ScaleReports.weightScale]]),
            configuration: HCIScannerConfiguration(silencePeriod: .milliseconds(100), commandTimeout: patientCommandTimeout))
        try await rig.start()
        // Not the state right after start: on a loaded machine the watchdog may already have
        // taken over before the test looks. The log and the commands say what happened.
        #expect(rig.logs.count(kind: "scan-busy") == 1)
        let advertisement = try await take(1, from: rig.scanner.events).first?.advertisement
        #expect(advertisement?.address == ScaleReports.weightScaleAddress)
        #expect(await rig.scanner.state == .scanning)
        let scanCommands = await rig.controller.commands.filter { $0[2] == 0x20 && ($0[1] == 0x0B || $0[1] == 0x0C) }
        #expect(Array(scanCommands.prefix(3)) == [
            hex("01 0b 20 07 00 60 00 30 00 00 00"),    // refused: another host scans
            hex("01 0b 20 07 00 60 00 30 00 00 00"),    // the watchdog's retry, accepted
            hex("01 0c 20 02 01 00"),
        ])
        #expect(await rig.scanner.statistics.commandsDisallowed == 1)
        #expect(rig.logs.count(kind: "scan-own") == 1)
        await rig.stop()
    }

    @Test func silentControllerIsRestartedAndReportsResume() async throws {
        let rig = try Rig(
            script: .init(reportBatches: [[ScaleReports.miScale], [ScaleReports.weightScale]]),
            configuration: HCIScannerConfiguration(silencePeriod: .milliseconds(100), commandTimeout: patientCommandTimeout))
        try await rig.start()
        let events = try await take(2, from: rig.scanner.events).compactMap(\.advertisement)
        #expect(events.map(\.address) == [ScaleReports.miScaleAddress, ScaleReports.weightScaleAddress])
        let scanCommands = await rig.controller.commands.filter { $0[2] == 0x20 && ($0[1] == 0x0B || $0[1] == 0x0C) }
        #expect(Array(scanCommands.prefix(5)) == [
            hex("01 0b 20 07 00 60 00 30 00 00 00"),
            hex("01 0c 20 02 01 00"),
            hex("01 0c 20 02 00 00"),
            hex("01 0b 20 07 00 60 00 30 00 00 00"),
            hex("01 0c 20 02 01 00"),
        ])
        await rig.stop()
        // One incident, logged once, ended by the second batch. Once the last report arrived the
        // controller is silent again, so a slow test may see a second incident start: the order
        // of the records is asserted, not their total.
        let incidents = rig.logs.all.map(\.kind).filter { $0 == "scan-silence" || $0 == "scan-resumed" }
        #expect(Array(incidents.prefix(2)) == ["scan-silence", "scan-resumed"])
        #expect(await rig.scanner.statistics.silenceIncidents == rig.logs.count(kind: "scan-silence"))
    }

    @Test func aControllerThatStaysQuietIsLoggedOncePerIncident() async throws {
        // No report ever: one incident however late the watchdog's restarts run (a report the
        // scanner handled after a first restart would end that incident and let a second begin).
        let rig = try Rig(
            configuration: HCIScannerConfiguration(silencePeriod: .milliseconds(50), commandTimeout: patientCommandTimeout))
        try await rig.start()
        // Three restarts: the first enable plus three (disable, enable) pairs.
        _ = try await rig.controller.waitForCommands(opcode: 0x200C, count: 1 + 2 * 3)
        await rig.stop()
        #expect(await rig.scanner.statistics.watchdogRestarts >= 3)
        #expect(await rig.scanner.statistics.silenceIncidents == 1)
        #expect(rig.logs.count(kind: "scan-silence") == 1)
        #expect(rig.logs.all.first { $0.kind == "scan-silence" }?.level == .warning)
    }

    @Test func controllerThatNeverAnswersTimesOut() async throws {
        let rig = try Rig(script: .init(answersCommands: false),
                          configuration: HCIScannerConfiguration(silencePeriod: nil, commandTimeout: .milliseconds(100)))
        await rig.controller.start()
        await #expect(throws: HCIScannerError.commandTimedOut(.leReadLocalSupportedFeatures, after: .milliseconds(100))) {
            try await rig.scanner.start()
        }
        #expect(await rig.scanner.state == .stopped(.closedLocally))
        #expect(try await drain(rig.scanner.events).isEmpty)
        await rig.controller.stop()
    }

    @Test func otherCommandFailuresAreErrors() async throws {
        let rig = try Rig(script: .init(statusOverrides: [0x200B: [0x12]]))
        await rig.controller.start()
        await #expect(throws: HCIScannerError.commandFailed(.leSetScanParameters, HCIStatus(rawValue: 0x12))) {
            try await rig.scanner.start()
        }
        await rig.controller.stop()
    }

    @Test func exclusiveModeInitialisesTheController() async throws {
        let rig = try Rig(configuration: HCIScannerConfiguration(initializesController: true, silencePeriod: nil,
                                                                 commandTimeout: patientCommandTimeout))
        try await rig.start()
        #expect(await rig.controller.commands == [
            hex("01 03 0c 00"),
            hex("01 01 0c 08 ff ff ff ff ff 1f 00 20"),
            hex("01 03 20 00"),
            hex("01 01 20 08 1f 00 00 00 00 00 00 00"),
            hex("01 0b 20 07 00 60 00 30 00 00 00"),
            hex("01 0c 20 02 01 00"),
        ])
        await rig.stop()
    }

    @Test func stopDisablesTheScanAndFinishesTheEvents() async throws {
        let rig = try Rig()
        try await rig.start()
        await rig.scanner.stop()
        #expect(await rig.controller.commands.last == hex("01 0c 20 02 00 00"))
        #expect(await rig.controller.isScanning == false)
        #expect(try await drain(rig.scanner.events).isEmpty)
        #expect(await rig.scanner.state == .stopped(.closedLocally))
        await rig.controller.stop()
    }

    @Test func stoppingAScannerThatNeverStartedFinishesItsEvents() async throws {
        let rig = try Rig()
        await rig.scanner.stop()
        #expect(try await drain(rig.scanner.events).isEmpty)
        #expect(await rig.scanner.state == .stopped(.closedLocally))
        await #expect(throws: HCIScannerError.alreadyStarted) { try await rig.scanner.start() }
        await rig.controller.stop()
    }

    @Test func controllerGoingAwayEndsTheScanWithOneLog() async throws {
        let rig = try Rig()
        try await rig.start()
        await rig.controller.stop()
        #expect(try await drain(rig.scanner.events).isEmpty)
        #expect(await rig.scanner.state == .stopped(.closedByPeer))
        #expect(rig.logs.count(kind: "controller-gone") == 1)
        await rig.scanner.stop()
    }

    @Test func garbageFromTheControllerIsCountedNotFatal() async throws {
        let rig = try Rig()
        try await rig.start()
        try await rig.controller.emit([0x04, 0x3E, 0x20, 0x02])           // announces 32 bytes, has 1
        try await rig.controller.emit([0x02, 0x00, 0x20, 0x00])           // ACL, not an event
        try await rig.controller.emit(hex("04 3e 0c 02 01 00 00 3c 16 16 17 26 2c 1e 02"))  // report cut short
        try await rig.controller.emit(ScaleReports.weightScale)
        let advertisement = try await take(1, from: rig.scanner.events).first?.advertisement
        #expect(advertisement?.address == ScaleReports.weightScaleAddress)
        #expect(await rig.scanner.statistics.malformedEvents == 3)
        await rig.stop()
    }
}
