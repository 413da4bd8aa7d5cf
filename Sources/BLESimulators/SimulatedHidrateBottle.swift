import Foundation
import Synchronization
import Transport

/// A simulated HidrateSpark bottle: the data point characteristic (notify, write without
/// response) in its vendor service. Each `57` written hands over the oldest stored sip
/// (`<count> <percent> <running figure LE> <seconds ago LE u32> …`, 20 bytes) and forgets it,
/// then notifies how many are left (`<left> 00 …`); with none stored it notifies `00 …`.
public final class SimulatedHidrateBottle: SimulatedResponder {
    public static let dataPoint = BLEUUID(high: 0x016E_11B1_6C8A_4074, low: 0x9E5A_0760_53F9_3784)

    /// The bottle's GATT table.
    public static let profile = SimulatedProfile(name: "h2o4152D", services: [
        .init(uuid: BLEUUID(high: 0x4585_5422_6565_4CD7, low: 0xA2A9_FE8A_F41B_85E8),
              characteristics: [.init(uuid: dataPoint, properties: 0x14)]),
    ])

    private let sips: Mutex<[(percent: UInt8, secondsAgo: UInt32)]>
    private let requests = Mutex(0)

    /// A bottle holding these sips, oldest first.
    public init(sips: [(percent: UInt8, secondsAgo: UInt32)]) {
        self.sips = Mutex(sips)
    }

    /// Sips still stored.
    public var storedSips: Int { sips.withLock { $0.count } }
    /// `57` requests received.
    public var sipRequests: Int { requests.withLock { $0 } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.dataPoint, value == [0x57] else { return [] }
        requests.withLock { $0 += 1 }
        return sips.withLock { sips -> [SimulatedReply] in
            guard !sips.isEmpty else { return [SimulatedReply(characteristic: Self.dataPoint, value: [UInt8](repeating: 0, count: 20))] }
            let count = UInt8(sips.count)
            let sip = sips.removeFirst()
            let age = sip.secondsAgo
            let record: [UInt8] = [count, sip.percent, 0x10, 0x01, UInt8(age & 0xFF), UInt8((age >> 8) & 0xFF),
                                   UInt8((age >> 16) & 0xFF), UInt8(age >> 24)] + [UInt8](repeating: 0, count: 12)
            return [SimulatedReply(characteristic: Self.dataPoint, value: record),
                    SimulatedReply(characteristic: Self.dataPoint, value: [UInt8(sips.count)] + [UInt8](repeating: 0, count: 19))]
        }
    }
}
