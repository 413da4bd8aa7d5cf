import Foundation
import Synchronization
import Transport

/// A simulated Omron blood-pressure monitor of the HEM-7361T memory map (two users of 100
/// 16-byte readings at 0x0098 and 0x06D8, the settings block read at 0x0010 and written at
/// 0x0054, the clock block at +0x2C): service ECBE3980-…, four TX characteristics the host
/// writes frames to in 16-byte pieces, four RX characteristics its answers are notified on, and
/// the unlock characteristic. It unlocks with the key programmed in pairing mode, answers the
/// memory session's start, reads, writes and end (each answer sealed with its XOR check), and
/// can drop the link after a number of reading reads.
public final class SimulatedOmronMonitor: SimulatedResponder {
    public static let service = BLEUUID(high: 0xECBE_3980_C9A2_11E1, low: 0xB1BD_0002_A5D5_C51B)
    public static let transmit: [BLEUUID] = [
        BLEUUID(high: 0xDB5B_55E0_AEE7_11E1, low: 0x965E_0002_A5D5_C51B),
        BLEUUID(high: 0xE0B8_A060_AEE7_11E1, low: 0x92F4_0002_A5D5_C51B),
        BLEUUID(high: 0x0AE1_2B00_AEE8_11E1, low: 0xA192_0002_A5D5_C51B),
        BLEUUID(high: 0x10E1_BA60_AEE8_11E1, low: 0x89E5_0002_A5D5_C51B),
    ]
    public static let receive: [BLEUUID] = [
        BLEUUID(high: 0x4912_3040_AEE8_11E1, low: 0xA74D_0002_A5D5_C51B),
        BLEUUID(high: 0x4D0B_F320_AEE8_11E1, low: 0xA0D9_0002_A5D5_C51B),
        BLEUUID(high: 0x5128_CE60_AEE8_11E1, low: 0xB84B_0002_A5D5_C51B),
        BLEUUID(high: 0x560F_1420_AEE8_11E1, low: 0x8184_0002_A5D5_C51B),
    ]
    public static let unlock = BLEUUID(high: 0xB305_B680_AEE7_11E1, low: 0xA730_0002_A5D5_C51B)

    public static let userStarts: [Int] = [0x0098, 0x06D8]
    public static let slots = 100
    public static let recordSize = 16
    public static let settingsRead = 0x0010
    public static let settingsWrite = 0x0054
    public static let clockOffset = 0x2C

    /// The monitor's GATT table.
    public static let profile = SimulatedProfile(name: "BLESmart_00000116A0B1C2D3E4F5", services: [
        .init(uuid: service, characteristics:
            [.init(uuid: unlock, properties: 0x18)]
                + transmit.map { .init(uuid: $0, properties: 0x0C) }
                + receive.map { .init(uuid: $0, properties: 0x10) }),
    ])

    /// One stored reading.
    public struct Reading: Sendable, Equatable {
        public var systolic: Int
        public var diastolic: Int
        public var pulse: Int
        public var year, month, day, hour, minute, second: Int

        public init(systolic: Int, diastolic: Int, pulse: Int, year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
            self.systolic = systolic
            self.diastolic = diastolic
            self.pulse = pulse
            self.year = year
            self.month = month
            self.day = day
            self.hour = hour
            self.minute = minute
            self.second = second
        }

        /// The 16 bytes of the HEM-7361T layout (byte-aligned, little-endian flag words).
        public var bytes: [UInt8] {
            let first = UInt16(hour) | UInt16(day) << 5 | UInt16(month) << 10
            let second16 = UInt16(second) | UInt16(minute) << 6
            return [UInt8(systolic - 25), UInt8(diastolic), UInt8(pulse), UInt8(year - 2000),
                    UInt8(first & 0xFF), UInt8(first >> 8), UInt8(second16 & 0xFF), UInt8(second16 >> 8)]
                + [UInt8](repeating: 0, count: 8)
        }
    }

    private struct State {
        var memory = [UInt8](repeating: 0xFF, count: 0x1000)
        var key: [UInt8]?
        var pairingMode: Bool
        var unlocked = false
        var sessionOpen = false
        var pending: [UInt8] = []
        var dropAfterReadingReads: Int?
        var readingReads = 0
        var totalReadingReads = 0
        var frames: [[UInt8]] = []
    }
    private let state: Mutex<State>

    /// A monitor holding `readings[user]` for each user (oldest first), in pairing mode (`-P-`,
    /// it takes a new key) or with `key` programmed.
    public init(readings: [[Reading]], pairingMode: Bool = true, key: [UInt8]? = nil, clock: [UInt8] = [26, 1, 1, 0, 0, 0]) {
        var initial = State(key: key, pairingMode: pairingMode)
        for index in 0..<0x10 { initial.memory[Self.settingsRead + index] = 0x00 }
        for index in 0..<2 { initial.memory[Self.settingsRead + 4 + 2 * index] = 0x00; initial.memory[Self.settingsRead + 5 + 2 * index] = 0x80 }
        let clockAt = Self.settingsRead + Self.clockOffset
        for index in 0..<16 { initial.memory[clockAt + index] = 0 }
        for (index, value) in clock.enumerated() { initial.memory[clockAt + 8 + index] = value }
        state = Mutex(initial)
        for (user, list) in readings.enumerated() { for reading in list { add(reading, user: user) } }
    }

