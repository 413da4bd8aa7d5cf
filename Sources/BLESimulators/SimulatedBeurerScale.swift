import Foundation
import Synchronization
import Transport

/// A simulated Beurer BF700-class scale (Sanitas family, start bytes 0xE_, unless told otherwise):
/// one characteristic 0xFFE1 in service 0xFFE0, written and notified. It answers the greeting,
/// takes the clock, lists its users and sends each user's saved measurements in two parts each,
/// the next notification only once the previous one was acknowledged (`S7 F1 …`), and erases a
/// user's measurements on `S7 43 <id>`.
public final class SimulatedBeurerScale: SimulatedResponder {
    public static let characteristic = BLEUUID(0xFFE1)

    /// The scale's GATT table under `name`.
    public static func profile(name: String = "SANITAS SBF70") -> SimulatedProfile {
        SimulatedProfile(name: name, services: [
            .init(uuid: BLEUUID(0xFFE0), characteristics: [.init(uuid: characteristic, properties: 0x18)]),
        ])
    }

    /// A saved weighing.
    public struct Weighing: Sendable {
        public var time: UInt32
        public var weightFiftyGrams: UInt16
        public var impedance: UInt16
        public var bodyFatPermille: UInt16
        public var bodyMassIndexTenths: UInt16

        public init(time: UInt32, weightFiftyGrams: UInt16, impedance: UInt16, bodyFatPermille: UInt16, bodyMassIndexTenths: UInt16) {
            self.time = time
            self.weightFiftyGrams = weightFiftyGrams
            self.impedance = impedance
            self.bodyFatPermille = bodyFatPermille
            self.bodyMassIndexTenths = bodyMassIndexTenths
        }

        /// The 22 data bytes (water, muscle, bone, BMR, AMR as a scale computes them for ~75 kg).
        var bytes: [UInt8] {
            var out = SimulatedBeurerScale.be32(time)
            for value in [weightFiftyGrams, impedance, bodyFatPermille, 552, 380, 64, 1680, 2350, bodyMassIndexTenths] {
                out += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return out
        }
    }

    /// A user stored on the scale with its saved weighings.
    public struct User: Sendable {
        public var id: UInt64
        public var initials: String
        public var birthYear: Int
        public var weighings: [Weighing]

        public init(id: UInt64, initials: String, birthYear: Int, weighings: [Weighing]) {
            self.id = id
            self.initials = initials
            self.birthYear = birthYear
            self.weighings = weighings
        }
    }

    private struct State {
        var users: [User]
        var writes: [[UInt8]] = []
        var clock: UInt32 = 0
        /// The parts of the download under way.
        var parts: [[UInt8]] = []
    }
    private let state: Mutex<State>
    private let family: UInt8

    public init(users: [User], family: UInt8 = 0xE0) {
        state = Mutex(State(users: users))
        self.family = family
    }

    /// Every value written, in order.
    public var writes: [[UInt8]] { state.withLock { $0.writes } }
    /// The clock last written.
    public var clock: UInt32 { state.withLock { $0.clock } }
    /// The weighings still saved per user id.
    public var savedCounts: [UInt64: Int] {
        state.withLock { Dictionary(uniqueKeysWithValues: $0.users.map { ($0.id, $0.weighings.count) }) }
    }

    /// Saves another weighing for `user`.
    public func add(_ weighing: Weighing, user: UInt64) {
        state.withLock { state in
            if let index = state.users.firstIndex(where: { $0.id == user }) { state.users[index].weighings.append(weighing) }
        }
    }

    static func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (24 - 8 * $0)) & 0xFF) } }
    static func be64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8((value >> (56 - 8 * $0)) & 0xFF) } }
    static func id(_ bytes: [UInt8]) -> UInt64 { bytes.dropFirst(2).prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }

    private func reply(_ bytes: [UInt8]) -> SimulatedReply { SimulatedReply(characteristic: Self.characteristic, value: bytes) }

    private func userInfo(_ users: [User], _ n: Int) -> [UInt8] {
        let user = users[n - 1]
        let initials = Array(user.initials.utf8.prefix(3)) + [UInt8](repeating: 0, count: max(0, 3 - user.initials.utf8.count))
        return [family | 7, 0x34, UInt8(users.count), UInt8(n)] + Self.be64(user.id) + initials + [UInt8(user.birthYear - 1900)]
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.characteristic, let first = value.first, first & 0xF0 == family else { return [] }
        let command = family | 7
        return state.withLock { state -> [SimulatedReply] in
            state.writes.append(value)
            switch (first & 0x0F, value.count > 1 ? value[1] : 0) {
            case (6, _): return [reply([family | 6, 0x00])]
            case (9, _) where value.count >= 5:
                state.clock = UInt32(value[1]) << 24 | UInt32(value[2]) << 16 | UInt32(value[3]) << 8 | UInt32(value[4])
                return []
            case (7, 0x33):
                let users = state.users
                return [reply([command, 0xF0, 0x33, 0x00, UInt8(users.count), 0x08])] + (users.isEmpty ? [] : [reply(userInfo(users, 1))])
            case (7, 0xF1) where value.count >= 5 && value[2] == 0x34:
                let n = Int(value[4])
                return n < state.users.count ? [reply(userInfo(state.users, n + 1))] : []
            case (7, 0x41) where value.count >= 10:
                let weighings = state.users.first { $0.id == Self.id(value) }?.weighings ?? []
                let count = UInt8(weighings.count * 2)
                state.parts = weighings.enumerated().flatMap { index, weighing -> [[UInt8]] in
                    let data = weighing.bytes
                    return [[command, 0x42, count, UInt8(2 * index + 1)] + data.prefix(11),
                            [command, 0x42, count, UInt8(2 * index + 2)] + data.dropFirst(11)]
                }
                return [reply([command, 0xF0, 0x41, count, 0x00])] + state.parts.prefix(1).map(reply)
            case (7, 0xF1) where value.count >= 5 && value[2] == 0x42:
                let n = Int(value[4])
                return n < state.parts.count ? [reply(state.parts[n])] : []
            case (7, 0x43) where value.count >= 10:
                let id = Self.id(value)
                if let index = state.users.firstIndex(where: { $0.id == id }) { state.users[index].weighings = [] }
                return [reply([command, 0xF0, 0x43, 0x00])]
            default:
                return []
            }
        }
    }
}
