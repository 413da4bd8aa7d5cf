import AdapterKit
import Foundation
import Transport

/// The Mi scales' history download: the commands written to the history characteristic and the
/// shape of its notifications (see README.md, "History download").
public enum MiScaleHistory {
    /// The history characteristic (vendor UUID in Huami's base), under 0x181B on the body
    /// composition scale and 0x181D on the smart scale: written with response, notifies.
    public static let characteristic = BLEUUID(high: 0x0000_2A2F_0000_3512, low: 0x2118_0009_AF10_0700)
    /// Option naming the 16-bit id under which the scale remembers what was acknowledged
    /// (`--adapter-option mi-scale-history-id=N`, 1…65535; 1 when not given).
    public static let historyIDOption = "mi-scale-history-id"
    /// The scale's clock, Current Time (0x2A2B) in its body composition service, read by the
    /// scale in local time: set before every history download, so that the readings it stores
    /// later carry the right time.
    public static let clock = BLEUUID(0x2A2B)
    /// Option turning the clock setting off (`--adapter-option mi-scale-set-clock=false`).
    public static let setClockOption = "mi-scale-set-clock"

    /// Turns the history on (written first).
    public static let enable: [UInt8] = [0x01, 0x96, 0x8A, 0xBD, 0x62]
    /// Asks how many readings `id` has not acknowledged; answered by ``Notification/announcement(count:)``.
    public static func select(id: UInt16) -> [UInt8] { [0x01, 0xFF, 0xFF, UInt8(id >> 8), UInt8(id & 0xFF)] }
    /// Starts the transfer of those readings.
    public static let start: [UInt8] = [0x02]
    /// Ends the transfer (written once the scale sent its end marker).
    public static let stop: [UInt8] = [0x03]
    /// Acknowledges the transferred readings for `id`: the scale will not send them again.
    public static func acknowledge(id: UInt16) -> [UInt8] { [0x04, 0xFF, 0xFF, UInt8(id >> 8), UInt8(id & 0xFF)] }

    /// What one notification of the history characteristic is.
    public enum Notification: Equatable, Sendable {
        /// `01 <count> …`: the number of readings the transfer will hold.
        case announcement(count: Int)
        /// `03`: the transfer is complete.
        case end
        /// Reading bytes: whole frames, possibly several, possibly split over notifications.
        case frames([UInt8])
    }

    /// Classifies a notification of a scale whose frames are `frameLength` bytes long. An
    /// announcement starts with 0x01 and is not a whole number of frames.
    public static func classify(_ value: [UInt8], frameLength: Int) -> Notification {
        if value == [0x03] { return .end }
        if value.count >= 2, value[0] == 0x01, value.count % frameLength != 0 { return .announcement(count: Int(value[1])) }
        return .frames(value)
    }
}

/// One history download from a connected Mi scale.
///
/// Sets the scale's clock (Current Time 0x2A2B, the daemon's time in the local zone; off with
/// `mi-scale-set-clock=false`), subscribes to the history characteristic, turns the history on, selects the readings not yet
/// acknowledged for the configured id, starts the transfer and collects the frames until the
/// end marker. The stabilized readings are delivered (the same samples as their broadcasts, so a
/// reading seen both ways is stored once); only when the store committed them all is the scale
/// told to forget them (``MiScaleHistory/acknowledge(id:)``). A transfer cut short (timeout, link
/// lost) keeps what arrived and acknowledges nothing, so the scale sends it all again next time.
final class MiScaleHistoryConversation: GATTConversation {
    /// The longest pause between two notifications of one transfer.
    static let notificationTimeout: Duration = .seconds(5)
    /// Bound on the notifications read in one transfer (a scale keeps a few dozen readings).
    static let maximumNotifications = 2_000
    var maximumValuesPerContact: Int { Self.maximumNotifications }

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        var output = AdapterOutput()
        let historyID: UInt16
        do {
            historyID = try AdapterOptionReader(context.options).integer(MiScaleHistory.historyIDOption, in: 1...UInt16.max) ?? 1
        } catch {
            output.reject(context.source, option: error, time: await link.now())
            _ = try await deliver(output)
            return
        }
        let database = try await link.discover()
        guard let history = database.characteristic(MiScaleHistory.characteristic) else {
            return  // a scale (or clone) without the history: its broadcasts are all there is
        }
        let model: MiScaleModel = database.service(containing: history.valueHandle)?.uuid == BLEUUID(0x181D)
            ? .smartScale : .bodyCompositionScale
        let characteristic = MiScaleHistory.characteristic
        if let clock = database.characteristic(MiScaleHistory.clock), clock.properties & 0x08 != 0,
           context.options[MiScaleHistory.setClockOption] != "false" {
            let written = try await link.writeCurrentTime(to: MiScaleHistory.clock, in: context.timeZone)
            if let refusal = written.refusal {
                output.reject(context.source, reason: "clock-refused", detail: "\(device.address): \(refusal)", time: written.time)
            }
        }
        try await link.subscribe(to: characteristic, mode: .notifications)
        try await link.write(MiScaleHistory.enable, to: characteristic, withResponse: true)
        try await link.write(MiScaleHistory.select(id: historyID), to: characteristic, withResponse: true)
        try await link.write(MiScaleHistory.start, to: characteristic, withResponse: true)

        var pending: [UInt8] = []
        var complete = false
        var readings = 0
        do {
            for _ in 0..<Self.maximumNotifications {
                let value = try await link.nextValue(timeout: Self.notificationTimeout) { $0.characteristicUUID == characteristic }
                switch MiScaleHistory.classify(value.value, frameLength: model.frameLength) {
                case .announcement:
                    continue
                case .end:
                    complete = true
                case .frames(let bytes):
                    pending += bytes
                    while pending.count >= model.frameLength {
                        let frame = Array(pending.prefix(model.frameLength))
                        pending.removeFirst(model.frameLength)
                        readings += 1
                        take(frame, model: model, receivedAt: value.time, into: &output)
                    }
                }
                if complete { break }
            }
        } catch {
            // Keep what arrived; nothing is acknowledged, so the scale sends it again next time.
            output.reject(context.source, reason: "transfer-incomplete",
                          detail: "\(device.address): history transfer ended after \(readings) readings: \(error)",
                          time: await link.now())
        }
        if !pending.isEmpty {
            output.reject(context.source, reason: "partial-frame",
                          detail: "\(device.address): \(pending.count) bytes left after the last whole frame: "
                              + pending.map { String(format: "%02x", $0) }.joined(separator: " "),
                          time: await link.now())
        }
        let receipt = try await deliver(output)
        guard complete else { return }
        try await link.write(MiScaleHistory.stop, to: characteristic, withResponse: true)
        // Only now, with every reading committed, may the scale forget them.
        if receipt.deviceMayForget {
            try await link.write(MiScaleHistory.acknowledge(id: historyID), to: characteristic, withResponse: true)
        }
    }

    private func take(_ frame: [UInt8], model: MiScaleModel, receivedAt: Date, into output: inout AdapterOutput) {
        let reading: MiScaleReading
        do {
            reading = try MiScaleDecoder.decode(frame, model: model)
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(device.address): \(error.description)", time: receivedAt)
            return
        }
        guard reading.isStabilized, !reading.isWeightRemoved else {
            output.skip(reading.isWeightRemoved ? "weight-removed" : "not-stabilized")
            return
        }
        output.records.append(.sample(MiScaleSample.make(from: reading, address: device.address, name: device.name,
                                                         receivedAt: receivedAt, context: context)))
    }
}
