import AdapterKit
import Foundation
import HealthModel
import Transport

/// Colmi / QRing smart rings (R02 to R12) over their UART-style service: the ring's clock set,
/// then each day's heart-rate log and step details since the last contact. See README.md.
public struct ColmiRingAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "colmi-ring"
    /// The rings' advertised names: `R02_` to `R12_` and four hex digits.
    public static let namePattern = "^R(0[2-9]|1[0-2])_[0-9A-Fa-f]{4}$"

    public let descriptor = AdapterDescriptor(
        id: ColmiRingAdapter.id,
        name: "Colmi / QRing smart rings (R02-R12)",
        version: "1.0.0",
        summary: "Heart-rate log, step counts and hourly SpO2 of Colmi/QRing rings, their clock set at each contact",
        matches: [.ble(BLEMatch(namePattern: ColmiRingAdapter.namePattern))],
        produces: [.heartRate, .stepCount, .distanceWalkingRunning, .oxygenSaturation],
        how: "GATT conversation: the ring's clock set, each day's heart-rate log and step details read since the last contact, "
            + "then today's hourly SpO2 log",
        models: [
            AdapterModel(maker: "Colmi", name: "R02, R03, R06 and kin (QRing app)", offers: "heart-rate log, steps, SpO2, sleep",
                         reads: [.heartRate, .stepCount, .distanceWalkingRunning, .oxygenSaturation],
                         note: "SpO2 as today's hourly log, each hour the mean of its lowest and highest; sleep not read",
                         capture: "r02-day"),
            AdapterModel(maker: "Colmi", name: "R09, R10, R12", offers: "heart-rate log, steps, SpO2, sleep",
                         reads: [.heartRate, .stepCount, .distanceWalkingRunning, .oxygenSaturation],
                         note: "the same protocol; sleep not read", capture: "r09-spo2"),
        ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        ColmiRingConversation(device: device, context: context)
    }
}

