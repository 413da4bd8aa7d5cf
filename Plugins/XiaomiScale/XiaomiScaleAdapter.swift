import AdapterKit
import Foundation
import HealthModel
import Transport

/// The built-in adapter for Xiaomi's Mi Smart Scale and Mi Body Composition Scale: the weight
/// broadcasts (advertisements), and, once connected, the readings the scale stored while no
/// phone was near (its history download, ``MiScaleHistoryConversation``).
///
/// It matches on the scale's service-data UUID together with its advertised name, so that it
/// wins over the generic GATT weight scale adapter only for these scales.
public struct XiaomiScaleAdapter: ConversingAdapter {
    /// The adapter id, also the sample source.
    public static let id = "xiaomi-scale"
    /// Metadata entry holding the body composition scale's impedance in ohms (a number).
    public static let impedanceMetadataKey = AdapterMetadataKey.impedanceOhm
    /// Metadata entry set to `true` when the scale's clock was unset and the reception time was used.
    public static let clockUnsetMetadataKey = "IngestDeviceClockUnset"

    /// Advertised names of the 0x181D smart scales (`MI_SCALE`, `MI SCALE2`; `MISCA…` when shortened).
    public static let smartScaleNamePattern = "^(MI[_ ]?SCALE|MISCA)"
    /// Advertised names of the 0x181B body composition scales (`MIBCS`, `MIBFS`).
    public static let bodyCompositionScaleNamePattern = "^MIB[CF]S"

    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.id,
            name: "Xiaomi Mi scales",
            version: "1",
            summary: "Body mass (and impedance) from the advertisements and the stored history of the Mi Smart Scale and Mi Body Composition Scale",
            matches: [
                .ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181D)], namePattern: Self.smartScaleNamePattern)),
                .ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181B)], namePattern: Self.bodyCompositionScaleNamePattern)),
                // The Mi scales' own service data frames (10 bytes under 0x181D, 13 under 0x181B), even
                // before the name arrives in a scan response; standard scales list the service UUID
                // or broadcast other lengths, so they still reach the generic GATT adapter.
                .ble(BLEMatch(serviceDataUUIDs: [BLEUUID(0x181D)], serviceDataLengths: [10])),
                .ble(BLEMatch(serviceDataUUIDs: [BLEUUID(0x181B)], serviceDataLengths: [13])),
            ],
            produces: [.bodyMass],
            how: "advertisements; GATT conversation: clock set, the stored history, acknowledged on the scale after the commit",
            models: [
                AdapterModel(maker: "Xiaomi", name: "Mi Smart Scale (XMTZC01HM, XMTZC04HM)", offers: "weight, stored history", reads: [.bodyMass], capture: "mi-scale-v1"),
                AdapterModel(maker: "Xiaomi", name: "Mi Body Composition Scale (XMTZC02HM, XMTZC05HM)", offers: "weight, impedance, stored history", reads: [.bodyMass], note: "impedance as metadata", capture: "mi-scale-v2"),
            ]
        )
    }

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        XiaomiScaleSession(device: device, context: context)
    }

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        MiScaleHistoryConversation(device: device, context: context)
    }
}

/// One scale's decoding state: the reading emitted last, so that the many rebroadcasts of one
/// weighing become one sample.
///
/// Only stabilized frames whose weight is still on the scale become samples. The sample time is
/// the scale's clock read in the context's time zone (kept in `HKTimeZone`); an unset clock (before
/// 2014, or impossible fields) falls back to the reception time. The sync identifier
/// `<address>/<scale clock>/<raw weight>` makes a re-ingested reading replace, not duplicate, the
/// stored one; its version is 1 without impedance and 2 with it, so the body composition scale's
/// later frame with impedance supersedes the earlier one without.
public final class XiaomiScaleSession: BLEAdapterSession {
    private let context: AdapterContext
    private let address: BLEAddress
    private var name: String?
    /// The reading emitted last: its clock and raw weight (the sync identity) and sync version.
    private var lastEmitted: (clock: MiScaleClock, rawWeight: UInt16, version: Int)?
    /// Scale clocks to instants in the context's zone (the router's, shared by every scale it serves).
    private let clockTimes: LocalClockTimes

