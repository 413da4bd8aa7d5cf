import Foundation
import Synchronization
import Transport

/// A simulated QN-protocol scale of the ES-30M dialect (weights in tenths of a kilogram, type 2
/// layout: 0xFFF1 notified, 0xFFF2 written, in service 0xFFF0). On subscription it sends its
/// information frame (0x12), answers the unit configuration (0x13) with ready (0x14), the clock
/// (0x20) with its configuration request (0x21), and the start (0x22) with settling frames, a
/// stable frame without impedance and the stable frame with the impedance (0x10).
public final class SimulatedQNScale: SimulatedResponder {
    public static let notify = BLEUUID(0xFFF1)
    public static let write = BLEUUID(0xFFF2)

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "QN-Scale", services: [
        .init(uuid: BLEUUID(0xFFF0), characteristics: [
            .init(uuid: notify, properties: 0x10),
            .init(uuid: write, properties: 0x0C),
        ]),
    ])

    private let weightTenths: UInt16
    private let resistance: UInt16
    private let writes = Mutex<[[UInt8]]>([])

    public init(weightTenths: UInt16, resistance: UInt16) {
        self.weightTenths = weightTenths
        self.resistance = resistance
    }

    /// Every value written, in order.
    public var received: [[UInt8]] { writes.withLock { $0 } }

    static func sealed(_ body: [UInt8]) -> [UInt8] {
        body + [UInt8(truncatingIfNeeded: body.reduce(0) { $0 + Int($1) })]
    }

    /// A 0x10 frame of the ES-30M layout: state (0 measuring, 2 stable), weight, resistances.
    /// The second resistance is 2 Ω below the first (0 when none was measured).
    func weightFrame(state: UInt8, tenths: UInt16, resistance: UInt16) -> [UInt8] {
        let second = resistance >= 2 ? resistance - 2 : 0
        return Self.sealed([0x10, 0x0E, 0xFF, 0x01, state, UInt8(tenths >> 8), UInt8(tenths & 0xFF),
                            UInt8(resistance >> 8), UInt8(resistance & 0xFF), UInt8(second >> 8), UInt8(second & 0xFF),
                            0x00, 0x33])
    }

    private func reply(_ value: [UInt8]) -> SimulatedReply { SimulatedReply(characteristic: Self.notify, value: value) }

    public func respond(toSubscriptionOf characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.notify else { return [] }
        return [reply(Self.sealed([0x12, 0x0C, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]))]
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.write, let opcode = value.first else { return [] }
        writes.withLock { $0.append(value) }
        switch opcode {
        case 0x13: return [reply([0x14, 0x0B, 0xFF, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x1F])]
        case 0x20: return [reply([0x21, 0x05, 0xFF, 0x01, 0x26])]
        case 0x22:
            return [weightFrame(state: 0, tenths: weightTenths - 23, resistance: 0),
                    weightFrame(state: 0, tenths: weightTenths - 4, resistance: 0),
                    weightFrame(state: 2, tenths: weightTenths, resistance: 0),
                    weightFrame(state: 2, tenths: weightTenths, resistance: resistance)].map(reply)
        default: return []
        }
    }
}
