import Foundation
import Synchronization
import Transport

/// A simulated Mi Body Composition Scale with stored readings: service 0x181B with the history
/// characteristic (vendor UUID 00002A2F-0000-3512-2118-0009AF100700; write, notify). It keeps a
/// list of 13-byte reading frames and, per history id, how many of them were acknowledged:
/// `01 FF FF <id>` selects the readings `id` has not acknowledged (answered `01 <count> 00 <id> 00`),
/// `02` sends them (one per notification) and the end marker `03`,
/// `04 FF FF <id>` marks everything sent as acknowledged for `id`.
public final class SimulatedMiScale: SimulatedResponder {
    public static let history = BLEUUID(high: 0x0000_2A2F_0000_3512, low: 0x2118_0009_AF10_0700)
    /// The scale's clock (Current Time, read and written).
    public static let clock = BLEUUID(0x2A2B)

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "MIBFS", services: [
        .init(uuid: BLEUUID(0x181B), characteristics: [.init(uuid: history, properties: 0x18),
                                                       .init(uuid: clock, properties: 0x0A)]),
    ])

    private struct State {
        var frames: [[UInt8]] = []
        var acknowledged: [UInt16: Int] = [:]
        var selectedID: UInt16?
        var sentUpTo = 0
        var writes: [[UInt8]] = []
        var clockWrites: [[UInt8]] = []
    }
    private let state = Mutex(State())

    /// A scale holding `frames` (13 bytes each, oldest first).
    public init(frames: [[UInt8]]) {
        state.withLock { $0.frames = frames }
    }

    /// The scale took new readings.
    public func add(_ frames: [[UInt8]]) { state.withLock { $0.frames += frames } }

    /// Everything written to the history characteristic, in order.
    public var writes: [[UInt8]] { state.withLock { $0.writes } }

    /// Everything written to the clock (0x2A2B), in order.
    public var clockWrites: [[UInt8]] { state.withLock { $0.clockWrites } }

    /// How many readings `id` acknowledged.
    public func acknowledgedCount(id: UInt16) -> Int { state.withLock { $0.acknowledged[id] ?? 0 } }

    /// A stabilized kg frame with impedance: `weight` in kg, taken at `date` (UTC fields).
    public static func frame(weight: Double, impedance: UInt16, year: Int, month: Int, day: Int, hour: Int, minute: Int,
                             second: Int) -> [UInt8] {
        let raw = UInt16((weight * 200).rounded())
        return [0x02, 0x26, UInt8(year & 0xFF), UInt8(year >> 8), UInt8(month), UInt8(day), UInt8(hour), UInt8(minute),
                UInt8(second), UInt8(impedance & 0xFF), UInt8(impedance >> 8), UInt8(raw & 0xFF), UInt8(raw >> 8)]
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        if characteristic == Self.clock {
            state.withLock { $0.clockWrites.append(value) }
            return []
        }
        guard characteristic == Self.history else { return [] }
        return state.withLock { state -> [SimulatedReply] in
            state.writes.append(value)
            switch value.first {
            case 0x01 where value.count == 5 && value[1] == 0xFF && value[2] == 0xFF:
                let id = UInt16(value[3]) << 8 | UInt16(value[4])
                state.selectedID = id
                let count = state.frames.count - (state.acknowledged[id] ?? 0)
                return [SimulatedReply(characteristic: Self.history, value: [0x01, UInt8(count), 0x00, value[3], value[4], 0x00])]
            case 0x02 where value.count == 1:
                guard let id = state.selectedID else { return [] }
                let unsent = Array(state.frames[(state.acknowledged[id] ?? 0)...])
                state.sentUpTo = state.frames.count
                var replies = unsent.map { SimulatedReply(characteristic: Self.history, value: $0) }
                replies.append(SimulatedReply(characteristic: Self.history, value: [0x03]))
                return replies
            case 0x04 where value.count == 5:
                let id = UInt16(value[3]) << 8 | UInt16(value[4])
                state.acknowledged[id] = state.sentUpTo
                return []
            default:
                return []
            }
        }
    }
}