    public init(device: BLEDeviceTraits, context: AdapterContext) {
        self.context = context
        self.address = device.address
        self.name = device.name
        clockTimes = context.clockTimes.timeZone == context.timeZone ? context.clockTimes : LocalClockTimes(timeZone: context.timeZone)
    }

    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        guard case .advertisement(let advertisement) = event else {
            output.skip("not-an-advertisement")
            return
        }
        if let localName = advertisement.localName { name = localName }
        var sawFrame = false
        for model in MiScaleModel.allCases {
            guard let payload = advertisement.serviceData[BLEUUID(model.serviceUUID)] else { continue }
            sawFrame = true
            handle(payload, model: model, advertisement: advertisement, into: &output)
        }
        if !sawFrame { output.skip("no-scale-service-data") }
    }

    private func handle(_ payload: [UInt8], model: MiScaleModel, advertisement: BLEAdvertisement, into output: inout AdapterOutput) {
        let reading: MiScaleReading
        do {
            reading = try MiScaleDecoder.decode(payload, model: model)
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(address): \(error.description)", time: advertisement.time)
            return
        }
        if reading.isWeightRemoved {
            output.skip("weight-removed")
            return
        }
        if !reading.isStabilized {
            output.skip("not-stabilized")
            return
        }
        let version = reading.impedanceOhms == nil ? 1 : 2
        // Compared field by field: building the identifier text for every rebroadcast is costly.
        if let lastEmitted, lastEmitted.clock == reading.clock, lastEmitted.rawWeight == reading.rawWeight,
           lastEmitted.version >= version {
            output.skip("repeated-broadcast")
            return
        }
        lastEmitted = (reading.clock, reading.rawWeight, version)
        let sample = MiScaleSample.make(from: reading, address: address, name: name, receivedAt: advertisement.time,
                                        context: context, clockTimes: clockTimes)
        output.records.append(.sample(sample))
    }
}

/// The sample of one stabilized Mi scale reading, as broadcast or as downloaded from the scale's
/// history: the same reading gives the same sample (sync identifier and version) either way.
enum MiScaleSample {
    static func make(from reading: MiScaleReading, address: BLEAddress, name: String?, receivedAt: Date,
                     context: AdapterContext, clockTimes: LocalClockTimes? = nil) -> QuantitySample {
        let version = reading.impedanceOhms == nil ? 1 : 2
        let addressText = address.description
        var syncIdentifier = addressText
        syncIdentifier.reserveCapacity(48)
        syncIdentifier += "/"
        syncIdentifier += reading.clock.description
        syncIdentifier += "/"
        syncIdentifier += String(reading.rawWeight)
        var metadata = Metadata(syncIdentifier: syncIdentifier, syncVersion: version, timeZone: context.timeZone.identifier)
        let time: Date
        if reading.clock.isPlausible,
           let scaleTime = clockTimes.map({ reading.clock.date(using: $0) }) ?? reading.clock.date(in: context.timeZone) {
            time = scaleTime
        } else {
            time = receivedAt
            metadata.entries[XiaomiScaleAdapter.clockUnsetMetadataKey] = .bool(true)
        }
        if let ohms = reading.impedanceOhms {
            metadata.entries[XiaomiScaleAdapter.impedanceMetadataKey] = .number(Double(ohms))
        }
        let device = Device(name: name, manufacturer: "Xiaomi", model: reading.model.modelNumbers,
                            localIdentifier: addressText)
        return QuantitySample(type: .bodyMass, quantity: Quantity(value: reading.weightKilograms, unit: .kilogram),
                              start: time, end: time, source: context.source, device: device, metadata: metadata)
    }
}
