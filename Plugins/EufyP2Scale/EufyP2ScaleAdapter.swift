import AdapterKit
import AdvertisementCrypto
import EufyScale
import Foundation
import HealthModel
import Transport

/// Eufy Smart Scale P2 (T9148) and P2 Pro (T9149): their advertised weight (and the P2 Pro's heart
/// rate), and over a connection, after the handshake with the key derived from the scale's
/// address, the settled weighing with the impedance the scale measured (which its advertisements
/// do not carry). Both ways one weighing is one sample (``EufyP2Weighings``, the run's: the adapter
/// itself keeps nothing, so two runs or two replays never share a weighing). See README.md.
public struct EufyP2ScaleAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "eufy-p2-scale"
    /// The advertised names of the connectable P2 family.
    public static let namePattern = "^eufy T914[89]"

    public let descriptor = AdapterDescriptor(
        id: EufyP2ScaleAdapter.id,
        name: "Eufy P2 / P2 Pro scales",
        version: "1.1.0",
        summary: "Weighings of Eufy P2 and P2 Pro scales: advertised, and with their impedance after the handshake",
        matches: [
            .ble(BLEMatch(namePattern: EufyP2ScaleAdapter.namePattern)),
            .ble(BLEMatch(companyIDs: [EufyAdvertisementDecoder.p2CompanyID])),
        ],
        produces: [.bodyMass, .heartRate],
        how: "advertisements; GATT conversation: the handshake (AES key from the scale's address) answered, the settled weighing taken",
        models: [
            AdapterModel(maker: "Eufy", name: "Smart Scale P2 (T9148)", offers: "weight, impedance",
                         reads: [.bodyMass], note: "impedance as metadata; advertised and connected weighing stored once",
                         capture: "p2-weighing"),
            AdapterModel(maker: "Eufy", name: "Smart Scale P2 Pro (T9149)", offers: "weight, impedance, heart rate",
                         reads: [.bodyMass, .heartRate],
                         note: "impedance as metadata; heart rate from its advertisements", capture: "p2-pro-weighing"),
        ]
    )

    public init() {}

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        EufyP2AdvertisedSession(device: device, context: context, weighings: EufyP2Weighings.ofRun(context))
    }

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        EufyP2Conversation(device: device, context: context, weighings: EufyP2Weighings.ofRun(context))
    }
}

/// The scale's service and characteristics.
public enum EufyP2UUID {
    public static let service = BLEUUID(0xFFF0)
    /// Written: the handshake's C0 and C2 frames.
    public static let write = BLEUUID(0xFFF1)
    /// Notified: weight frames.
    public static let weight = BLEUUID(0xFFF2)
    /// Notified: the handshake's C1 and C3 frames.
    public static let handshake = BLEUUID(0xFFF4)
}

/// One contact: subscribe to the weight and handshake characteristics, send the client id (C0,
/// a pause between frames as the vendor app leaves), decrypt the scale's id (C1), send both
/// (C2), read the verdict (C3), then take the first final weight frame with an impedance (or,
/// after three final frames without one, the weight alone), deliver it and disconnect. The
/// scale keeps no memory to acknowledge or erase. A refused handshake or a malformed frame is
/// a rejection naming the bytes; nothing is delivered from a scale that did not accept us.
///
/// The weighing: `BodyMass` at the frame's arrival with `IngestImpedanceOhm`, the sync identifier
/// of the weighing (``EufyP2Weighings``: the advertised weight's when it came first) at version 2.
final class EufyP2Conversation: GATTConversation {
    /// The longest wait for a handshake answer.
    static let answerTimeout: Duration = .seconds(10)
    /// How long the person may take to step on and stand still.
    static let weightTimeout: Duration = .seconds(60)
    /// The pause between two frames of one handshake message (shorter ones made some P2 Pro drop the link).
    static let framePause: Duration = .seconds(1)
    /// At most this many weight frames in one contact (a weighing settles in a few dozen).
    static let maximumFrames = 1_000
    /// Handshake frames read at most while waiting for one answer.
    static let maximumHandshakeFrames = 32
    var maximumValuesPerContact: Int { Self.maximumFrames + 2 * Self.maximumHandshakeFrames }
    /// Final frames without an impedance after which the weight is kept alone.
    static let finalFramesWithoutImpedance = 3

    /// The sync version of a connected weighing: it replaces the advertised weight of the same weighing.
    static let syncVersion = 2

    private let device: BLEDeviceTraits
    private let context: AdapterContext
    private let weighings: EufyP2Weighings

    init(device: BLEDeviceTraits, context: AdapterContext, weighings: EufyP2Weighings) {
        self.device = device
        self.context = context
        self.weighings = weighings
    }

