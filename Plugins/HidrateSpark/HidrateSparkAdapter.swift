import AdapterKit
import Foundation
import HealthModel
import Transport

/// The HidrateSpark smart water bottle: it logs each sip (as a share of the bottle's capacity)
/// and hands the log over one sip at a time when asked. See README.md.
public struct HidrateSparkAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "hidrate-spark"
    /// The "data point" characteristic (vendor service 45855422-6565-4cd7-a2a9-fe8af41b85e8):
    /// notifies the sip log, takes the request byte 0x57 as a Write Command.
    public static let dataPoint = BLEUUID(high: 0x016E_11B1_6C8A_4074, low: 0x9E5A_0760_53F9_3784)
    /// Asks the bottle for its next stored sip.
    public static let nextSip: [UInt8] = [0x57]
    /// Option: the bottle's capacity in millilitres (`--adapter-option hidrate-bottle-ml=N`).
    public static let capacityOption = "hidrate-bottle-ml"
    /// The capacity used without the option: the 20 oz (591 mL) HidrateSpark 2.0 of the published log.
    public static let defaultCapacityMillilitres = 591

    public let descriptor = AdapterDescriptor(
        id: HidrateSparkAdapter.id,
        name: "HidrateSpark bottle",
        version: "1.0.0",
        summary: "Water intake from the sip log of a HidrateSpark smart bottle",
        matches: [.ble(BLEMatch(namePattern: "^h2o[0-9A-Fa-f]{4}"))],
        produces: [.dietaryWater],
            how: "GATT conversation: the sip log, one sip per request, each committed before the next",
            models: [
                AdapterModel(maker: "HidrateSpark", name: "smart bottle", offers: "sip log", reads: [.dietaryWater], capture: "real-sips"),
            ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        HidrateConversation(device: device, context: context)
    }
}

/// One notification of the data point characteristic.
///
/// Byte 0 is the number of sips the bottle holds (this one included). With every other byte
/// zero it only announces that count; otherwise it is a sip: byte 1 the sip as a percentage of
/// the bottle's capacity, bytes 2–3 a running figure whose unit is unknown (kept as metadata),
/// bytes 4–7 the seconds since the sip (little-endian).
public struct HidrateNotification: Hashable, Sendable {
    public var storedSips: Int
    /// Nil for a bare announcement.
    public var sip: Sip?

    /// A sip from the log.
    public struct Sip: Hashable, Sendable {
        public var percentOfCapacity: Int
        public var runningFigure: Int
        public var secondsAgo: UInt32
    }

    /// Reads a notification; nil when it is shorter than 8 bytes and not all zeros.
    public init?(_ bytes: [UInt8]) {
        guard let count = bytes.first else { return nil }
        storedSips = Int(count)
        if bytes.dropFirst().allSatisfy({ $0 == 0 }) {
            sip = nil
            return
        }
        guard bytes.count >= 8 else { return nil }
        let seconds = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
        sip = Sip(percentOfCapacity: Int(bytes[1]), runningFigure: Int(bytes[2]) | Int(bytes[3]) << 8, secondsAgo: seconds)
    }
}

/// One conversation: subscribe to the data point, ask for a sip, and for each announced sip ask
/// again; each sip is delivered (committed) before the next is asked for, since asking is what
/// makes the bottle hand it over and let it go. Sips the bottle announces while connected are
/// taken the same way; the conversation ends after ``quietTimeout`` without a notification.
///
/// A sip becomes one `DietaryWater` sample of capacity × percentage / 100 mL at the
/// notification's time less the sip's age, with sync identifier
/// `hidrate/<address>/<Unix seconds>/<percentage>`.
final class HidrateConversation: GATTConversation {
    static let quietTimeout: Duration = .seconds(20)
    /// Bound on the notifications read in one conversation.
    static let maximumNotifications = 1_000
    var maximumValuesPerContact: Int { Self.maximumNotifications }
    /// A sip older than this is implausible (the age field is misread or garbage).
    static let maximumSipAge: UInt32 = 90 * 24 * 3600

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let capacity: Int
        do {
            capacity = try AdapterOptionReader(context.options).integer(
                HidrateSparkAdapter.capacityOption, in: 100...4000, expected: "millilitres from 100 to 4000")
                ?? HidrateSparkAdapter.defaultCapacityMillilitres
        } catch {
            var output = AdapterOutput()
            output.reject(context.source, option: error, time: await link.now())
            _ = try await deliver(output)
            return
        }
        _ = try await link.discover()
        try await link.subscribe(to: HidrateSparkAdapter.dataPoint, mode: .notifications)
        try await link.write(HidrateSparkAdapter.nextSip, to: HidrateSparkAdapter.dataPoint, withResponse: false)
        for _ in 0..<Self.maximumNotifications {
            let value: GATTValue
            do {
                value = try await link.nextValue(timeout: Self.quietTimeout) { $0.characteristicUUID == HidrateSparkAdapter.dataPoint }
            } catch {
                return  // quiet, or the bottle went away: every sip taken was delivered already
            }
            guard let notification = HidrateNotification(value.value) else {
                var output = AdapterOutput()
                output.reject(context.source, reason: "short-frame",
                              detail: "\(device.address): \(value.value.count)-byte sip record: "
                                  + value.value.map { String(format: "%02x", $0) }.joined(separator: " "),
                              time: value.time)
                _ = try await deliver(output)
                continue
            }
            if let sip = notification.sip {
                _ = try await deliver(output(for: sip, capacity: capacity, notifiedAt: value.time))
            } else if notification.storedSips > 0 {
                try await link.write(HidrateSparkAdapter.nextSip, to: HidrateSparkAdapter.dataPoint, withResponse: false)
            }
        }
    }

    private func output(for sip: HidrateNotification.Sip, capacity: Int, notifiedAt: Date) -> AdapterOutput {
        var output = AdapterOutput()
        guard sip.secondsAgo <= Self.maximumSipAge, sip.percentOfCapacity <= 100 else {
            output.reject(context.source, reason: "implausible-sip",
                          detail: "\(device.address): \(sip.percentOfCapacity) % of the bottle, \(sip.secondsAgo) s ago",
                          time: notifiedAt)
            return output
        }
        let time = Date(timeIntervalSince1970: (notifiedAt.timeIntervalSince1970 - Double(sip.secondsAgo)).rounded(.down))
        var metadata = Metadata(
            syncIdentifier: "hidrate/\(device.address)/\(Int(time.timeIntervalSince1970))/\(sip.percentOfCapacity)",
            syncVersion: 1, timeZone: context.timeZone.identifier)
        metadata.entries["IngestSipPercentOfCapacity"] = .number(Double(sip.percentOfCapacity))
        metadata.entries["IngestBottleCapacityML"] = .number(Double(capacity))
        output.records.append(.sample(QuantitySample(
            type: .dietaryWater, quantity: Quantity(value: Double(capacity * sip.percentOfCapacity) / 100, unit: .milliliter),
            start: time, end: time, source: context.source,
            device: Device(name: device.name, manufacturer: "Hidrate", localIdentifier: device.address.description),
            metadata: metadata)))
        return output
    }
}
