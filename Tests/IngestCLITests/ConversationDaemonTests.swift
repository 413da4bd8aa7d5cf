import BLESimulators
import BLEWire
import BlueZTransport
import BuiltinAdapters
import Foundation
import HealthModel
import Logging
import SQLiteStore
import Synchronization
import TestSupport
import Testing
import Transport
@testable import IngestRuntime

/// Conversations through the daemon over socketpairs: a simulated controller advertises a
/// device, the daemon connects, and the adapter's conversation talks to a simulated peripheral
/// that answers the device's protocol.
@Suite(.serialized) struct ConversationDaemonTests {
    static let band = BLEAddress("F9:E5:10:60:E8:60")!

    /// The peripherals the daemon connected to.
    final class PeripheralList: Sendable {
        private let list = Mutex<[SimulatedPeripheral]>([])
        func add(_ peripheral: SimulatedPeripheral) { list.withLock { $0.append(peripheral) } }
        var all: [SimulatedPeripheral] { list.withLock { $0 } }
    }

    /// Runs the daemon once (`listen` long) against a controller advertising `name` (and
    /// `services`, and after them `manufacturerData` in a report of its own) as connectable; each connection gets a peripheral serving `profile` with `responder`.
    func runDaemon(store: String, name: String, services: [UInt16] = [], manufacturerData: (company: UInt16, payload: [UInt8])? = nil,
                   profile: SimulatedProfile,
                           responder: (any SimulatedResponder)?, security: SimulatedSecurity = .none,
                           peripherals: PeripheralList = PeripheralList(), options: [String: String] = [:],
                           listen: Duration = .seconds(6),
                           log: RecordingLogHandler = RecordingLogHandler(),
                           until done: (@Sendable () -> Bool)? = nil) async throws {
        let (hostEnd, controllerEnd) = try SocketPair.make()
        var data = ADStructure.flags(0x06) + ADStructure.completeLocalName(name)
        if !services.isEmpty { data += ADStructure.serviceUUIDs16(services) }
        let controller = try SimulatedController(
            descriptor: controllerEnd,
            script: SimulatedController.Script(reportBatches: [[
                AdvertisingReportBuilder.legacy(eventType: 0x00, address: Self.band, data: data),
                AdvertisingReportBuilder.legacy(eventType: 0x00, address: Self.band, data: data),
            ] + (manufacturerData.map { manufacturer in
                // A frame of its own (with the name, a 19-byte payload passes the 31 bytes of a legacy report).
                [AdvertisingReportBuilder.legacy(
                    eventType: 0x00, address: Self.band,
                    data: ADStructure.flags(0x06) + ADStructure.manufacturerData(company: manufacturer.company, manufacturer.payload))]
            } ?? [])]))
        await controller.start()
        let link = BluetoothLink(
            openScanner: { options in HCIScanner(channel: try PacketChannel(adopting: hostEnd), log: options.log) },
            connect: { address, type, options in
                let (clientEnd, peripheralEnd) = try SocketPair.make()
                let peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: profile, responder: responder,
                                                         security: security)
                await peripheral.start()
                peripherals.add(peripheral)
                let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                        peer: GATTPeer(address: address, addressType: type, connectionHandle: 0x0040),
                                        configuration: GATTClientConfiguration(requestTimeout: .seconds(30)), log: options.log,
                                        securityRaiser: { _ in await peripheral.encryptLink() })
                await client.start()
                return client
            })
        var backend = BluetoothBackend(adapters: BuiltinAdapters.bluetooth, link: link, controllerName: "sim0",
                                       timeZone: TimeZone(identifier: "Europe/Berlin")!, onceListen: listen)
        backend.options = options
        let logger = Logger(label: "test", handler: log)
        if let done {
            try await runDaemonUntil(store: store, backend: backend, logger: logger, until: done)
        } else {
            let daemon = Daemon(options: DaemonOptions(storePath: store, once: true), backends: [backend], logger: logger)
            try await daemon.run()
        }
    }

    /// The band's step count arrives as one StepCount for its day; its clock is set after the
    /// count was committed; a later sync with more steps replaces the day's sample.
    @Test func theBandsStepCountIsReadThenItsClockSet() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "dsd6-band", "stepCount"])
        let band = SimulatedDSD6Band(steps: 4321)
        let log = RecordingLogHandler()
        // The clock is set last, after the commit: the daemon runs until the band received it.
        let clockSets: @Sendable () -> Int = { band.commands.filter { $0.hasPrefix("AT+DT=") }.count }
        try await runDaemon(store: scenario.store, name: "DS-D6", profile: SimulatedDSD6Band.profile,
                            responder: band, log: log) { clockSets() == 1 }
        #expect(Array(band.commands.prefix(3)) == ["AT+TOPACE=0", "AT+TIMEZONE", "AT+SN"],
                "\(band.commands) \(log.records.map(\.message))")
        let clock = try #require(band.commands.last)
        #expect(clock.hasPrefix("AT+DT=") && clock.count == 20, "\(clock)")
        #expect(!band.commands.contains { $0.hasPrefix("AT+PACE") }, "the band's count is never reset")

        band.setSteps(6000)
        try await runDaemon(store: scenario.store, name: "DS-D6", profile: SimulatedDSD6Band.profile,
                            responder: band) { clockSets() == 2 }
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .stepCount)
        #expect(samples.map(\.quantity.value) == [6000], "the day's later, higher count replaces the first")
        #expect(samples.first?.metadata.syncIdentifier?.hasPrefix("dsd6/567890123456/") == true)
        #expect(samples.first?.device?.localIdentifier == Self.band.description)
    }

    func glucoseSequenceNumbers(_ store: String) throws -> [Int] {
        let health = try HealthStore(path: store)
        defer { health.close() }
        return try health.samples(type: .bloodGlucose).compactMap { sample in
            guard case .number(let sequence) = sample.metadata.entries["IngestGlucoseSequenceNumber"] else { return nil }
            return Int(sequence)
        }.sorted()
    }

    /// A glucose meter with 50 stored records: the first contact asks for all and gets 50;
    /// after 3 new readings the next contact asks for sequence numbers >= 51 and gets those 3.
    @Test func aGlucoseMetersStoredRecordsArriveOnceEachAcrossReconnects() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bloodGlucose"])
        let meter = SimulatedGlucoseMeter(records: 50)
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(meter.requests == [[0x01, 0x01]], "first contact: report all stored records")
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...50))

        meter.addRecords(3)
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(meter.requests.last == [0x01, 0x03, 0x01, 51, 0], "afterwards: records >= last seen + 1")
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...53))
        let health = try HealthStore(path: scenario.store)
        defer { health.close() }
        let first = try #require(try health.samples(type: .bloodGlucose).first { sample in
            sample.metadata.entries["IngestGlucoseSequenceNumber"] == .number(1)
        })
        #expect(first.quantity == Quantity(value: 96, unit: .milligramsPerDeciliter))
    }

    /// The meter drops the link after record 20: those 20 are kept; the next contact asks for
    /// >= 21 and the other 30 arrive, none twice.
    @Test func aLinkDroppedMidTransferKeepsTheRecordsAndTheRestComesNextTime() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bloodGlucose"])
        let meter = SimulatedGlucoseMeter(records: 50)
        meter.dropLink(afterRecords: 20)
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...20))
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(meter.requests == [[0x01, 0x01], [0x01, 0x03, 0x01, 21, 0]])
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...50))
    }

    /// A meter bursting 600 stored records at once (a full memory; the daemon commits each as
    /// it takes it, so most wait in the link meanwhile): all 600 are stored, none dropped, and
    /// the next contact asks only for what came after.
    @Test func aMeterBurstingSixHundredRecordsGivesAllOfThem() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bloodGlucose"])
        let meter = SimulatedGlucoseMeter(records: 600)
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6), log: log)
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...600))
        #expect(!log.records.contains { $0.message.contains("notification") && $0.message.contains("past the") },
                "\(log.records.map(\.message))")
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(meter.requests.last == [0x01, 0x03, 0x01, 0x59, 0x02], "records >= 601: \(meter.requests)")
    }

    /// A scale whose clock is writable: the daemon sets it (its clock, in the local zone)
    /// before subscribing, and the reading the scale stamps with that clock lands at that time.
    @Test func aScalesClockIsSetBeforeItsReadingsAreTaken() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bodyMass"])
        let scale = SimulatedCurrentTimeScale()
        let before = Date()
        try await runDaemon(store: scenario.store, name: "Clock Scale", services: [0x181D],
                            profile: SimulatedCurrentTimeScale.profile, responder: scale, listen: .seconds(6))
        let written = try #require(scale.writtenTime)
        #expect(written.count == 10)
        #expect(written[9] == 0x01, "adjust reason: manual time update")
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let stamped = try #require(calendar.date(from: DateComponents(
            year: Int(written[0]) | Int(written[1]) << 8, month: Int(written[2]), day: Int(written[3]),
            hour: Int(written[4]), minute: Int(written[5]), second: Int(written[6]))))
        #expect(abs(stamped.timeIntervalSince(before)) < 30, "the daemon's clock in the local zone: \(stamped) vs \(before)")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        #expect(samples.map(\.quantity.value) == [77.5])
        #expect(samples.first?.start == stamped)
    }

    /// A scale that answers Insufficient Encryption: the daemon asks for an encrypted link
    /// (the kernel pairs "Just Works"), repeats the subscription and takes the reading.
    @Test func aDeviceDemandingEncryptionGetsAnEncryptedLink() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bodyMass"])
        let peripherals = PeripheralList()
        try await runDaemon(store: scenario.store, name: "WS", services: [0x181D], profile: .weightScale, responder: nil,
                            security: .encryption, peripherals: peripherals, listen: .seconds(6))
        let peripheral = try #require(peripherals.all.first)
        #expect(await peripheral.encrypted)
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass).map(\.quantity.value) == [77.5])
    }

    /// A scale that wants a passkey bond: refused even encrypted; the log names the device and
    /// the command that pairs it.
    @Test func aDeviceWantingAPasskeyIsReportedWithWhatToDo() async throws {
        let scenario = try Scenario()
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "WS", services: [0x181D], profile: .weightScale, responder: nil,
                            security: .passkey, listen: .seconds(6), log: log)
        let messages = log.records.map(\.message)
        #expect(messages.contains { $0.contains("needs pairing with a passkey") && $0.contains("bluetoothctl pair F9:E5:10:60:E8:60") },
                "\(messages)")
    }

    /// A two-user scale: with user 2's index and consent code the scale hands over user 2's
    /// weighing, kept with its user index; a wrong code is refused and nothing arrives.
    @Test func aMultiUserScaleGivesTheConfiguredUsersReadings() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bodyMass"])
        let scale = SimulatedUserDataScale()
        try await runDaemon(store: scenario.store, name: "Family", services: [0x181D], profile: SimulatedUserDataScale.profile,
                            responder: scale, options: ["uds-user-index": "2", "uds-consent-code": "5678"],
                            listen: .seconds(6))
        #expect(scale.received == [[0x02, 2, 0x2E, 0x16]], "consent for user 2 with code 5678")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        #expect(samples.map(\.quantity.value) == [82.5])
        #expect(samples.first?.metadata.entries["IngestDeviceUserID"] == .number(2))

        let refused = try Scenario()
        await refused.run(["auth", "grant", "gatt-health", "bodyMass"])
        let log = RecordingLogHandler()
        try await runDaemon(store: refused.store, name: "Family", services: [0x181D], profile: SimulatedUserDataScale.profile,
                            responder: SimulatedUserDataScale(), options: ["uds-user-index": "1", "uds-consent-code": "9999"],
                            listen: .seconds(6), log: log)
        let other = try HealthStore(path: refused.store)
        defer { other.close() }
        #expect(try other.samples(type: .bodyMass).isEmpty)
        #expect(log.records.contains { $0.message.contains("uds-refused") }, "\(log.records.map(\.message))")
    }

    /// A Beurer BF788 through the daemon (`beurer-standard-scale`): consent for user 1 with the
    /// configured code, take measurement, then a stored weighing with its all-zero composition
    /// placeholder and the live weighing (the real frames of ble-scale-sync's BF720/BF788 tests):
    /// two weighings, one body fat, all with user index 1. Without a code nothing is asked.
    @Test func aBeurerStandardScaleGivesTheConsentingUsersWeighings() async throws {
        let weighings: [(weight: [UInt8], composition: [UInt8])] = [
            (hex("0e783eea07050c12353601ee002607"), hex("9803000096230000000000000000")),
            (hex("0e205cea07070e1729200140018007"), hex("9803f300962389014042fa2f550f")),
        ]
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "beurer-standard-scale", "bodyMass", "bodyFatPercentage"])
        let scale = SimulatedStandardBeurerScale(weighings: weighings)
        try await runDaemon(store: scenario.store, name: "BF788", services: [0x181D, 0x181B], profile: SimulatedStandardBeurerScale.profile,
                            responder: scale, options: ["uds-user-index": "1", "uds-consent-code": "3752"],
                            listen: .seconds(6))
        #expect(scale.writes == [[0x02, 1, 0xA8, 0x0E], [0x00]], "consent for user 1 with code 3752, then take measurement")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let masses = try store.samples(type: .bodyMass).sorted { $0.start < $1.start }
        #expect(masses.map { ($0.quantity.value * 100).rounded() / 100 } == [79.96, 117.92])
        #expect(masses.allSatisfy { $0.metadata.entries["IngestDeviceUserID"] == .number(1) })
        let fat = try store.samples(type: .bodyFatPercentage)
        #expect(fat.map { ($0.quantity.value * 1000).rounded() / 1000 } == [0.243], "the placeholder gives no body fat")
        #expect(fat.first?.start == masses.last?.start, "the composition carries its weighing's time")
        #expect(fat.first?.metadata.entries["IngestDeviceUserID"] == .number(1))

        let unconfigured = try Scenario()
        await unconfigured.run(["auth", "grant", "beurer-standard-scale", "bodyMass"])
        let log = RecordingLogHandler()
        let silent = SimulatedStandardBeurerScale(weighings: weighings)
        try await runDaemon(store: unconfigured.store, name: "BF788", services: [0x181D, 0x181B],
                            profile: SimulatedStandardBeurerScale.profile, responder: silent, listen: .seconds(6), log: log)
        #expect(silent.writes.isEmpty)
        #expect(log.records.contains { $0.message.contains("consent-code-needed") }, "\(log.records.map(\.message))")
    }

    /// A BF788 with its user data (the values its #229 capture held, as ble-scale-sync's tests
    /// record them): once the consent is accepted the conversation reads the date of birth,
    /// gender, height and activity level and writes each back unchanged, in that order, then
    /// writes `01 00 00 00` to the Database Change Increment, and only then asks for the
    /// measurement. The user's data on the scale is left as it was. Failed before: nothing was
    /// written between the consent and take measurement.
    @Test func aBeurerBF788sUserDataIsConfirmedBeforeTheMeasurement() async throws {
        let weighings: [(weight: [UInt8], composition: [UInt8])] = [
            (hex("0e205cea07070e1729200140018007"), hex("9803f300962389014042fa2f550f")),
        ]
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "beurer-standard-scale", "bodyMass", "bodyFatPercentage"])
        let scale = SimulatedStandardBeurerScale(weighings: weighings)
        try await runDaemon(store: scenario.store, name: "BF788", services: [0x181D, 0x181B],
                            profile: SimulatedStandardBeurerScale.profileWithUserData, responder: scale,
                            options: ["uds-user-index": "1", "uds-consent-code": "3752"], listen: .seconds(6))
        let written = zip(scale.writtenCharacteristics, scale.writes).map { uuid, value in
            "\(uuid): " + value.map { String(format: "%02x", $0) }.joined(separator: " ")
        }
        #expect(written == [
            "\(BLEUUID(0x2A9F)): 02 01 a8 0e",
            "\(BLEUUID(0x2A85)): bf 07 08 08",
            "\(BLEUUID(0x2A8C)): 00",
            "\(BLEUUID(0x2A8E)): c0 00",
            "\(BLEUUID(0xFFF3)): 03",
            "\(BLEUUID(0x2A99)): 01 00 00 00",
            "\(BLEUUID(0x0006)): 00",
        ], "consent, the user data written back as read, the change increment, then take measurement")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass).map { ($0.quantity.value * 100).rounded() / 100 } == [117.92])
        #expect(try store.samples(type: .bodyFatPercentage).map { ($0.quantity.value * 1000).rounded() / 1000 } == [0.243])
    }

    /// A consent code alone registers a new user (Register New User `01 <code LE>`, index 2
    /// given); the next contact gives consent for the remembered index 2 with that code.
    @Test func aBeurerStandardScaleRegistersANewUserThenConsentsWithItsIndex() async throws {
        let weighings: [(weight: [UInt8], composition: [UInt8])] = [
            (hex("0e205cea07070e1729200140018007"), hex("9803f300962389014042fa2f550f")),
        ]
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "beurer-standard-scale", "bodyMass"])
        let scale = SimulatedStandardBeurerScale(weighings: weighings)
        try await runDaemon(store: scenario.store, name: "BF720", services: [0x181D, 0x181B],
                            profile: SimulatedStandardBeurerScale.profile, responder: scale,
                            options: ["uds-consent-code": "4711"], listen: .seconds(6))
        #expect(scale.writes == [[0x01, 0x67, 0x12], [0x00]], "register with code 4711 (0x1267), then take measurement")
        scale.disconnect()
        try await runDaemon(store: scenario.store, name: "BF720", services: [0x181D, 0x181B],
                            profile: SimulatedStandardBeurerScale.profile, responder: scale,
                            options: ["uds-consent-code": "4711"], listen: .seconds(6))
        #expect(Array(scale.writes.dropFirst(2)) == [[0x02, 2, 0x67, 0x12], [0x00]], "consent for the remembered index 2")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass).map(\.quantity.value).map { ($0 * 100).rounded() / 100 } == [117.92],
                "the weighing sent at both contacts is stored once")
    }

    /// A scale that would send 150 stored weighings (300 values) at once: the conversation closes
    /// the link after reading 200 values and keeps what they gave (the link's queue may drop some
    /// of the burst before they are read, so which 200 is not fixed; each value read gives one
    /// BodyMass or one BodyFatPercentage).
    @Test func aBeurerStandardScalesValuesAreCappedPerContact() async throws {
        let composition = hex("9803f300962389014042fa2f550f")
        let weighings: [(weight: [UInt8], composition: [UInt8])] = (0..<150).map { index in
            // 117.92 kg, user 1, BMI 32.0, height 1.92 m, on 2026-07-01 at 00:00 plus `index` minutes.
            let weight: [UInt8] = [0x0E, 0x20, 0x5C, 0xEA, 0x07, 0x07, 0x01, UInt8(index / 60), UInt8(index % 60), 0x00,
                                   0x01, 0x40, 0x01, 0x80, 0x07]
            return (weight, composition)
        }
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "beurer-standard-scale", "--all"])
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "BF788", services: [0x181D, 0x181B],
                            profile: SimulatedStandardBeurerScale.profile, responder: SimulatedStandardBeurerScale(weighings: weighings),
                            options: ["uds-user-index": "1", "uds-consent-code": "3752"], listen: .seconds(10), log: log)
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        // BeurerStandardScaleAdapter.maximumValuesPerContact = 200.
        let messages = log.records.map(\.message)
        let masses = try store.samples(type: .bodyMass).count
        #expect(masses + (try store.samples(type: .bodyFatPercentage).count) == 200, "\(messages.suffix(6))")
        #expect(masses >= 90 && masses <= 110, "\(masses)")
        #expect(messages.contains { $0.contains("value-cap") }, "\(messages.suffix(5))")
    }

    /// A Mi Body Composition Scale with two stored readings: both arrive and only then are they
    /// acknowledged; the next contact gets only the reading taken since. While the body mass type
    /// is undecided (the readings wait in the pending area) the scale is not told to forget them.
    @Test func aMiScalesHistoryIsAcknowledgedOnlyAfterTheCommit() async throws {
        let first = SimulatedMiScale.frame(weight: 72.45, impedance: 503, year: 2026, month: 11, day: 29, hour: 7, minute: 30, second: 0)
        let second = SimulatedMiScale.frame(weight: 72.1, impedance: 498, year: 2026, month: 11, day: 30, hour: 7, minute: 31, second: 5)
        let undecided = try Scenario()
        let waiting = SimulatedMiScale(frames: [first, second])
        try await runDaemon(store: undecided.store, name: "MIBFS", services: [0x181B], profile: SimulatedMiScale.profile,
                            responder: waiting, listen: .seconds(6))
        #expect(waiting.writes.contains([0x03]), "the transfer ran to its end: \(waiting.writes)")
        #expect(!waiting.writes.contains { $0.first == 0x04 }, "held readings are not acknowledged: \(waiting.writes)")

        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "xiaomi-scale", "bodyMass"])
        let scale = SimulatedMiScale(frames: [first, second])
        try await runDaemon(store: scenario.store, name: "MIBFS", services: [0x181B], profile: SimulatedMiScale.profile,
                            responder: scale, options: ["mi-scale-history-id": "7"], listen: .seconds(6))
        #expect(scale.writes == [[0x01, 0x96, 0x8A, 0xBD, 0x62], [0x01, 0xFF, 0xFF, 0x00, 0x07], [0x02], [0x03],
                                 [0x04, 0xFF, 0xFF, 0x00, 0x07]])
        #expect(scale.acknowledgedCount(id: 7) == 2)
        let clock = try #require(scale.clockWrites.first, "the scale's clock is set before the download")
        var berlin = Calendar(identifier: .gregorian)
        berlin.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let written = try #require(berlin.date(from: DateComponents(
            year: Int(clock[0]) | Int(clock[1]) << 8, month: Int(clock[2]), day: Int(clock[3]),
            hour: Int(clock[4]), minute: Int(clock[5]), second: Int(clock[6]))))
        #expect(clock.count == 10 && abs(written.timeIntervalSinceNow) < 60, "local time written: \(clock)")
        func weights() throws -> [Double] {
            let store = try HealthStore(path: scenario.store)
            defer { store.close() }
            return try store.samples(type: .bodyMass).map(\.quantity.value).sorted()
        }
        #expect(try weights() == [72.1, 72.45])

        scale.add([SimulatedMiScale.frame(weight: 71.9, impedance: 501, year: 2026, month: 11, day: 30, hour: 19, minute: 0, second: 0)])
        try await runDaemon(store: scenario.store, name: "MIBFS", services: [0x181B], profile: SimulatedMiScale.profile,
                            responder: scale, options: ["mi-scale-history-id": "7", "mi-scale-set-clock": "false"],
                            listen: .seconds(6))
        #expect(try weights() == [71.9, 72.1, 72.45])
        #expect(scale.clockWrites.count == 1, "mi-scale-set-clock=false leaves the clock alone")
        #expect(scale.acknowledgedCount(id: 7) == 3)
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let latest = try #require(try store.samples(type: .bodyMass).first { $0.quantity.value == 71.9 })
        #expect(latest.metadata.entries["IngestImpedanceOhm"] == .number(501))
    }

    /// A Yunmai Mini: the daemon writes the configured profile and its clock, starts a
    /// measurement, skips the settling frames and stores the finished weighing (body mass and the
    /// scale's body fat) at the scale's time, with the recognised user.
    @Test func aYunmaiScaleGivesItsFinishedWeighing() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "yunmai-scale", "bodyMass", "bodyFatPercentage"])
        let scale = SimulatedYunmaiScale(weightCentikilograms: 7530, resistance: 512, bodyFatCentipercent: 2350)
        let before = Date()
        try await runDaemon(store: scenario.store, name: "YUNMAI-SIGNAL-M1US", profile: SimulatedYunmaiScale.profile,
                            responder: scale, options: ["yunmai-user-id": "3", "yunmai-height-cm": "181", "yunmai-sex": "female"],
                            listen: .seconds(8))
        let commands = scale.commands
        #expect(commands.count == 3, "\(commands)")
        #expect(commands.first.map { Array($0.prefix(11)) } == [0x0D, 0x12, 0x10, 0x01, 0x00, 0x00, 0x00, 0x03, 181, 0x02, 30])
        #expect(commands.last == [0x0D, 0x05, 0x13, 0x00, 0x16])
        let clockCommand = try #require(commands.dropFirst().first)
        #expect(clockCommand.count == 14 && clockCommand[2] == 0x11)
        let written = Date(timeIntervalSince1970: TimeInterval(
            UInt32(clockCommand[3]) << 24 | UInt32(clockCommand[4]) << 16 | UInt32(clockCommand[5]) << 8 | UInt32(clockCommand[6])))
        #expect(abs(written.timeIntervalSince(before)) < 30)

        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let mass = try store.samples(type: .bodyMass)
        #expect(mass.map(\.quantity.value) == [75.3], "the settling frames are not samples")
        #expect(mass.first?.start == written.addingTimeInterval(5))
        #expect(mass.first?.metadata.entries["IngestDeviceUserID"] == .number(3))
        #expect(mass.first?.metadata.entries["IngestImpedanceOhm"] == .number(512))
        let fat = try store.samples(type: .bodyFatPercentage)
        #expect(fat.map(\.quantity.value) == [0.235])
    }

    /// A Sanitas SBF70 with two users (two saved weighings for the first, one for the second):
    /// greeted, its clock set, each user's weighings downloaded part by part with every part
    /// acknowledged, and erased on the scale only after the commit; while the types are undecided
    /// (held) nothing is erased; the next contact brings only the weighing saved since. Each
    /// sample carries the user's place on the scale, which a household person is assigned by.
    @Test func aBeurerScalesSavedWeighingsAreErasedOnlyAfterTheCommit() async throws {
        func weighing(_ time: UInt32, _ fiftyGrams: UInt16, fat: UInt16) -> SimulatedBeurerScale.Weighing {
            .init(time: time, weightFiftyGrams: fiftyGrams, impedance: 480, bodyFatPermille: fat, bodyMassIndexTenths: 243)
        }
        let users = [
            SimulatedBeurerScale.User(id: 101, initials: "ANN", birthYear: 1984,
                                      weighings: [weighing(1_764_400_000, 1_450, fat: 281), weighing(1_764_486_400, 1_446, fat: 279)]),
            SimulatedBeurerScale.User(id: 102, initials: "BOB", birthYear: 1979, weighings: [weighing(1_764_490_000, 1_702, fat: 0)]),
        ]
        let farewell: [UInt8] = [0xEA, 0x02]
        let undecided = try Scenario()
        let waiting = SimulatedBeurerScale(users: users)
        try await runDaemon(store: undecided.store, name: "SANITAS SBF70", profile: SimulatedBeurerScale.profile(),
                            responder: waiting, until: { waiting.writes.contains(farewell) })
        #expect(waiting.savedCounts == [101: 2, 102: 1], "held weighings are not erased: \(waiting.writes)")
        #expect(!waiting.writes.contains { $0.count > 1 && $0[1] == 0x43 })

        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "beurer-sanitas", "--all"])
        await scenario.run(["people", "add", "bob", "--scale-user-index", "2"])
        let scale = SimulatedBeurerScale(users: users)
        let before = Date()
        try await runDaemon(store: scenario.store, name: "SANITAS SBF70", profile: SimulatedBeurerScale.profile(),
                            responder: scale, until: { scale.writes.contains(farewell) })
        #expect(scale.savedCounts == [101: 0, 102: 0])
        let writes = scale.writes
        #expect(writes.first == [0xE6, 0x01])
        #expect(writes.dropFirst().first?.first == 0xE9 && abs(Double(scale.clock) - before.timeIntervalSince1970) < 30)
        #expect(writes.contains([0xE7, 0xF1, 0x34, 0x02, 0x02]), "the second user's info acknowledged")
        #expect(writes.filter { $0.starts(with: [0xE7, 0xF1, 0x42]) }.count == 6, "every part acknowledged: \(writes)")
        let deleteAnn: [UInt8] = [0xE7, 0x43, 0, 0, 0, 0, 0, 0, 0, 101]
        let lastAckOfAnn = try #require(writes.lastIndex(of: [0xE7, 0xF1, 0x42, 0x04, 0x04]))
        let deleteIndex = try #require(writes.firstIndex(of: deleteAnn))
        #expect(deleteIndex > lastAckOfAnn)
        #expect(writes.last == farewell)

        func bodyMass() throws -> [QuantitySample] {
            let store = try HealthStore(path: scenario.store)
            defer { store.close() }
            return try store.samples(type: .bodyMass).sorted { $0.start < $1.start }
        }
        let mass = try bodyMass()
        #expect(mass.map(\.quantity.value) == [72.5, 72.3, 85.1])
        #expect(mass.map { $0.metadata.entries[MetadataKey.deviceUserID] } == [.number(1), .number(1), .number(2)])
        #expect(mass.first?.start == Date(timeIntervalSince1970: 1_764_400_000))
        #expect(mass.first?.metadata.entries["IngestScaleUserInitials"] == .string("ANN"))
        let store = try HealthStore(path: scenario.store)
        let fat = try store.samples(type: .bodyFatPercentage).map(\.quantity.value).sorted()
        let bobsSamples = try store.sampleCount(of: store.person(named: "bob"))
        store.close()
        #expect(bobsSamples == 2, "user 2's body mass and BMI go to the person with scale user index 2")
        #expect(fat == [0.279, 0.281], "the scale computed no body fat for the second user")

        scale.add(weighing(1_764_572_800, 1_440, fat: 277), user: 101)
        try await runDaemon(store: scenario.store, name: "SANITAS SBF70", profile: SimulatedBeurerScale.profile(),
                            responder: scale, until: { scale.writes.filter { $0 == farewell }.count == 2 })
        #expect(try bodyMass().map(\.quantity.value) == [72.5, 72.3, 85.1, 72.0])
        #expect(scale.savedCounts == [101: 0, 102: 0])
    }

    /// A HidrateSpark bottle with two stored sips: both are taken, one at a time, as water intake
    /// of capacity × share, at the time the bottle says they were taken.
    @Test func aBottlesSipsBecomeWaterIntake() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "hidrate-spark", "dietaryWater"])
        let bottle = SimulatedHidrateBottle(sips: [(percent: 20, secondsAgo: 600), (percent: 10, secondsAgo: 60)])
        let before = Date()
        try await runDaemon(store: scenario.store, name: "h2o4152D", profile: SimulatedHidrateBottle.profile,
                            responder: bottle, options: ["hidrate-bottle-ml": "500"], listen: .seconds(6))
        #expect(bottle.storedSips == 0)
        #expect(bottle.sipRequests == 2, "one to start, one for the sip announced after the first")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let sips = try store.samples(type: .dietaryWater).sorted { $0.start < $1.start }
        #expect(sips.map(\.quantity.value) == [100, 50])
        let first = try #require(sips.first)
        #expect(abs(first.start.timeIntervalSince(before) + 600) < 30, "\(first.start) vs \(before)")
    }
}