/// The ring's service (Nordic-UART-like): commands written to RX, answers notified on TX.
public enum ColmiUUID {
    public static let service = BLEUUID(high: 0x6E40_FFF0_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    public static let rx = BLEUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    public static let tx = BLEUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    /// The big-data service's request characteristic (written).
    public static let bigDataRequest = BLEUUID(high: 0xDE5B_F72A_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
    /// The big-data service's answer characteristic (notified).
    public static let bigDataAnswer = BLEUUID(high: 0xDE5B_F729_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
}

/// One contact: subscribe, set the ring's clock (UTC, as the public clients do), then for each
/// day from the last one committed (at first contact today only; at most
/// ``maximumDays``) through today, read its heart-rate log and its step details and deliver
/// them; only once a day's records are committed is it remembered, so a dropped link repeats
/// that day next time (the sync identifiers make the repeat a no-op). Then, when the ring has
/// the big-data service, today's hourly SpO2 log is asked for and delivered. The ring keeps its
/// memory: nothing is erased.
///
/// Records: `HeartRate` per measured slot (sync identifier `colmi/<address>/hr/<Unix seconds>`),
/// `StepCount` and `DistanceWalkingRunning` per quarter hour (`colmi/<address>/steps/<Unix
/// seconds>`, `…/distance/…`), `OxygenSaturation` per hour with a reading, at the hour's start,
/// the mean of its lowest and highest (`colmi/<address>/spo2/<Unix seconds>`).
final class ColmiRingConversation: GATTConversation {
    static let answerTimeout: Duration = .seconds(10)
    /// Days read at most in one contact (the ring keeps about a week).
    static let maximumDays = 7
    /// The memory key of the last day (UTC midnight, Unix seconds) whose records were committed.
    static let lastDayKey = "last-day"
    /// The memory key that holds `silent` while the ring has left its SpO2 request unanswered
    /// since it last answered one (`answered` after): the explanation is logged once, not at
    /// every contact.
    static let oxygenSaturationSilenceKey = "spo2-silent"
    /// Values read at most while waiting for one answer.
    static let maximumPacketsPerAnswer = 128
    var maximumValuesPerContact: Int {
        Self.maximumDays * 2 * Self.maximumPacketsPerAnswer + Self.maximumPacketsPerAnswer + ColmiBigData.Collector.maximumPieces
    }

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    private var address: String { device.address.description }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        guard database.characteristic(ColmiUUID.rx) != nil else { throw GATTConversationError.characteristicMissing(ColmiUUID.rx) }
        guard database.characteristic(ColmiUUID.tx) != nil else { throw GATTConversationError.characteristicMissing(ColmiUUID.tx) }
        let withResponse = (database.characteristic(ColmiUUID.rx)?.properties ?? 0) & 0x08 != 0
        try await link.subscribe(to: ColmiUUID.tx, mode: .notifications)

        let now = await link.now()
        try await link.write(ColmiPacket.setTime(now), to: ColmiUUID.rx, withResponse: withResponse)
        _ = try? await answer(ColmiPacket.setTime, over: link)  // its capabilities: nothing we read

        let today = (now.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        let remembered = await context.memory?.recall(Self.lastDayKey, device: address).flatMap(TimeInterval.init)
        let first = max(remembered ?? today, today - TimeInterval((Self.maximumDays - 1) * 86_400))
        for day in stride(from: min(first, today), through: today, by: 86_400) {
            var output = AdapterOutput()
            let complete = try await readDay(Date(timeIntervalSince1970: day), daysAgo: UInt8(((today - day) / 86_400).rounded()),
                                             over: link, withResponse: withResponse, into: &output)
            let receipt = try await deliver(output)
            guard complete else {
                await link.disconnect()
                return
            }
            if receipt.deviceMayForget {
                try? await context.memory?.remember(String(Int(day)), for: Self.lastDayKey, device: address)
            }
        }
        if let request = database.characteristic(ColmiUUID.bigDataRequest), database.characteristic(ColmiUUID.bigDataAnswer) != nil {
            var output = AdapterOutput()
            try await readOxygenSaturation(today: Date(timeIntervalSince1970: today), over: link,
                                           withResponse: request.properties & 0x08 != 0, into: &output)
            _ = try await deliver(output)
        }
        await link.disconnect()
    }

    /// Reads one day's log and steps into `output`; false when an answer was malformed (rejected).
    private func readDay(_ day: Date, daysAgo: UInt8, over link: any GATTConversationLink, withResponse: Bool,
                         into output: inout AdapterOutput) async throws -> Bool {
        try await link.write(ColmiPacket.heartRateLog(day: day), to: ColmiUUID.rx, withResponse: withResponse)
        var log = ColmiHeartRateLog.Collector()
        var malformed = false
        let heartRate = try await answers(ColmiPacket.heartRateLog, over: link) { packet in
            do {
                switch try log.take(packet.value) {
                case .more: return false
                case .noLog: return true
                case .log(let found):
                    for reading in found.measured { take(heartRate: reading.beatsPerMinute, at: reading.time, into: &output) }
                    return true
                }
            } catch let error as ColmiError {
                output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: packet.time)
                malformed = true
                return true
            }
        }
        if malformed { return false }
        if case .silent(let error) = heartRate { throw error }
        try await link.write(ColmiPacket.steps(daysAgo: daysAgo), to: ColmiUUID.rx, withResponse: withResponse)
        var steps = ColmiSteps.Collector()
        let stepDetails = try await answers(ColmiPacket.steps, over: link) { packet in
            do {
                switch try steps.take(packet.value) {
                case .more: return false
                case .noSteps: return true
                case .day(let quarters):
                    for quarter in quarters { take(quarter, into: &output) }
                    return true
                }
            } catch let error as ColmiError {
                output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: packet.time)
                malformed = true
                return true
            }
        }
        if case .silent(let error) = stepDetails { throw error }
        return stepDetails == .done && !malformed
    }

    /// Asks for today's SpO2 log on the big-data service and takes its hours into `output`; a
    /// malformed answer is a rejection naming its bytes. A ring that stays silent (a firmware that
    /// has the service but keeps no SpO2 log) ends the contact normally: its heart rate and steps
    /// are already delivered, and the explanation says why no SpO2 arrived.
    private func readOxygenSaturation(today: Date, over link: any GATTConversationLink, withResponse: Bool,
                                      into output: inout AdapterOutput) async throws {
        try await link.subscribe(to: ColmiUUID.bigDataAnswer, mode: .notifications)
        try await link.write(ColmiBigData.oxygenSaturationToday, to: ColmiUUID.bigDataRequest, withResponse: withResponse)
        var answer = ColmiBigData.Collector(kind: ColmiBigData.oxygenSaturation)
        let end = try await link.notifications(matching: { $0.characteristicUUID == ColmiUUID.bigDataAnswer },
                                               silence: Self.answerTimeout, maximum: ColmiBigData.Collector.maximumPieces) { piece in
            do {
                guard let data = try answer.take(piece.value) else { return false }
                for hour in try ColmiOxygenHour.hours(data, today: today) { take(hour, into: &output) }
            } catch let error as ColmiError {
                output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: piece.time)
            }
            return true
        }
        let saidBefore = await context.memory?.recall(Self.oxygenSaturationSilenceKey, device: address) == "silent"
        guard case .silent = end else {
            if saidBefore { try? await context.memory?.remember("answered", for: Self.oxygenSaturationSilenceKey, device: address) }
            return
        }
        output.skip("spo2-not-answered")
        guard !saidBefore else { return }
        output.explain("the ring \(address) did not answer the request for its SpO2 log within "
                       + "\(Int(Self.answerTimeout.components.seconds)) s: no SpO2 was read (its heart rate and steps were); "
                       + "this is said once until it answers")
        try? await context.memory?.remember("silent", for: Self.oxygenSaturationSilenceKey, device: address)
    }

