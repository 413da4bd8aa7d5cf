import AdapterKit
import Foundation
import HealthModel
import Transport

/// QN-protocol scales over GATT (Renpho ES-CS20M and ES-30M/Elis 1, FITINDEX ES-26M, Arboleaf,
/// SEB and other QN/Yolanda rebrands): the scale's handshake answered (unit, clock, user), then
/// the stable weighing with its impedance taken and acknowledged. The broadcasting QN scales
/// (company 0xFFFF, `AABB`) are another adapter's. See README.md.
public struct QNGATTScaleAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "qn-gatt-scale"
    /// Advertised names of the QN family's connectable scales (with a QN vendor service).
    public static let namePattern = "(?i)^(QN-Scale|Renpho|SEB-Scale|FITINDEX|Arboleaf)"

    public let descriptor = AdapterDescriptor(
        id: QNGATTScaleAdapter.id,
        name: "QN-protocol scales over GATT (Renpho, FITINDEX, Arboleaf)",
        version: "1.0.0",
        summary: "The stable weighing (body mass, impedance) of QN/Renpho-family scales, after the scale's handshake",
        matches: [.ble(BLEMatch(serviceUUIDs: [QNUUID.serviceType2], namePattern: QNGATTScaleAdapter.namePattern)),
                  .ble(BLEMatch(serviceUUIDs: [QNUUID.serviceType1], namePattern: QNGATTScaleAdapter.namePattern))],
        produces: [.bodyMass],
        how: "GATT conversation: the scale's handshake answered (unit, clock, user age), the stable weighing taken and acknowledged",
        models: [
            AdapterModel(maker: "Renpho", name: "Elis 1 (ES-30M) and QN-protocol kin", offers: "weight, impedance",
                         reads: [.bodyMass], note: "impedance as metadata", capture: "es30m"),
            AdapterModel(maker: "FITINDEX / Arboleaf / SEB", name: "QN-Scale (type 1 service 0xFFE0)", offers: "weight, impedance",
                         reads: [.bodyMass], note: "impedance as metadata", capture: "type1"),
        ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        QNGATTConversation(device: device, context: context)
    }
}

/// The scale's services and characteristics.
public enum QNUUID {
    /// Type 1: 0xFFE1 notified, 0xFFE2 indicated, 0xFFE3 written (0xFFE4 time, unused).
    public static let serviceType1 = BLEUUID(0xFFE0)
    public static let notifyType1 = BLEUUID(0xFFE1)
    public static let indicateType1 = BLEUUID(0xFFE2)
    public static let writeType1 = BLEUUID(0xFFE3)
    /// Type 2: 0xFFF1 notified, 0xFFF2 written.
    public static let serviceType2 = BLEUUID(0xFFF0)
    public static let notifyType2 = BLEUUID(0xFFF1)
    public static let writeType2 = BLEUUID(0xFFF2)
}

/// The adapter's options (`--adapter-option KEY=VALUE`).
public enum QNOption {
    /// `lb`: the scale shows pounds (default `kg`); readings are stored in kilograms either way.
    public static let unit = "qn-unit"
    /// The user's age in years (1…120), sent as the user's profile; not sent when absent.
    public static let age = "qn-age"
    /// `false`: never set the scale's clock.
    public static let setClock = "qn-set-clock"
}

/// One contact: subscribe, answer the scale's frames in its order (0x12 information → 0x13 unit;
/// 0x14 ready → 0x20 clock and 0xA2 user; 0x21 configuration request → 0xA0 answers and, in
/// the ES-30M dialect, 0x22 start; 0xA1 → 0x22 start), skip the settling 0x10 frames and take
/// the first stable one with an impedance (or, when the scale measures none, the stable one),
/// acknowledge it (0x1F) after the commit and disconnect.
///
/// The weighing is `BodyMass` at its arrival time with `IngestImpedanceOhm` (the first
/// resistance, else the second) and `IngestImpedance2Ohm`, sync identifier
/// `qn/<address>/<Unix seconds>`.
final class QNGATTConversation: GATTConversation {
    /// How long the conversation waits for the next frame (the person steps on meanwhile).
    static let frameTimeout: Duration = .seconds(60)
    /// At most this many frames in one contact (a scale settles in a few dozen).
    static let maximumFrames = 1_000
    var maximumValuesPerContact: Int { Self.maximumFrames }
    /// Stable frames without an impedance taken before the weighing is kept without one.
    static let stableFramesWithoutImpedance = 3

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        let notify: BLEUUID
        let write: BLEUUID
        if database.characteristic(QNUUID.notifyType2) != nil, database.characteristic(QNUUID.writeType2) != nil {
            (notify, write) = (QNUUID.notifyType2, QNUUID.writeType2)
        } else if database.characteristic(QNUUID.notifyType1) != nil, database.characteristic(QNUUID.writeType1) != nil {
            (notify, write) = (QNUUID.notifyType1, QNUUID.writeType1)
        } else {
            throw GATTConversationError.characteristicMissing(QNUUID.notifyType2)
        }
        let withResponse = (database.characteristic(write)?.properties ?? 0) & 0x08 != 0
        func send(_ bytes: [UInt8]) async throws { try await link.write(bytes, to: write, withResponse: withResponse) }

