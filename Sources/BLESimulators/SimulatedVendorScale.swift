import Foundation
import Synchronization
import Transport

/// A simulated scale with a vendor command protocol of the common shape (a write
/// characteristic for commands, a notify characteristic for replies), for the protocol-2
/// example plugins in `Plugins/ExternalExamples/`:
///
/// - service 0xFFB0; commands written to 0xFFB1 (write, write without response); replies
///   notified on 0xFFB2;
/// - `A5 01` (send stored readings): one `5A 01 <seq> <weight u16 LE, 0.01 kg> <time u32 LE,
///   Unix seconds>` per stored reading, then `5A 0F <count>`;
/// - `A5 02` (erase stored readings): the memory is cleared, answered `5A 02 00`;
/// - anything else: answered `5A EE <first byte>`.
public final class SimulatedVendorScale: SimulatedResponder {
    public static let service = BLEUUID(0xFFB0)
    public static let commandCharacteristic = BLEUUID(0xFFB1)
    public static let replyCharacteristic = BLEUUID(0xFFB2)

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "ACME-SCALE", services: [
        .init(uuid: service, characteristics: [
            .init(uuid: commandCharacteristic, properties: 0x0C),
            .init(uuid: replyCharacteristic, properties: 0x10),
        ]),
    ])

    /// One stored weighing.
    public struct Reading: Hashable, Sendable {
        public var sequence: UInt8
        /// Hundredths of a kilogram.
        public var centikilograms: UInt16
        public var time: UInt32

        public init(sequence: UInt8, centikilograms: UInt16, time: UInt32) {
            self.sequence = sequence
            self.centikilograms = centikilograms
            self.time = time
        }
    }

    private struct State {
        var readings: [Reading]
        var commands: [[UInt8]] = []
        var erasures = 0
    }
    private let state: Mutex<State>
    private let onErase: @Sendable () -> Void

    /// A scale storing `readings`; `onErase` runs when an erase command arrives, before the
    /// memory is cleared (a test looks at what was committed by then).
    public init(readings: [Reading], onErase: @escaping @Sendable () -> Void = {}) {
        state = Mutex(State(readings: readings))
        self.onErase = onErase
    }

    /// The commands received, in order.
    public var commands: [[UInt8]] { state.withLock { $0.commands } }
    /// The readings still stored.
    public var readings: [Reading] { state.withLock { $0.readings } }
    /// How often the memory was erased.
    public var erasures: Int { state.withLock { $0.erasures } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.commandCharacteristic else { return [] }
        if value == [0xA5, 0x02] { onErase() }
        let answer: [[UInt8]] = state.withLock { state in
            state.commands.append(value)
            switch value {
            case [0xA5, 0x01]:
                return state.readings.map { reading in
                    [0x5A, 0x01, reading.sequence, UInt8(reading.centikilograms & 0xFF), UInt8(reading.centikilograms >> 8)]
                        + withUnsafeBytes(of: reading.time.littleEndian, Array.init)
                } + [[0x5A, 0x0F, UInt8(clamping: state.readings.count)]]
            case [0xA5, 0x02]:
                state.readings.removeAll()
                state.erasures += 1
                return [[0x5A, 0x02, 0x00]]
            default:
                return [[0x5A, 0xEE, value.first ?? 0]]
            }
        }
        return answer.map { SimulatedReply(characteristic: Self.replyCharacteristic, value: $0) }
    }
}
