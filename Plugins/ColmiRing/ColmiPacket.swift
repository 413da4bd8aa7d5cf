import AdapterKit
import Foundation

/// The rings' 16-byte packets (tahnok/colmi_r02_client, Puxtril/colmi-docs): command at 0,
/// 14 bytes of data, at 15 the low byte of the sum of the 15 before it.
public enum ColmiPacket {
    public static let setTime: UInt8 = 0x01
    public static let heartRateLog: UInt8 = 0x15
    public static let steps: UInt8 = 0x43

    /// A packet of `command` with `data` (at most 14 bytes).
    public static func make(_ command: UInt8, _ data: [UInt8] = []) -> [UInt8] {
        var packet = [UInt8](repeating: 0, count: 16)
        packet[0] = command
        for (index, byte) in data.prefix(14).enumerated() { packet[index + 1] = byte }
        packet[15] = checksum(packet)
        return packet
    }

    /// The low byte of the sum of bytes 0–14.
    public static func checksum(_ packet: [UInt8]) -> UInt8 {
        UInt8(truncatingIfNeeded: packet.prefix(15).reduce(0) { $0 + Int($1) })
    }

    /// `01 <yy mm dd hh mm ss in BCD, UTC> 01` (the language byte: English).
    public static func setTime(_ time: Date) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: time)
        let fields = [(parts.year ?? 2000) % 100, parts.month ?? 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0,
                      parts.second ?? 0]
        return make(setTime, fields.map { UInt8(($0 / 10) << 4 | $0 % 10) } + [0x01])
    }

    /// `15 <Unix seconds of the day's UTC midnight, LE u32>`: that day's heart-rate log.
    public static func heartRateLog(day: Date) -> [UInt8] {
        let seconds = UInt32(clamping: Int(day.timeIntervalSince1970))
        return make(heartRateLog, [UInt8(seconds & 0xFF), UInt8(seconds >> 8 & 0xFF), UInt8(seconds >> 16 & 0xFF),
                                   UInt8(seconds >> 24)])
    }

    /// `43 <days before today> 0F 00 5F 01`: that day's step details.
    public static func steps(daysAgo: UInt8) -> [UInt8] { make(steps, [daysAgo, 0x0F, 0x00, 0x5F, 0x01]) }

    /// The packet checked: 16 bytes, the command expected, its checksum right.
    public static func check(_ packet: [UInt8], command: UInt8) throws(ColmiError) {
        guard packet.count == 16, packet[0] == command else { throw .badPacket(packet) }
        guard checksum(packet) == packet[15] else { throw .badChecksum(packet) }
    }

    /// A BCD byte as its number, nil when a nibble is over 9.
    static func bcd(_ byte: UInt8) -> Int? {
        guard byte >> 4 <= 9, byte & 0x0F <= 9 else { return nil }
        return Int(byte >> 4) * 10 + Int(byte & 0x0F)
    }
}

/// A day's heart-rate log, collected from its packets: `15 00 <packet count> <minutes per
/// slot>`, `15 01 <UTC midnight, LE u32> <9 readings>`, `15 <n> <13 readings>` up to n = count − 1;
/// `15 FF`: no log. A reading is beats per minute, 0 for none; slot i is at midnight + i × the
/// minutes per slot (5: 288 slots a day).
public struct ColmiHeartRateLog: Equatable, Sendable {
    /// The day's UTC midnight.
    public var day: Date
    /// Minutes per slot.
    public var minutesPerSlot: Int
    /// Readings in slot order (0: none).
    public var readings: [UInt8]

    /// The readings with their times, zeros left out.
    public var measured: [(time: Date, beatsPerMinute: Int)] {
        readings.enumerated().compactMap { slot, value in
            value == 0 ? nil : (day.addingTimeInterval(TimeInterval(slot * minutesPerSlot * 60)), Int(value))
        }
    }

    /// Collects the packets of one log.
    public struct Collector: Sendable {
        /// At most this many packets in one log (288 slots need 23).
        public static let maximumPackets = 64
        private var expected = 0
        private var minutesPerSlot = 5
        private var day: Date?
        private var readings: [UInt8] = []
        private var next = 0

        public init() {}

