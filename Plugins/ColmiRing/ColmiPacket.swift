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

/// The rings' second ("big data") service: requests written to de5bf72a-…, answers notified on
/// de5bf729-…, both `BC <kind> <data length, LE u16> <CRC-16/MODBUS of the data, LE u16> <data>`;
/// a long answer continues over the next notifications until 6 + length bytes have come.
public enum ColmiBigData {
    public static let magic: UInt8 = 0xBC
    /// The hourly blood-oxygen log (the QRing app's data id 42).
    public static let oxygenSaturation: UInt8 = 0x2A
    /// The longest data accepted in one answer (the SpO2 log: 49 bytes a day).
    public static let maximumLength = 49 * 8

    /// A request for `kind` with `data`.
    public static func request(_ kind: UInt8, _ data: [UInt8]) -> [UInt8] {
        let crc = crc16(data)
        return [magic, kind, UInt8(data.count & 0xFF), UInt8(data.count >> 8), UInt8(crc & 0xFF), UInt8(crc >> 8)] + data
    }

    /// `BC 2A 01 00 BF 40 00`: today's SpO2 log (the data: days before today).
    public static let oxygenSaturationToday = request(oxygenSaturation, [0x00])

    /// CRC-16/MODBUS (reflected polynomial 0xA001, start 0xFFFF).
    public static func crc16(_ bytes: some Collection<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? crc >> 1 ^ 0xA001 : crc >> 1 }
        }
        return crc
    }

    /// Joins the notifications of one answer of `kind` and checks it: the data once whole.
    public struct Collector: Sendable {
        /// At most this many notifications in one answer (the longest answer needs 20 of 20 bytes).
        public static let maximumPieces = 64
        private let kind: UInt8
        private var bytes: [UInt8] = []
        private var pieces = 0

        public init(kind: UInt8) { self.kind = kind }

        /// Takes one notification; the answer's data when it is whole, nil when more is to come.
        public mutating func take(_ piece: [UInt8]) throws(ColmiError) -> [UInt8]? {
            bytes += piece
            pieces += 1
            guard bytes.first == magic, bytes.count < 2 || bytes[1] == kind else { throw .badPacket(bytes) }
            let length = bytes.count >= 4 ? Int(bytes[2]) | Int(bytes[3]) << 8 : 0
            guard length <= ColmiBigData.maximumLength else { throw .badLength(bytes) }
            if bytes.count < max(6 + length, 4) {
                guard pieces < Self.maximumPieces else { throw .badLength(bytes) }
                return nil
            }
            guard bytes.count == 6 + length else { throw .badLength(bytes) }
            let data = Array(bytes[6...])
            guard crc16(data) == UInt16(bytes[4]) | UInt16(bytes[5]) << 8 else { throw .badChecksum(bytes) }
            return data
        }
    }
}

/// One hour of the ring's SpO2 log: the lowest and highest saturation it measured in that hour.
/// The log's data is whole days of 49 bytes: days before today, then 24 pairs for hours 0–23 of
/// that day by the ring's clock; a pair with a zero is an hour without a reading.
public struct ColmiOxygenHour: Equatable, Sendable {
    /// The hour's start.
    public var start: Date
    public var lowest: Int
    public var highest: Int

    /// The hours with a reading in `data`, their days counted back from `today` (the ring's
    /// midnight, in the clock it was given).
    public static func hours(_ data: [UInt8], today: Date) throws(ColmiError) -> [ColmiOxygenHour] {
        guard !data.isEmpty, data.count % 49 == 0 else { throw .badPacket(data) }
        var hours: [ColmiOxygenHour] = []
        for dayStart in stride(from: 0, to: data.count, by: 49) {
            let midnight = today.addingTimeInterval(-Double(data[dayStart]) * 86_400)
            for hour in 0..<24 {
                let pair = (Int(data[dayStart + 1 + 2 * hour]), Int(data[dayStart + 2 + 2 * hour]))
                guard pair.0 > 0, pair.1 > 0 else { continue }
                guard pair.0 <= 100, pair.1 <= 100 else { throw .badPacket(data) }
                hours.append(ColmiOxygenHour(start: midnight.addingTimeInterval(Double(hour) * 3_600),
                                             lowest: min(pair.0, pair.1), highest: max(pair.0, pair.1)))
            }
        }
        return hours
    }
}

/// A packet the adapter cannot use; each carries the packet.
public enum ColmiError: Error, Equatable, Sendable, CustomStringConvertible {
    case badPacket([UInt8])
    case badChecksum([UInt8])
    case outOfOrder([UInt8])
    case badLength([UInt8])

    public var reason: String {
        switch self {
        case .badPacket: "bad-packet"
        case .badChecksum: "bad-checksum"
        case .outOfOrder: "packet-out-of-order"
        case .badLength: "bad-length"
        }
    }

    public var description: String {
        switch self {
        case .badPacket(let bytes): "not a packet of this kind: \(hexString(bytes))"
        case .badChecksum(let bytes): "checksum does not match: \(hexString(bytes))"
        case .outOfOrder(let bytes): "packet out of order: \(hexString(bytes))"
        case .badLength(let bytes): "answer longer or shorter than its length: \(hexString(bytes))"
        }
    }
}
