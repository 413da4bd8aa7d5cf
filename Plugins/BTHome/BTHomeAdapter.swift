import AdapterKit
import AdvertisementCrypto
import Foundation
import HealthModel
import Transport

/// The built-in adapter for BTHome v2 advertisements (service data 0xFCD2), in clear or encrypted
/// (AES-CCM with the device's key, ``AdvertisementKeys``; `ingestd keys add`).
///
/// Mass objects become `BodyMass`; temperature objects are the room's air temperature and become
/// ingestd's `IngestQuantityTypeIdentifierAmbientTemperature`, never `BodyTemperature`. Every
/// other object is counted as skipped with its id in the reason.
public struct BTHomeAdapter: BLEAdapter {
    /// The adapter id, also the sample source.
    public static let id = "bthome"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "BTHome v2",
            version: "1",
            summary: "Body mass and ambient temperature from BTHome v2 advertisements (encrypted ones with the device's key)",
            matches: [.ble(BLEMatch(serviceUUIDs: [BTHomeDecoder.serviceUUID]))],
            produces: [.bodyMass, .ambientTemperature],
            how: "advertisements",
            models: [
                AdapterModel(maker: "BTHome", name: "v2 sensors (unencrypted)", offers: "any BTHome object", reads: [.bodyMass, .ambientTemperature], note: "mass and temperature objects only; temperature is ambient", capture: "bthome-mass"),
                AdapterModel(maker: "BTHome", name: "v2 sensors (encrypted, with the device's key: `ingestd keys add`)", offers: "any BTHome object",
                             reads: [.bodyMass, .ambientTemperature], note: "mass and temperature objects only; temperature is ambient", capture: "bthome-encrypted"),
            ]
        )
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        BTHomeSession(device: device, context: context)
    }
}

/// One BTHome device's decoding state: the last payload, to drop rebroadcasts, and the
/// firmware version once the device has sent it.
///
/// A payload equal to the previous one is a rebroadcast: with a packet id (object 0x00) the
/// device promises a new id for new data, so the same id and bytes mean the same packet
/// (`repeated-packet-id`); without one, identical bytes are treated the same way
/// (`repeated-payload`). Sample times are reception times. Encrypted packets are decrypted with
/// the device's key and their MIC checked; their counter decides repeats and replays
/// (``EncryptedAdvertisementState``).
public final class BTHomeSession: BLEAdapterSession {
    private let context: AdapterContext
    private let address: BLEAddress
    private var name: String?
    private var firmwareVersion: String?
    private var lastPayload: [UInt8]?
    private var batteries = BatteryReports()
    private var encryption: EncryptedAdvertisementState

    public init(device: BLEDeviceTraits, context: AdapterContext) {
        self.context = context
        self.address = device.address
        self.name = device.name
        self.encryption = EncryptedAdvertisementState(address: device.address, source: context.source, keys: context.keys,
                                                 protocolName: "BTHome")
    }

    public func finish(into output: inout AdapterOutput) { encryption.finish(into: &output) }

    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        guard case .advertisement(let advertisement) = event else {
            output.skip("not-an-advertisement")
            return
        }
        if let localName = advertisement.localName { name = localName }
        guard let payload = advertisement.serviceData[BTHomeDecoder.serviceUUID] else {
            output.skip("no-bthome-service-data")
            return
        }
        var packet: BTHomePacket
        do {
            packet = try BTHomeDecoder.decode(payload)
            if packet.deviceInfo.isEncrypted {
                guard let clear = try open(packet, payload: payload, time: advertisement.time, into: &output) else { return }
                let macAddress = packet.macAddress
                packet = try BTHomeDecoder.decode(clear)
                packet.macAddress = macAddress
            }
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: advertisement.time)
            return
        }
        if payload == lastPayload {
            output.skip(packet.packetID == nil ? "repeated-payload" : "repeated-packet-id")
            return
        }
        lastPayload = payload

        for object in packet.objects {
            switch object.id {
            case 0xF1, 0xF2:
                // Firmware version, least significant part first: F1 00 01 02 04 = 4.2.1.0.
                firmwareVersion = object.valueBytes.reversed().map(String.init).joined(separator: ".")
            default:
                break
            }
        }
        for object in packet.objects {
            handle(object, packet: packet, time: advertisement.time, into: &output)
        }
        if let error = packet.objectListError {
            output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: advertisement.time)
        }
    }

    /// The clear service data of an encrypted packet; nil (counted, explained once) for a
    /// rebroadcast, a missing key, a MIC mismatch or a replayed counter.
    private func open(_ packet: BTHomePacket, payload: [UInt8], time: Date, into output: inout AdapterOutput) throws(BTHomeDecodingError) -> [UInt8]? {
        guard let parts = BTHomeEncryption.parts(of: packet, device: address) else {
            throw .tooShort(field: "the encrypted objects, counter and MIC", offset: packet.macAddress == nil ? 1 : 7,
                            bytes: payload)
        }
        guard let plaintext = encryption.open(counter: parts.counter, nonce: parts.nonce, ciphertext: parts.ciphertext,
                                              mic: parts.mic, repeatReason: "repeated-counter", time: time, into: &output)
        else { return nil }
        return BTHomeEncryption.clearServiceData(deviceInfo: packet.deviceInfo, plaintext: plaintext)
    }

    /// The device a packet's samples and battery belong to.
    private func device(_ packet: BTHomePacket) -> Device {
        Device(name: name, firmwareVersion: firmwareVersion, localIdentifier: (packet.macAddress ?? address).description)
    }

    private func handle(_ object: BTHomeObject, packet: BTHomePacket, time: Date, into output: inout AdapterOutput) {
        let type: QuantityType
        let unit: HealthModel.Unit
        switch object.id {
        case 0x00, 0xF1, 0xF2:
            return  // packet id and firmware version: used above, not measurements
        case 0x01:
            // Battery (uint8, %): the device's charge, not a health sample.
            guard let value = object.value else { return }
            batteries.note(Int(value), device: device(packet), source: context.source, at: time, into: &output)
            return
        case 0x06:
            (type, unit) = (.bodyMass, .kilogram)
        case 0x07:
            (type, unit) = (.bodyMass, .pound)
        case 0x02, 0x45, 0x57, 0x58:
            (type, unit) = (.ambientTemperature, .degreeCelsius)
        default:
            output.skip(String(format: "object-0x%02x-no-health-type", object.id))
            return
        }
        guard let value = object.value else { return }
        let sample = QuantitySample(
            type: type,
            quantity: Quantity(value: value, unit: unit),
            start: time,
            end: time,
            source: context.source,
            device: device(packet),
            metadata: Metadata(timeZone: context.timeZone.identifier)
        )
        output.records.append(.sample(sample))
    }
}
