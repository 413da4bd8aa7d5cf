import AdapterKit
import EufyScale
import Foundation
import HealthModel
import Synchronization
import Transport

/// The weighings P2 scales showed lately in one run, per scale, so that one standing on the scale is one
/// sample whichever way it arrives: the weight the scale advertises and the weighing with its
/// impedance read over the connection share the sync identifier of whichever came first
/// (`eufy-p2/<address>/<Unix seconds>`). The advertised one is version 1, the connected one
/// version 2, so the store replaces the advertised weight with the connected weighing and keeps
/// the connected one when the advertisement comes after it.
///
/// Two arrivals are one weighing when they come from the same scale within ``window`` and
/// their weights differ by at most ``tolerance`` (hundredths of a kilogram). Bounded: the
/// latest weighing of at most ``maximumScales`` scales is kept.
///
/// One per run (``ofRun(_:)``: the run's ``AdapterRunState``, which the advertised sessions the
/// router makes and the conversations of the same run are given): a replay, a capture or a
/// daemon run starts with none, so a weighing of an earlier run, or of another replay in the same
/// process, never lends its identifier.
public final class EufyP2Weighings: Sendable {
    /// How far apart the advertised and the connected arrival of one weighing may be.
    public static let window: TimeInterval = 300
    /// How far apart (0.01 kg) their weights may be.
    public static let tolerance = 10
    /// Scales whose latest weighing is remembered.
    public static let maximumScales = 256

    private struct Latest {
        var raw: Int
        var time: Date
        var syncIdentifier: String
    }

    private let latest = Mutex<[BLEAddress: Latest]>([:])

    public init() {}

    /// The run's weighings (made on first use), shared by the sessions and conversations given `context`'s run.
    public static func ofRun(_ context: AdapterContext) -> EufyP2Weighings {
        context.run.shared(adapter: EufyP2ScaleAdapter.id) { EufyP2Weighings() }
    }

    /// How many scales' latest weighings are remembered.
    public var count: Int { latest.withLock { $0.count } }

    /// The sync identifier of the weighing of `kilograms` that `address` showed at `time`.
    public func syncIdentifier(for address: BLEAddress, kilograms: Double, at time: Date) -> String {
        let raw = Int((kilograms * 100).rounded())
        return latest.withLock { latest in
            if let known = latest[address], abs(known.raw - raw) <= Self.tolerance,
               abs(known.time.timeIntervalSince(time)) <= Self.window
            {
                return known.syncIdentifier
            }
            if latest[address] == nil, latest.count >= Self.maximumScales,
               let oldest = latest.min(by: { $0.value.time < $1.value.time })?.key
            {
                latest[oldest] = nil
            }
            let identifier = "eufy-p2/\(address)/\(Int(time.timeIntervalSince1970))"
            latest[address] = Latest(raw: raw, time: time, syncIdentifier: identifier)
            return identifier
        }
    }
}

/// The P2 family's advertisements: `eufy-scale`'s decoder reads them (weight, the P2 Pro's heart
/// rate); each weight gets the weighing's sync identifier (``EufyP2Weighings``) at version 1, the
/// heart rate the same identifier.
final class EufyP2AdvertisedSession: BLEAdapterSession {
    /// The sync version of an advertised weight (below the connected weighing's).
    static let syncVersion = 1

    private let advertised: AdvertisedReadingSession
    private let address: BLEAddress
    private let weighings: EufyP2Weighings

    init(device: BLEDeviceTraits, context: AdapterContext, weighings: EufyP2Weighings) {
        advertised = AdvertisedReadingSession(device: device, context: context, decoder: EufyAdvertisementDecoder())
        address = device.address
        self.weighings = weighings
    }

    func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        let first = output.records.count
        advertised.receive(event, into: &output)
        let added = output.records[first...].compactMap { record -> QuantitySample? in
            if case .sample(let sample) = record { return sample }
            return nil
        }
        guard let weight = added.first(where: { $0.type == .bodyMass }),
              let kilograms = try? weight.quantity.doubleValue(for: .kilogram)
        else { return }
        let identifier = weighings.syncIdentifier(for: address, kilograms: kilograms, at: weight.start)
        for index in first..<output.records.count {
            guard case .sample(var sample) = output.records[index] else { continue }
            sample.metadata.syncIdentifier = identifier
            sample.metadata.syncVersion = Self.syncVersion
            output.records[index] = .sample(sample)
        }
    }
}
