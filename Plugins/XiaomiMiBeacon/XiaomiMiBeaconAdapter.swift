import AdapterKit
import AdvertisementCrypto
import Foundation
import HealthModel
import Transport

/// The built-in adapter for Xiaomi's MiBeacon health broadcasters (service data 0xFE95): the Body
/// Composition Scale S400, the Smart Scale S200 and the MMC-W505 and MMC-T201-1 thermometers,
/// including the AES-CCM encrypted v4/v5 frames, decrypted with the device's key
/// (``AdvertisementKeys``; `ingestd keys add`).
public struct XiaomiMiBeaconAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "xiaomi-mibeacon"
    /// Metadata: the impedance measured at 50 kHz (ohms), under the key the Mi scale uses for its impedance.
    public static let impedanceMetadataKey = "IngestImpedanceOhm"
    /// Metadata: the S400's impedance measured at 250 kHz (ohms).
    public static let highFrequencyImpedanceMetadataKey = "IngestImpedanceHighFrequencyOhm"
    /// Metadata: the scale's user profile slot the weighing was given.
    public static let profileMetadataKey = "IngestScaleProfile"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Xiaomi MiBeacon health devices",
            version: "1",
            summary: "Body mass, heart rate and impedance of the S400 and S200 scales and body temperature of the MMC-W505 "
                + "and MMC-T201-1 thermometers from MiBeacon advertisements (v4/v5 encrypted with the device's key)",
            matches: [.ble(BLEMatch(serviceDataUUIDs: [MiBeaconDecoder.serviceUUID]))],
            produces: [.bodyMass, .heartRate, .bodyTemperature],
            how: "advertisements (MiBeacon v4/v5 encrypted with the device's key: `ingestd keys add`)",
            models: [
                AdapterModel(maker: "Xiaomi", name: "Body Composition Scale S400 (MJTZC01YM)", offers: "weight, heart rate, impedance at 50 and 250 kHz",
                             reads: [.bodyMass, .heartRate], note: "both impedances as metadata", capture: "s400"),
                AdapterModel(maker: "Xiaomi", name: "Smart Scale S200 (MJTZC02YM)", offers: "weight", reads: [.bodyMass], capture: "s200"),
                AdapterModel(maker: "Xiaomi / Miaomiaoce", name: "Body thermometers MMC-W505, MMC-T201-1", offers: "body temperature (the T201 skin temperature)",
                             reads: [.bodyTemperature], note: "the T201's body temperature is xiaomi-ble's fitted approximation", capture: "thermometers"),
            ]
        )
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        XiaomiMiBeaconSession(device: device, context: context)
    }
}

/// One MiBeacon device's state: the last frame counter accepted (a repeat is a rebroadcast; an
/// older one a replayed frame), its key (looked up once), the S400 weighing waiting for its
/// closing frame, and what was already explained.
public final class XiaomiMiBeaconSession: BLEAdapterSession {
    private let context: AdapterContext
    private let address: BLEAddress
    private var name: String?
    private var batteries = BatteryReports()
    /// Counters, refusals and explanations of the encrypted frames.
    private var encryption: EncryptedAdvertisementState
    /// The counter byte and object data of the last clear frame: the same again is a rebroadcast.
    private var lastClearFrame: (counter: UInt8, objects: ArraySlice<UInt8>)?
    /// An S400 weighing (mass, heart rate, 50 kHz impedance) waiting for its 250 kHz frame.
    private var pendingWeighing: (counter: UInt32, kilograms: Double, heartRate: Int?, impedance: Double?, profile: UInt8, time: Date)?