        var options = AdapterOutput()
        let reader = AdapterOptionReader(context.options)
        var unit = QNFrame.DisplayUnit.kilogram
        var age: UInt8?
        do {
            age = try reader.integer(QNOption.age, in: 1...120)
        } catch {
            options.reject(context.source, option: error, time: await link.now())
        }
        do {
            unit = try reader.choice(QNOption.unit, ["kg": .kilogram, "lb": .pound]) ?? unit
        } catch {
            options.reject(context.source, option: error, time: await link.now())
        }
        if !options.rejections.isEmpty { _ = try await deliver(options) }

        try await link.subscribe(to: notify, mode: .notifications)
        if notify == QNUUID.notifyType1, database.characteristic(QNUUID.indicateType1) != nil {
            try? await link.subscribe(to: QNUUID.indicateType1, mode: .indications)
        }

        var protocolType: UInt8 = 0x00
        var tenths = false
        var stableWithoutImpedance = 0
        for _ in 0..<Self.maximumFrames {
            let value: GATTValue
            do {
                value = try await link.nextValue(timeout: Self.frameTimeout) { $0.characteristicUUID == notify }
            } catch {
                if case .timedOut = error {
                    var output = AdapterOutput()
                    output.skip("no-stable-weighing")
                    _ = try await deliver(output)
                    await link.disconnect()
                    return
                }
                throw error
            }
            let bytes = value.value
            guard let opcode = bytes.first, bytes.count >= 3 else { continue }
            switch opcode {
            case 0x12:
                protocolType = bytes[2]
                if bytes.count > 10 { tenths = bytes[10] != 0x01 }
                try await send(QNFrame.configuration(protocolType: protocolType, unit: unit))
            case 0x14:
                if context.options[QNOption.setClock] != "false" {
                    try await send(QNFrame.time(protocolType: protocolType, await link.now()))
                }
                if let age { try await send(QNFrame.userProfile(age: age)) }
            case 0x21:
                for answer in QNFrame.configurationAnswers(tenths: tenths) { try await send(answer) }
                if tenths { try await send(QNFrame.startMeasurement(protocolType: protocolType, tenths: true)) }
            case 0xA1:
                if !tenths { try await send(QNFrame.startMeasurement(protocolType: protocolType, tenths: false)) }
            case 0x10:
                let weight: QNFrame.Weight
                do {
                    weight = try QNFrame.Weight(bytes, tenths: tenths)
                } catch {
                    var output = AdapterOutput()
                    output.reject(context.source, reason: error.reason, detail: "\(device.address): \(error.description)",
                                  time: value.time)
                    _ = try await deliver(output)
                    continue
                }
                guard weight.stable, weight.raw > 0 else { continue }
                if weight.impedance == 0 {
                    stableWithoutImpedance += 1
                    if stableWithoutImpedance < Self.stableFramesWithoutImpedance { continue }
                }
                var output = AdapterOutput()
                take(weight, tenths: tenths, at: value.time, into: &output)
                _ = try await deliver(output)
                // The scale is told it was received only once the weighing was committed (or held).
                try await send(QNFrame.acknowledgement(protocolType: protocolType))
                await link.disconnect()
                return
            default:
                continue  // 0xA3 acknowledgements, 0x23 stored records, frames of other dialects
            }
        }
    }

    private func take(_ weight: QNFrame.Weight, tenths: Bool, at time: Date, into output: inout AdapterOutput) {
        var metadata = Metadata(syncIdentifier: "qn/\(device.address)/\(Int(time.timeIntervalSince1970))", syncVersion: 1,
                                timeZone: context.timeZone.identifier)
        if weight.impedance > 0 { metadata.entries["IngestImpedanceOhm"] = .number(Double(weight.impedance)) }
        if weight.resistance1 > 0 && weight.resistance2 > 0 {
            metadata.entries["IngestImpedance2Ohm"] = .number(Double(weight.resistance2))
        }
        let kilograms = (weight.kilograms(tenths: tenths) * 100).rounded() / 100
        output.records.append(.sample(QuantitySample(
            type: .bodyMass, quantity: Quantity(value: kilograms, unit: .kilogram), start: time, end: time,
            source: context.source, device: Device(name: device.name, manufacturer: "QN", localIdentifier: device.address.description),
            metadata: metadata)))
    }
}
