import AdapterKit
import Foundation
import GATTHealthProfiles
import HealthModel
import Transport

/// BerryMed-class pulse oximeters (BM1000, BM1000B/C/E and their rebrands) that stream SpO2 and
/// pulse rate over their vendor UART service (the BCI protocol); one reading per second is
/// stored. A BerryMed that offers the standard Pulse Oximeter profile instead gets the standard
/// conversation. See README.md.
public struct BerryMedOximeterAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "berrymed-oximeter"
    /// Advertised names of the BCI-protocol oximeters (Adafruit's BerryMed library: BM1000,
    /// BM1000B, BM1000C, BM1000E; the vendor's own name).
    public static let namePattern = "(?i)^(BerryMed|BM1000[A-Z]?$)"

    public let descriptor = AdapterDescriptor(
        id: BerryMedOximeterAdapter.id,
        name: "BerryMed pulse oximeters (BM1000 family, BCI protocol)",
        version: "1.0.0",
        summary: "SpO2 and pulse rate streamed by BerryMed-class finger oximeters, one reading per second",
        matches: [.ble(BLEMatch(namePattern: BerryMedOximeterAdapter.namePattern))],
        produces: [.oxygenSaturation, .heartRate],
        how: "GATT conversation: notifications of the vendor UART service, 5-byte packets at about 60 Hz reduced to one reading per second, until the finger is out for 30 s, at most an hour a contact",
        models: [
            AdapterModel(maker: "BerryMed", name: "BM1000, BM1000B, BM1000C, BM1000E",
                         offers: "SpO2, pulse rate, plethysmogram, signal strength, finger and probe state",
                         reads: [.oxygenSaturation, .heartRate], note: "one reading per second (median of its packets)",
                         capture: "bm1000c"),
        ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        BerryMedConversation(device: device, context: context)
    }
}

/// The oximeter's vendor service (Microchip/ISSC's transparent UART).
public enum BerryMedUUID {
    public static let service = BLEUUID(high: 0x4953_5343_FE7D_4AE5, low: 0x8FA9_9FAF_D205_E455)
    /// Notified by the oximeter: the packet stream.
    public static let stream = BLEUUID(high: 0x4953_5343_1E4D_4BD9, low: 0xBA61_23C6_4724_9616)
    /// Written by the host (commands; not used).
    public static let command = BLEUUID(high: 0x4953_5343_8841_43F4, low: 0xA8D4_ECBE_3472_9BB3)
}

/// One contact: subscribe to the stream, cut it into packets, reduce them to one reading per
/// second and deliver each as its second closes (so a dropped link keeps every second before
/// it), until the oximeter disconnects, stays silent for ``silence``, has had no finger (or no
/// valid reading) for ``fingerOutLimit``, or ``maximumReadingsPerContact`` seconds were stored.
///
/// Each reading is `OxygenSaturation` (a fraction) and `HeartRate` at its whole second, with
/// the sync identifier `<address>/bci/<Unix second>`. The oximeter keeps no memory: nothing is
/// acknowledged or erased.
final class BerryMedConversation: GATTConversation {
    /// The longest wait for the next notification (the oximeter streams continuously).
    static let silence: Duration = .seconds(10)
    /// The contact ends after this long without a valid reading (the finger was taken out).
    static let fingerOutLimit: TimeInterval = 30
    /// Readings (seconds) stored in one contact: an hour; then the link is closed and the
    /// daemon's next contact goes on.
    static let maximumReadingsPerContact = 3_600
    /// Notifications taken in one contact (an hour at a generous 100 a second).
    static let maximumNotifications = 360_000

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        guard database.characteristic(BerryMedUUID.stream) != nil else {
            // A BerryMed model with the standard Pulse Oximeter profile instead of the vendor stream.
            try await GATTHealthAdapter().makeConversation(for: device, context: context).run(over: link, deliver: deliver)
            return
        }
        try await link.subscribe(to: BerryMedUUID.stream, mode: .notifications)

        var stream = BerryMedStream()
        var reducer = BerryMedSecondReducer()
        var stored = 0
        var lastReading = await link.now()
        func store(_ reading: BerryMedSecondReducer.Reading) async throws {
            var output = AdapterOutput()
            append(reading, to: &output)
            _ = try await deliver(output)
            stored += 1
        }
        var ending: String?
        // Silence, or the oximeter disconnected (or the capture ended), ends the loop: every closed second
        // is delivered already; the one in progress is delivered below.
        _ = try await link.notifications(matching: { $0.characteristicUUID == BerryMedUUID.stream }, silence: Self.silence,
                                         maximum: Self.maximumNotifications) { value in
            for packet in stream.append(value.value) {
                if packet.isReading { lastReading = value.time }
                if let reading = reducer.add(packet, at: value.time) { try await store(reading) }
            }
            if stream.otherProtocol {
                ending = "other-protocol"
            } else if stored >= Self.maximumReadingsPerContact {
                ending = "reading-cap"
            } else if value.time.timeIntervalSince(lastReading) >= Self.fingerOutLimit {
                ending = "finger-out"
            }
            return ending != nil
        }
        var output = AdapterOutput()
        if let last = reducer.finish(), stored < Self.maximumReadingsPerContact {
            append(last, to: &output)
        }
        if stream.droppedBytes > 0 { output.skipped["partial-packet-byte", default: 0] += stream.droppedBytes }
        if ending == "other-protocol" {
            output.reject(context.source, reason: "unsupported-protocol",
                          detail: "\(device.address) streams the 20-byte packets (FF AA …) of BerryMed's newer protocol, "
                              + "which ingestd does not decode; nothing is stored from it", time: await link.now())
        }
        if ending == "reading-cap" {
            output.reject(context.source, reason: "reading-cap",
                          detail: "\(device.address): \(stored) seconds stored in one contact; the link is closed, "
                              + "the next contact goes on", time: await link.now())
        }
        if !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty { _ = try await deliver(output) }
        await link.disconnect()
    }

    private func append(_ reading: BerryMedSecondReducer.Reading, to output: inout AdapterOutput) {
        let time = Date(timeIntervalSince1970: TimeInterval(reading.second))
        let metadata = Metadata(syncIdentifier: "\(device.address)/bci/\(reading.second)", syncVersion: 1,
                                timeZone: context.timeZone.identifier)
        let source = Device(name: device.name, manufacturer: "BerryMed", localIdentifier: device.address.description)
        output.records.append(.sample(QuantitySample(
            type: .oxygenSaturation, quantity: Quantity(value: Double(reading.oxygenSaturation) / 100, unit: .percent),
            start: time, end: time, source: context.source, device: source, metadata: metadata)))
        output.records.append(.sample(QuantitySample(
            type: .heartRate, quantity: Quantity(value: Double(reading.pulseRate), unit: .countPerMinute),
            start: time, end: time, source: context.source, device: source, metadata: metadata)))
    }
}