    public init(device: BLEDeviceTraits, context: AdapterContext) {
        self.context = context
        self.address = device.address
        self.name = device.name
        self.encryption = EncryptedAdvertisementState(address: device.address, source: context.source, keys: context.keys,
                                                 protocolName: "MiBeacon")
    }

    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        guard case .advertisement(let advertisement) = event else {
            output.skip("not-an-advertisement")
            return
        }
        if let localName = advertisement.localName { name = localName }
        guard let payload = advertisement.serviceData[MiBeaconDecoder.serviceUUID] else {
            output.skip("no-mibeacon-service-data")
            return
        }
        let time = advertisement.time
        let frame: MiBeaconFrame
        do {
            frame = try MiBeaconDecoder.frame(payload, advertiser: address)
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: time)
            return
        }
        guard let product = MiBeaconProduct.product(frame.productID) else {
            output.skip(String(format: "product-0x%04x-not-a-health-device", frame.productID))
            return
        }
        guard frame.hasObjects else {
            output.skip("no-objects")
            return
        }
        let objectData: ArraySlice<UInt8>
        let counter: UInt32
        if frame.isEncrypted {
            guard let opened = open(frame, time: time, into: &output) else { return }
            (objectData, counter) = opened
        } else {
            counter = UInt32(frame.frameCounter)
            let clear = frame.bytes[frame.objectOffset...]
            if let last = lastClearFrame, last.counter == frame.frameCounter, last.objects == clear {
                output.skip("repeated-frame-counter")
                return
            }
            lastClearFrame = (frame.frameCounter, clear)
            objectData = clear
        }
        let objects: [MiBeaconObject]
        do {
            objects = try MiBeaconDecoder.objects(objectData)
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: time)
            return
        }
        for object in objects {
            do {
                guard let reading = try MiBeaconObjects.reading(object, kind: product.kind) else {
                    output.skip(String(format: "object-0x%04x-no-health-type", object.id))
                    continue
                }
                handle(reading, product: product, counter: counter, time: time, into: &output)
            } catch {
                output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: time)
            }
        }
    }

    public func finish(into output: inout AdapterOutput) {
        if pendingWeighing != nil {
            pendingWeighing = nil
            output.skip("s400-weighing-not-completed")
        }
        encryption.finish(into: &output)
    }

    /// Decrypts and authenticates an encrypted v4/v5 frame; nil (counted, explained once) when it
    /// is a rebroadcast, has no key, fails its MIC or replays an older counter.
    private func open(_ frame: MiBeaconFrame, time: Date, into output: inout AdapterOutput)
        -> (objects: ArraySlice<UInt8>, counter: UInt32)?
    {
        guard let counter = frame.extendedCounter else { return nil }
        let (ciphertext, mic) = MiBeaconDecoder.sealed(frame)
        guard let plaintext = encryption.open(counter: counter, nonce: MiBeaconDecoder.nonce(of: frame, device: address),
                                              ciphertext: ciphertext, mic: mic, associatedData: MiBeaconDecoder.associatedData,
                                              time: time, into: &output)
        else { return nil }
        return (plaintext[...], counter)
    }

    private func handle(_ reading: MiBeaconReading, product: MiBeaconProduct, counter: UInt32, time: Date,
                        into output: inout AdapterOutput) {
        switch reading {
        case .s400(let profile, let kilograms, let heartRate, let impedance):
            switch (kilograms, heartRate, impedance) {
            case (nil, nil, nil):
                // Stepped off: a weighing still waiting never closed.
                if pendingWeighing != nil { output.skip("s400-weighing-not-completed") }
                pendingWeighing = nil
                output.skip("load-removed")
            case (nil, nil, let high?):
                // The closing frame: the 250 kHz impedance; the weighing before it is complete.
                guard let weighing = pendingWeighing else {
                    output.skip("s400-closing-frame-without-weighing")
                    return
                }
                pendingWeighing = nil
                emitWeighing(kilograms: weighing.kilograms, heartRate: weighing.heartRate, lowImpedance: weighing.impedance,
                             highImpedance: high, profile: weighing.profile, counter: weighing.counter, time: weighing.time,
                             product: product, into: &output)
            case (let kilograms?, _, nil):
                // Weighed without a contact (socks): final, no impedance follows.
                pendingWeighing = nil
                emitWeighing(kilograms: kilograms, heartRate: heartRate, lowImpedance: nil, highImpedance: nil,
                             profile: profile, counter: counter, time: time, product: product, into: &output)
            case (let kilograms?, _, let low?):
                // Not yet stable by the scale's own protocol: the 250 kHz frame closes it.
                if pendingWeighing != nil { output.skip("s400-weighing-not-completed") }
                pendingWeighing = (counter, kilograms, heartRate, low, profile, time)
                output.skip("s400-weighing-awaiting-closing-frame")
            case (nil, _, _):
                output.skip("s400-frame-without-mass")
            }
        case .s200(let profile, let kilograms, _):
            guard let kilograms else {
                output.skip("load-removed")
                return
            }
            emitWeighing(kilograms: kilograms, heartRate: nil, lowImpedance: nil, highImpedance: nil, profile: profile,
                         counter: counter, time: time, product: product, into: &output)
        case .bodyTemperature(let celsius):
            guard let celsius else {
                output.skip("no-temperature")
                return
            }
            emit(.bodyTemperature, Quantity(value: celsius, unit: .degreeCelsius), product: product, time: time,
                 metadata: Metadata(timeZone: context.timeZone.identifier), into: &output)
        case .babyThermometer(_, _, let body, let battery):
            emit(.bodyTemperature, Quantity(value: body, unit: .degreeCelsius), product: product, time: time,
                 metadata: Metadata(timeZone: context.timeZone.identifier), into: &output)
            batteries.note(Int(battery), device: device(product), source: context.source, at: time, into: &output)
        }
    }

    private func emitWeighing(kilograms: Double, heartRate: Int?, lowImpedance: Double?, highImpedance: Double?, profile: UInt8,
                              counter: UInt32, time: Date, product: MiBeaconProduct, into output: inout AdapterOutput) {
        // One weighing's samples share their sync identifier (its frame counter and time).
        var metadata = Metadata(syncIdentifier: "\(address)/\(counter)/\(Int64(time.timeIntervalSince1970))", syncVersion: 1,
                                timeZone: context.timeZone.identifier)
        metadata.entries[XiaomiMiBeaconAdapter.profileMetadataKey] = .number(Double(profile))
        if let lowImpedance { metadata.entries[XiaomiMiBeaconAdapter.impedanceMetadataKey] = .number(lowImpedance) }
        if let highImpedance { metadata.entries[XiaomiMiBeaconAdapter.highFrequencyImpedanceMetadataKey] = .number(highImpedance) }
        emit(.bodyMass, Quantity(value: kilograms, unit: .kilogram), product: product, time: time, metadata: metadata, into: &output)
        if let heartRate {
            emit(.heartRate, Quantity(value: Double(heartRate), unit: .countPerMinute), product: product, time: time,
                 metadata: metadata, into: &output)
        }
    }

    private func emit(_ type: QuantityType, _ quantity: Quantity, product: MiBeaconProduct, time: Date, metadata: Metadata,
                      into output: inout AdapterOutput) {
        // Decoding alone (`decode`) shows what is stored, so an impossible value is refused here as the pipeline would.
        let canonical = (try? quantity.unit.convert(quantity.value, to: type.canonicalUnit)) ?? quantity.value
        guard type.isPlausible(canonical) else {
            output.reject(context.source, reason: "out-of-range",
                          detail: "\(address): \(type.shortName) \(quantity) is outside the plausible range", time: time)
            return
        }
        output.records.append(.sample(QuantitySample(type: type, quantity: quantity, start: time, end: time,
                                                     source: context.source, device: device(product), metadata: metadata)))
    }

    /// The device a product's samples and battery belong to.
    private func device(_ product: MiBeaconProduct) -> Device {
        Device(name: name ?? product.name, manufacturer: "Xiaomi", model: product.model, localIdentifier: address.description)
    }
}