    /// The ring's answers to `command` (at most ``maximumPacketsPerAnswer``, each within ``answerTimeout``) handed to
    /// `handle` until it has the whole answer.
    private func answers(_ command: UInt8, over link: any GATTConversationLink,
                         _ handle: (GATTValue) async throws -> Bool) async throws -> NotificationLoopEnd {
        try await link.notifications(matching: { $0.characteristicUUID == ColmiUUID.tx && $0.value.first == command },
                                     silence: Self.answerTimeout, maximum: Self.maximumPacketsPerAnswer, handle)
    }

    private func answer(_ command: UInt8, over link: any GATTConversationLink) async throws -> GATTValue {
        try await link.nextValue(timeout: Self.answerTimeout) { $0.characteristicUUID == ColmiUUID.tx && $0.value.first == command }
    }

    private var ring: Device { Device(name: device.name, manufacturer: "Colmi", localIdentifier: address) }

    private func metadata(_ kind: String, _ time: Date) -> Metadata {
        Metadata(syncIdentifier: "colmi/\(address)/\(kind)/\(Int(time.timeIntervalSince1970))", syncVersion: 1,
                 timeZone: context.timeZone.identifier)
    }

    private func take(heartRate: Int, at time: Date, into output: inout AdapterOutput) {
        output.records.append(.sample(QuantitySample(
            type: .heartRate, quantity: Quantity(value: Double(heartRate), unit: .countPerMinute), start: time, end: time,
            source: context.source, device: ring, metadata: metadata("hr", time))))
    }

    private func take(_ hour: ColmiOxygenHour, into output: inout AdapterOutput) {
        let saturation = Double(hour.lowest + hour.highest) / 200
        output.records.append(.sample(QuantitySample(
            type: .oxygenSaturation, quantity: Quantity(value: saturation, unit: .percent), start: hour.start, end: hour.start,
            source: context.source, device: ring, metadata: metadata("spo2", hour.start))))
    }

    private func take(_ quarter: ColmiSteps, into output: inout AdapterOutput) {
        guard quarter.steps > 0 || quarter.metres > 0 else { return }
        let end = quarter.start.addingTimeInterval(15 * 60)
        output.records.append(.sample(QuantitySample(
            type: .stepCount, quantity: Quantity(value: Double(quarter.steps), unit: .count), start: quarter.start, end: end,
            source: context.source, device: ring, metadata: metadata("steps", quarter.start))))
        if quarter.metres > 0 {
            output.records.append(.sample(QuantitySample(
                type: .distanceWalkingRunning, quantity: Quantity(value: Double(quarter.metres), unit: .meter), start: quarter.start,
                end: end, source: context.source, device: ring, metadata: metadata("distance", quarter.start))))
        }
    }
}
