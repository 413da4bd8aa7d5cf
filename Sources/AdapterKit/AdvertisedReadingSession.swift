import Foundation
import HealthModel
import Transport

/// Metadata keys the broadcast adapters share.
public enum AdapterMetadataKey {
    /// A scale's bioelectrical impedance in ohms (a number), kept with the weighing.
    public static let impedanceOhm = "IngestImpedanceOhm"
}

/// A value read from one advertisement, in the unit the device sent it.
public struct AdvertisedValue: Sendable, Equatable {
    public var type: QuantityType
    public var value: Double
    public var unit: HealthModel.Unit
    public var metadata: [String: MetadataValue]

    public init(_ type: QuantityType, _ value: Double, _ unit: HealthModel.Unit, metadata: [String: MetadataValue] = [:]) {
        self.type = type
        self.value = value
        self.unit = unit
        self.metadata = metadata
    }
}

/// What one advertisement of a broadcasting device says.
public enum AdvertisedReading: Sendable, Equatable {
    /// Final values. `identity` is what makes the reading this reading (a scale's settled weight, a
    /// strap's payload): the same identity again, with nothing in between, is a rebroadcast.
    /// `model` and `manufacturer` name the device when the frame tells (else the decoder's maker).
    case values([AdvertisedValue], identity: [UInt8], model: String? = nil, manufacturer: String? = nil)
    /// A measurement still settling (a scale's moving weight): not a sample.
    case settling
    /// The load left the scale (weight zero, idle frame): nothing to store.
    case loadRemoved
    /// A frame of the device's that carries nothing we read; the reason is counted as skipped.
    case nothing(String)
}

/// A frame that claims to be the adapter's but cannot be read: a short stable reason and a detail
/// naming the bytes.
public struct AdvertisementFrameError: Error, Equatable, CustomStringConvertible {
    public var reason: String
    public var detail: String

    public init(reason: String, detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// A frame shorter than its layout.
    public static func short(_ bytes: [UInt8], needs length: Int, what: String) -> Self {
        Self(reason: "short-frame", detail: "\(what) needs \(length) bytes, got \(bytes.count): \(hexString(bytes))")
    }

    public var description: String { "\(reason): \(detail)" }
}

/// The pure part of a broadcast adapter: one advertisement in, what it says out.
public protocol AdvertisementReadingDecoder: Sendable {
    /// The device's maker, for the samples' device, unless a reading names it.
    var manufacturer: String? { get }
    func reading(from advertisement: BLEAdvertisement) throws(AdvertisementFrameError) -> AdvertisedReading
    /// The battery charge (percent) the advertisement carries, if its layout has one.
    func batteryPercent(from advertisement: BLEAdvertisement) -> Int?
}

extension AdvertisementReadingDecoder {
    /// Most layouts carry no battery charge.
    public func batteryPercent(from advertisement: BLEAdvertisement) -> Int? { nil }
}

/// A session for devices that only broadcast their readings: the decoder reads each advertisement;
/// settling and load-removed frames are skipped and end the current reading, a rebroadcast of the
/// reading just stored is skipped (`repeated-reading`), a value outside its type's plausible range
/// is a counted rejection (`implausible-value`), every other value becomes a sample stamped with
/// the advertisement's time.
public final class AdvertisedReadingSession: BLEAdapterSession {
    private let context: AdapterContext
    private let decoder: any AdvertisementReadingDecoder
    private let address: BLEAddress
    private var name: String?
    private var lastIdentity: [UInt8]?
    /// The device of the last reading (its model and maker as the frame named them).
    private var lastDevice: Device?
    private var batteries = BatteryReports()

    public init(device: BLEDeviceTraits, context: AdapterContext, decoder: any AdvertisementReadingDecoder) {
        self.context = context
        self.decoder = decoder
        self.address = device.address
        self.name = device.name
    }

    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        guard case .advertisement(let advertisement) = event else {
            output.skip("not-an-advertisement")
            return
        }
        if let localName = advertisement.localName { name = localName }
        let reading: AdvertisedReading
        do {
            reading = try decoder.reading(from: advertisement)
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(address): \(error.detail)", time: advertisement.time)
            return
        }
        defer { noteBattery(advertisement, into: &output) }
        switch reading {
        case .settling:
            lastIdentity = nil
            output.skip("settling")
        case .loadRemoved:
            lastIdentity = nil
            output.skip("load-removed")
        case .nothing(let reason):
            output.skip(reason)
        case .values(let values, let identity, let model, let maker):
            guard identity != lastIdentity else {
                output.skip("repeated-reading")
                return
            }
            lastIdentity = identity
            let device = Device(name: name, manufacturer: maker ?? decoder.manufacturer, model: model,
                                localIdentifier: address.description)
            lastDevice = device
            for value in values {
                let quantity = Quantity(value: value.value, unit: value.unit)
                let canonical = try? quantity.doubleValue(for: value.type.canonicalUnit)
                guard let canonical, value.type.isPlausible(canonical) else {
                    output.reject(context.source, reason: "implausible-value",
                                  detail: "\(address): \(quantity) is outside the plausible range of \(value.type.shortName)",
                                  time: advertisement.time)
                    continue
                }
                var metadata = Metadata(timeZone: context.timeZone.identifier)
                for (key, entry) in value.metadata { metadata.entries[key] = entry }
                output.records.append(.sample(QuantitySample(
                    type: value.type, quantity: quantity, start: advertisement.time, end: advertisement.time,
                    source: context.source, device: device, metadata: metadata)))
            }
        }
    }
}

extension AdvertisedReadingSession {
    /// Hands out the advertisement's battery charge (see `BatteryReports`).
    private func noteBattery(_ advertisement: BLEAdvertisement, into output: inout AdapterOutput) {
        guard let percent = decoder.batteryPercent(from: advertisement) else { return }
        let device = lastDevice ?? Device(name: name, manufacturer: decoder.manufacturer, localIdentifier: address.description)
        batteries.note(percent, device: device, source: context.source, at: advertisement.time, into: &output)
    }
}

/// One device's battery charges as a session hands them out: a charge when it changed, or
/// again an hour after it was last said (the devices page shows when), never one outside 0–100.
public struct BatteryReports: Sendable {
    /// A charge said again is handed out again after this many seconds.
    public static let repeatInterval: TimeInterval = 3600
    private var last: (percent: Int, at: Date)?

    public init() {}

    public mutating func note(_ percent: Int, device: Device, source: String, at time: Date, into output: inout AdapterOutput) {
        guard DeviceBattery.isCharge(percent) else { return }
        if let last, last.percent == percent, time.timeIntervalSince(last.at) < Self.repeatInterval { return }
        last = (percent, time)
        output.batteries.append(DeviceBattery(source: source, device: device, percent: percent, at: time))
    }
}

/// Little-endian and big-endian integers from frame bytes (callers check the length first).
public enum FrameBytes {
    public static func le16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
    public static func be16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
    public static func le24(_ bytes: [UInt8], _ offset: Int) -> Int { le16(bytes, offset) | Int(bytes[offset + 2]) << 16 }
    public static func be24(_ bytes: [UInt8], _ offset: Int) -> Int { be16(bytes, offset) << 8 | Int(bytes[offset + 2]) }
    /// A signed 16-bit little-endian value.
    public static func sle16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(le16(bytes, offset)))) }
    public static func sbe16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(be16(bytes, offset)))) }
}