    private typealias Stop = ConversationStop

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        try await ConversationStop.reporting(source: context.source, device: device.address, over: link, deliver: deliver) {
            try await converse(over: link, deliver: deliver)
        }
    }

    private func converse(over link: any GATTConversationLink,
                          deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        for needed in [EufyP2UUID.write, EufyP2UUID.weight, EufyP2UUID.handshake] where database.characteristic(needed) == nil {
            throw GATTConversationError.characteristicMissing(needed)
        }
        let withResponse = (database.characteristic(EufyP2UUID.write)?.properties ?? 0) & 0x08 != 0
        try await link.subscribe(to: EufyP2UUID.weight, mode: .notifications)
        try await link.subscribe(to: EufyP2UUID.handshake, mode: .notifications)

        let cipher = try AESCBC()
        let key = try EufyP2Handshake.key(for: device.address)
        let clientID = String(UUID().uuidString.lowercased().prefix(15))
        try await send(try EufyP2Handshake.frames(clientID, prefix: EufyP2Handshake.clientID, key: key, cipher: cipher),
                       over: link, withResponse: withResponse, pausing: true)
        let scaleAnswer = try await message(EufyP2Handshake.scaleID, over: link)
        guard let scaleID = try EufyP2Handshake.open(scaleAnswer.ascii, key: key, cipher: cipher) else {
            throw Stop(reason: "handshake-undecryptable",
                       detail: "the scale's id does not decrypt under the key of its address: "
                           + String(decoding: scaleAnswer.ascii, as: UTF8.self), time: scaleAnswer.time)
        }
        try await send(try EufyP2Handshake.frames("\(clientID)_\(scaleID)", prefix: EufyP2Handshake.combinedIDs, key: key,
                                                  cipher: cipher),
                       over: link, withResponse: withResponse, pausing: false)
        let verdict = try await handshakeFrame(over: link) { $0.first == EufyP2Handshake.result }
        guard verdict.value.count >= 5, verdict.value[4] == 0 else {
            throw Stop(reason: "handshake-refused",
                       detail: "the scale refused the handshake (answer \(hexString(verdict.value))); wake it by stepping on "
                           + "it and let ingestd connect again", time: verdict.time)
        }

        var finalWithoutImpedance = 0
        for _ in 0..<Self.maximumFrames {
            let value: GATTValue
            do {
                value = try await link.nextValue(timeout: Self.weightTimeout) { $0.characteristicUUID == EufyP2UUID.weight }
            } catch {
                if case .timedOut = error {
                    var output = AdapterOutput()
                    output.skip("no-final-weighing")
                    _ = try await deliver(output)
                    await link.disconnect()
                    return
                }
                throw error
            }
            let weight: EufyP2Weight
            do {
                weight = try EufyP2Weight(value.value)
            } catch {
                var output = AdapterOutput()
                output.reject(context.source, reason: error.reason, detail: "\(device.address): \(error.description)",
                              time: value.time)
                _ = try await deliver(output)
                continue
            }
            guard weight.isFinal, weight.kilograms > 0 else { continue }
            if weight.impedanceOhms == nil {
                finalWithoutImpedance += 1
                if finalWithoutImpedance < Self.finalFramesWithoutImpedance { continue }
            }
            var output = AdapterOutput()
            take(weight, at: value.time, into: &output)
            _ = try await deliver(output)
            await link.disconnect()
            return
        }
    }

    private func send(_ frames: [[UInt8]], over link: any GATTConversationLink, withResponse: Bool, pausing: Bool) async throws {
        for (index, frame) in frames.enumerated() {
            if pausing && index > 0 { try await Task.sleep(for: Self.framePause) }
            try await link.write(frame, to: EufyP2UUID.write, withResponse: withResponse)
        }
    }

    /// The next handshake frame that `accepts`, among at most ``maximumHandshakeFrames``.
    private func handshakeFrame(over link: any GATTConversationLink, accepts: @escaping @Sendable ([UInt8]) -> Bool)
        async throws -> GATTValue
    {
        for _ in 0..<Self.maximumHandshakeFrames {
            let value = try await link.nextValue(timeout: Self.answerTimeout) { $0.characteristicUUID == EufyP2UUID.handshake }
            if accepts(value.value) { return value }
        }
        throw Stop(reason: "handshake-no-answer", detail: "no handshake answer among \(Self.maximumHandshakeFrames) frames",
                   time: await link.now())
    }

    /// The whole message with `prefix`, its base64 text and the arrival of its last frame.
    private func message(_ prefix: UInt8, over link: any GATTConversationLink) async throws -> (ascii: [UInt8], time: Date) {
        var reassembly = EufyP2Handshake.Reassembly(prefix: prefix)
        for _ in 0..<Self.maximumHandshakeFrames {
            let value = try await handshakeFrame(over: link) { $0.first == prefix }
            do {
                if let ascii = try reassembly.take(value.value) { return (ascii, value.time) }
            } catch {
                throw Stop(reason: error.reason, detail: error.description, time: value.time)
            }
        }
        throw Stop(reason: "handshake-no-answer", detail: "no whole handshake message among \(Self.maximumHandshakeFrames) frames",
                   time: await link.now())
    }

    private func take(_ weight: EufyP2Weight, at time: Date, into output: inout AdapterOutput) {
        let identifier = weighings.syncIdentifier(for: device.address, kilograms: weight.kilograms, at: time)
        var metadata = Metadata(syncIdentifier: identifier, syncVersion: Self.syncVersion, timeZone: context.timeZone.identifier)
        if let impedance = weight.impedanceOhms { metadata.entries["IngestImpedanceOhm"] = .number(impedance) }
        output.records.append(.sample(QuantitySample(
            type: .bodyMass, quantity: Quantity(value: weight.kilograms, unit: .kilogram), start: time, end: time,
            source: context.source, device: Device(name: device.name, manufacturer: "Eufy", localIdentifier: device.address.description),
            metadata: metadata)))
    }
}