    /// Stores a new reading for `user` (0-based) at its cursor and advances the cursor.
    public func add(_ reading: Reading, user: Int) {
        state.withLock { state in
            let cursorAt = Self.settingsRead + 2 * user
            let slot = Int(state.memory[cursorAt]) % Self.slots
            let at = Self.userStarts[user] + slot * Self.recordSize
            state.memory.replaceSubrange(at..<(at + Self.recordSize), with: reading.bytes)
            state.memory[cursorAt] = UInt8((slot + 1) % Self.slots)
        }
    }

    /// The next contact's transfer stops after `reads` reads of stored readings (empty slots not
    /// counted), with the link closed.
    public func dropLink(afterReadingReads reads: Int) { state.withLock { $0.dropAfterReadingReads = reads; $0.readingReads = 0 } }

    /// The reads of stored readings answered (empty slots not counted) since the start.
    public var readingReads: Int { state.withLock { $0.totalReadingReads } }
    /// Every whole frame written to the TX characteristics, in order.
    public var frames: [[UInt8]] { state.withLock { $0.frames } }
    /// The key the monitor holds.
    public var key: [UInt8]? { state.withLock { $0.key } }
    /// The readings still stored for `user`, by slot (empty slots left out).
    public func storedSlots(user: Int) -> [Int] {
        state.withLock { state in
            (0..<Self.slots).filter { slot in
                let at = Self.userStarts[user] + slot * Self.recordSize
                return !state.memory[at..<(at + Self.recordSize)].allSatisfy { $0 == 0xFF }
            }
        }
    }
    /// The clock bytes (year − 2000, month, day, hour, minute, second) in the settings block.
    public var clock: [UInt8] {
        state.withLock { state in
            let at = Self.settingsRead + Self.clockOffset + 8
            return Array(state.memory[at..<(at + 6)])
        }
    }

    static func sealed(_ body: [UInt8]) -> [UInt8] { body + [0x00, body.reduce(0, ^)] }

    private func answer(_ frame: [UInt8], closing: Bool = false) -> [SimulatedReply] {
        let pieces = stride(from: 0, to: frame.count, by: 16).map { Array(frame[$0..<min($0 + 16, frame.count)]) }
        return pieces.enumerated().map { index, piece in
            SimulatedReply(characteristic: Self.receive[index], value: piece, closesLink: closing && index == pieces.count - 1)
        }
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        if characteristic == Self.unlock { return respondToUnlock(value) }
        guard Self.transmit.contains(characteristic) else { return [] }
        return state.withLock { state -> [SimulatedReply] in
            if characteristic == Self.transmit[0] { state.pending = [] }
            state.pending += value
            guard let length = state.pending.first, state.pending.count >= Int(length), length >= 8 else { return [] }
            let frame = Array(state.pending.prefix(Int(length)))
            state.pending = []
            state.frames.append(frame)
            guard state.unlocked, frame.reduce(0, ^) == 0 else { return [] }
            let address = Int(frame[3]) << 8 | Int(frame[4])
            let count = Int(frame[5])
            switch (frame[1], frame[2]) {
            case (0x00, 0x00):
                state.sessionOpen = true
                return answer(Self.sealed([0x08, 0x80, 0x00, 0x00, 0x00, 0x10]))
            case (0x0F, 0x00):
                state.sessionOpen = false
                return answer(Self.sealed([0x08, 0x8F, 0x00, 0x00, 0x00, 0x00]))
            case (0x01, 0x00) where state.sessionOpen && address + count <= state.memory.count:
                let data = Array(state.memory[address..<(address + count)])
                let isReading = Self.userStarts.contains { address >= $0 && address < $0 + Self.slots * Self.recordSize }
                    && !data.allSatisfy { $0 == 0xFF }
                var closing = false
                if isReading { state.totalReadingReads += 1 }
                if isReading, let drop = state.dropAfterReadingReads {
                    state.readingReads += 1
                    if state.readingReads == drop { closing = true; state.dropAfterReadingReads = nil }
                }
                return answer(Self.sealed([UInt8(count + 8), 0x81, 0x00, frame[3], frame[4], UInt8(count)] + data), closing: closing)
            case (0x01, 0xC0) where state.sessionOpen && 6 + count + 2 <= frame.count:
                // The settings block is written at its write address and read back at its read address.
                var target = address
                if address >= Self.settingsWrite && address < Self.settingsWrite + 0x44 {
                    target = address - Self.settingsWrite + Self.settingsRead
                }
                if target + count <= state.memory.count {
                    state.memory.replaceSubrange(target..<(target + count), with: frame[6..<(6 + count)])
                }
                return answer(Self.sealed([0x08, 0x81, 0xC0, frame[3], frame[4], UInt8(count)]))
            default:
                return []
            }
        }
    }

    private func respondToUnlock(_ value: [UInt8]) -> [SimulatedReply] {
        let reply: [UInt8] = state.withLock { state in
            switch value.first {
            case 0x01 where value.count == 17:
                state.unlocked = state.key == Array(value.dropFirst())
                return [0x81, state.unlocked ? 0x00 : 0x0F]
            case 0x02 where value.count == 17:
                return [0x82, state.pairingMode ? 0x00 : 0x0F]
            case 0x00 where value.count == 17 && state.pairingMode:
                state.key = Array(value.dropFirst())
                state.pairingMode = false
                state.unlocked = true
                return [0x80, 0x00]
            default:
                return [0x8F, 0x0F]
            }
        }
        return [SimulatedReply(characteristic: Self.unlock, value: reply)]
    }
}
