import AdapterKit
import Foundation
import HealthModel
import Transport

/// The DS-D6 fitness band (a wrist pedometer on a Nordic chip): it keeps a step count and
/// hands it over only when asked, through ASCII AT commands written to its UART-like
/// characteristic, with replies by notification. See README.md.
public struct DSD6BandAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "dsd6-band"
    /// The vendor service (0x190A) with its write (0x0001) and notify (0x0002) characteristics.
    public static let service = BLEUUID(0x190A)
    public static let commandCharacteristic = BLEUUID(0x0001)
    public static let replyCharacteristic = BLEUUID(0x0002)

    public let descriptor = AdapterDescriptor(
        id: DSD6BandAdapter.id,
        name: "DS-D6 fitness band",
        version: "1.0.0",
        summary: "Step count of a DS-D6 band (AT commands over its vendor service 0x190A)",
        matches: [.ble(BLEMatch(namePattern: "^DS-D6$"))],
        produces: [.stepCount],
            how: "GATT conversation: AT commands, replies by notification",
            models: [
                AdapterModel(maker: "(unbranded)", name: "DS-D6 fitness band", offers: "the day's steps", reads: [.stepCount], capture: "real-first-sync"),
            ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        DSD6Conversation(device: device, context: context)
    }
}

/// One conversation with a band: subscribe to its replies, ask for the step count, the time
/// zone and the serial number, deliver the step count, then set the band's clock.
///
/// The step count is the band's total for its day: one `StepCount` sample from the start of
/// the band's day (its reported time-zone offset, else the context's zone) to the reply's
/// time, with sync identifier `dsd6/<serial or address>/<day>` and sync version = the count,
/// so a later, higher count of the same day replaces the earlier one instead of adding to it,
/// and a repeated or lower count changes nothing. The band is never told to reset its count.
final class DSD6Conversation: GATTConversation {
    /// How long the band may take to answer one command (it answers within about 0.4 s).
    static let replyTimeout: Duration = .seconds(5)
    /// Reply lines read while waiting for one answer before giving up (pushed notices come in between).
    static let maximumLinesPerAnswer = 16

    private let context: AdapterContext
    private let device: BLEDeviceTraits
    private var lines = DSD6LineAssembler()
    private var pendingLines: [String] = []
    private var output = AdapterOutput()

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        guard database.characteristic(DSD6BandAdapter.commandCharacteristic) != nil else {
            throw GATTConversationError.characteristicMissing(DSD6BandAdapter.commandCharacteristic)
        }
        try await link.subscribe(to: DSD6BandAdapter.replyCharacteristic, mode: .notifications)
        let chunk = max(20, await link.mtu() - 3)

        let stepReply = try await ask(DSD6Command.stepCount, expecting: "TOPACE", over: link, chunk: chunk)
        let answered = await link.now()
        let zoneReply = try? await ask(DSD6Command.timeZone, expecting: "TIMEZONE", over: link, chunk: chunk)
        let serialReply = try? await ask(DSD6Command.serialNumber, expecting: "SN", over: link, chunk: chunk)

        var bandZone = context.timeZone
        if let zoneReply, let offset = try? zoneReply.timeZoneOffset(), let zone = TimeZone(secondsFromGMT: offset) {
            bandZone = zone
        }
        let serial = serialReply.map(\.value).flatMap { $0.isEmpty || $0.count > 32 ? nil : $0 }
        if let stepReply {
            do {
                let steps = try stepReply.stepCount()
                output.records.append(.sample(sample(steps: steps, at: answered, bandZone: bandZone, serial: serial)))
            } catch {
                output.reject(context.source, reason: error.reason, detail: error.description, time: answered)
            }
        }
        _ = try await deliver(output)
        output = AdapterOutput()

        // Only now, with the count committed, the band's clock is set (as the vendor app does).
        let now = await link.now()
        _ = try? await ask(DSD6Command.setClock(now, in: context.timeZone), expecting: "DT", over: link, chunk: chunk)
        if !output.rejections.isEmpty { _ = try await deliver(output) }
    }

    /// Writes `command` and waits for the reply line naming `expected` (`AT+<expected>:`);
    /// nil when the band did not give one among ``maximumLinesPerAnswer`` lines.
    private func ask(_ command: String, expecting expected: String, over link: any GATTConversationLink,
                     chunk: Int) async throws -> DSD6Reply? {
        pendingLines.removeAll()
        for write in DSD6Command.writes(command, chunk: chunk) {
            try await link.write(write, to: DSD6BandAdapter.commandCharacteristic, withResponse: false)
        }
        for _ in 0..<Self.maximumLinesPerAnswer {
            let line = try await nextLine(over: link)
            switch Result(catching: { () throws(DSD6ReplyError) in try DSD6Reply(line: line) }) {
            case .success(let reply) where reply.prefix == "AT" && reply.command == expected:
                return reply
            case .success:
                continue  // a pushed notice or the answer to an earlier command
            case .failure(let error):
                output.reject(context.source, reason: error.reason, detail: error.description, time: await link.now())
            }
        }
        output.reject(context.source, reason: "no-answer",
                      detail: "no AT+\(expected) reply to \(command) among \(Self.maximumLinesPerAnswer) lines",
                      time: await link.now())
        return nil
    }

    private func nextLine(over link: any GATTConversationLink) async throws -> String {
        while pendingLines.isEmpty {
            let value = try await link.nextValue(timeout: Self.replyTimeout) { value in
                value.characteristicUUID == DSD6BandAdapter.replyCharacteristic
            }
            for line in lines.add(value.value) {
                switch line {
                case .success(let text): pendingLines.append(text)
                case .failure(let error):
                    output.reject(context.source, reason: error.reason, detail: error.description, time: value.time)
                }
            }
        }
        return pendingLines.removeFirst()
    }

    private func sample(steps: Int, at time: Date, bandZone: TimeZone, serial: String?) -> QuantitySample {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = bandZone
        let dayStart = calendar.startOfDay(for: time)
        let day = calendar.dateComponents([.year, .month, .day], from: time)
        let dayText = String(format: "%04d-%02d-%02d", day.year ?? 0, day.month ?? 0, day.day ?? 0)
        let identity = serial ?? device.address.description
        return QuantitySample(
            type: .stepCount, quantity: Quantity(value: Double(steps), unit: .count), start: dayStart, end: time,
            source: context.source,
            device: Device(name: device.name ?? "DS-D6", localIdentifier: device.address.description),
            metadata: Metadata(syncIdentifier: "dsd6/\(identity)/\(dayText)", syncVersion: steps,
                               timeZone: context.timeZone.identifier, deviceSerialNumber: serial, entries: [:]))
    }
}