        public enum Step: Equatable, Sendable {
            case more
            case noLog
            case log(ColmiHeartRateLog)
        }

        public mutating func take(_ packet: [UInt8]) throws(ColmiError) -> Step {
            try ColmiPacket.check(packet, command: ColmiPacket.heartRateLog)
            let index = Int(packet[1])
            if packet[1] == 0xFF { return .noLog }
            if index == 0 {
                guard (1...Self.maximumPackets).contains(Int(packet[2])), packet[3] > 0 else { throw .badPacket(packet) }
                expected = Int(packet[2])
                minutesPerSlot = Int(packet[3])
                readings = []
                day = nil
                next = 1
                return expected == 1 ? .noLog : .more
            }
            guard index == next, index < expected else { throw .outOfOrder(packet) }
            if index == 1 {
                let seconds = UInt32(packet[2]) | UInt32(packet[3]) << 8 | UInt32(packet[4]) << 16 | UInt32(packet[5]) << 24
                let start = Date(timeIntervalSince1970: TimeInterval(seconds))
                day = Date(timeIntervalSince1970: (start.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
                readings += packet[6..<15]
            } else {
                readings += packet[2..<15]
            }
            next += 1
            guard next == expected, let day else { return .more }
            let slots = 24 * 60 / minutesPerSlot
            return .log(ColmiHeartRateLog(day: day, minutesPerSlot: minutesPerSlot, readings: Array(readings.prefix(slots))))
        }
    }
}

/// One quarter hour of a day's steps: `43 <yy mm dd BCD> <quarter 0–95> <index> <count>
/// <calories LE u16> <steps LE u16> <metres LE u16>`, preceded by `43 F0 <count> <1: calories ×10>`;
/// `43 FF`: no steps that day. The last packet has index = count − 1.
public struct ColmiSteps: Equatable, Sendable {
    /// The quarter hour's start (UTC).
    public var start: Date
    public var steps: Int
    public var metres: Int

    /// Collects the packets of one day.
    public struct Collector: Sendable {
        /// At most this many quarter hours (a day has 96).
        public static let maximumPackets = 97
        private var quarters: [ColmiSteps] = []
        private var started = false

        public init() {}

        public enum Step: Equatable, Sendable {
            case more
            case noSteps
            case day([ColmiSteps])
        }

        public mutating func take(_ packet: [UInt8]) throws(ColmiError) -> Step {
            try ColmiPacket.check(packet, command: ColmiPacket.steps)
            if !started && packet[1] == 0xFF { return .noSteps }
            if !started && packet[1] == 0xF0 {
                started = true
                return .more
            }
            guard let year = ColmiPacket.bcd(packet[1]), let month = ColmiPacket.bcd(packet[2]),
                  let day = ColmiPacket.bcd(packet[3]), packet[4] < 96, packet[5] < packet[6] else { throw .badPacket(packet) }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
            guard let start = calendar.date(from: DateComponents(year: 2000 + year, month: month, day: day,
                                                                 hour: Int(packet[4]) / 4, minute: Int(packet[4]) % 4 * 15))
            else { throw .badPacket(packet) }
            guard quarters.count < Self.maximumPackets else { throw .outOfOrder(packet) }
            quarters.append(ColmiSteps(start: start, steps: Int(packet[9]) | Int(packet[10]) << 8,
                                       metres: Int(packet[11]) | Int(packet[12]) << 8))
            return packet[5] == packet[6] - 1 ? .day(quarters) : .more
        }
    }
}

/// A packet the adapter cannot use; each carries the packet.
public enum ColmiError: Error, Equatable, Sendable, CustomStringConvertible {
    case badPacket([UInt8])
    case badChecksum([UInt8])
    case outOfOrder([UInt8])

    public var reason: String {
        switch self {
        case .badPacket: "bad-packet"
        case .badChecksum: "bad-checksum"
        case .outOfOrder: "packet-out-of-order"
        }
    }

    public var description: String {
        switch self {
        case .badPacket(let bytes): "not a packet of this kind: \(hexString(bytes))"
        case .badChecksum(let bytes): "checksum does not match: \(hexString(bytes))"
        case .outOfOrder(let bytes): "packet out of order: \(hexString(bytes))"
        }
    }
}
