import Foundation
import Synchronization
import Transport

/// A simulated Yunmai Mini scale: commands written to 0xFFE9 (service 0xFFE5), frames notified on
/// 0xFFE4 (service 0xFFE0). On "start measurement" (`0D 05 13 00 16`) it notifies two settling
/// frames and the finished weighing, stamped with the time last set (command 0x11) for the user
/// last written (command 0x10), with protocol version 0x1E (body fat computed by the scale).
public final class SimulatedYunmaiScale: SimulatedResponder {
    public static let command = BLEUUID(0xFFE9)
    public static let measurement = BLEUUID(0xFFE4)

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "YUNMAI-SIGNAL-M1US", services: [
        .init(uuid: BLEUUID(0xFFE0), characteristics: [.init(uuid: measurement, properties: 0x10)]),
        .init(uuid: BLEUUID(0xFFE5), characteristics: [.init(uuid: command, properties: 0x0C)]),
    ])

    private struct State {
        var commands: [[UInt8]] = []
        var clock: UInt32 = 0
        var userID: UInt32 = 0
    }
    private let state = Mutex(State())
    private let weightCentikilograms: UInt16
    private let resistance: UInt16
    private let bodyFatCentipercent: UInt16

    public init(weightCentikilograms: UInt16, resistance: UInt16, bodyFatCentipercent: UInt16) {
        self.weightCentikilograms = weightCentikilograms
        self.resistance = resistance
        self.bodyFatCentipercent = bodyFatCentipercent
    }

    /// The commands received, in order.
    public var commands: [[UInt8]] { state.withLock { $0.commands } }

    /// A response frame: `0D 1E <length> <type> data <xor>`.
    public static func frame(type: UInt8, data: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0x0D, 0x1E, UInt8(data.count + 5), type] + data
        bytes.append(bytes.dropFirst().reduce(0, ^))
        return bytes
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.command, value.count >= 5, value[0] == 0x0D else { return [] }
        let (clock, user): (UInt32, UInt32) = state.withLock { state in
            state.commands.append(value)
            switch value[2] {
            case 0x10 where value.count >= 8: state.userID = UInt32(value[6]) << 8 | UInt32(value[7])
            case 0x11 where value.count >= 7:
                state.clock = UInt32(value[3]) << 24 | UInt32(value[4]) << 16 | UInt32(value[5]) << 8 | UInt32(value[6])
            default: break
            }
            return (state.clock, state.userID)
        }
        guard value == [0x0D, 0x05, 0x13, 0x00, 0x16] else { return [] }
        let settling = [weightCentikilograms / 2, weightCentikilograms - 40].map { weight in
            SimulatedReply(characteristic: Self.measurement,
                           value: Self.frame(type: 0x01, data: Self.bigEndian(clock) + Self.bigEndian(weight)))
        }
        let result = Self.frame(type: 0x02, data: [0x00] + Self.bigEndian(clock + 5) + Self.bigEndian(user)
                                    + Self.bigEndian(weightCentikilograms) + Self.bigEndian(resistance)
                                    + Self.bigEndian(bodyFatCentipercent))
        return settling + [SimulatedReply(characteristic: Self.measurement, value: result)]
    }
}
