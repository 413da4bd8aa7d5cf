import Foundation
import Synchronization
import Transport

/// A simulated Colmi R02 ring: the UART-like service 6E40FFF0-… (commands written to 6E400002-…,
/// answers notified on 6E400003-…, 16-byte packets ending in the low byte of their sum). It
/// answers the clock (0x01) with its capabilities, the heart-rate log request (0x15) for any
/// day with that day's `heartRates` (5-minute slot → bpm) in 24 packets, and the steps request
/// (0x43) for today with `quarters` (quarter hour → steps, metres). On its big-data service
/// (de5bf728-…) it answers today's SpO2 request (`BC 2A 01 00 BF 40 00`) with `oxygenHours`
/// (hour → lowest, highest) as one day of 49 bytes, `BC 2A 31 00 <CRC-16/MODBUS LE>` before
/// it, in 20-byte notifications; with `answersOxygenSaturation` false it never answers it.
public final class SimulatedColmiRing: SimulatedResponder {
    public static let rx = BLEUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    public static let tx = BLEUUID(high: 0x6E40_0003_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    public static let bigDataRequest = BLEUUID(high: 0xDE5B_F72A_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
    public static let bigDataAnswer = BLEUUID(high: 0xDE5B_F729_D711_4E47, low: 0xAF26_65E3_012A_5DC7)
    /// Today's SpO2 request: data id 0x2A, one data byte (0: today), its CRC-16/MODBUS 0x40BF.
    public static let oxygenSaturationRequest: [UInt8] = [0xBC, 0x2A, 0x01, 0x00, 0xBF, 0x40, 0x00]

    /// The ring's GATT table.
    public static let profile = SimulatedProfile(name: "R02_2C08", services: [
        .init(uuid: BLEUUID(high: 0x6E40_FFF0_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E), characteristics: [
            .init(uuid: rx, properties: 0x0C),
            .init(uuid: tx, properties: 0x10),
        ]),
        .init(uuid: BLEUUID(high: 0xDE5B_F728_D711_4E47, low: 0xAF26_65E3_012A_5DC7), characteristics: [
            .init(uuid: bigDataRequest, properties: 0x0C),
            .init(uuid: bigDataAnswer, properties: 0x10),
        ]),
    ])

    private let heartRates: [Int: UInt8]
    private let quarters: [Int: (steps: Int, metres: Int)]
    private let oxygenHours: [Int: (lowest: UInt8, highest: UInt8)]
    private let answersOxygenSaturation: Bool
    private let received = Mutex<[[UInt8]]>([])
    private let receivedBigData = Mutex<[[UInt8]]>([])

    public init(heartRates: [Int: UInt8], quarters: [Int: (steps: Int, metres: Int)],
                oxygenHours: [Int: (lowest: UInt8, highest: UInt8)] = [:], answersOxygenSaturation: Bool = true) {
        self.heartRates = heartRates
        self.quarters = quarters
        self.oxygenHours = oxygenHours
        self.answersOxygenSaturation = answersOxygenSaturation
    }

    /// The commands written, in order.
    public var commands: [[UInt8]] { received.withLock { $0 } }
    /// The big-data requests written, in order.
    public var bigDataRequests: [[UInt8]] { receivedBigData.withLock { $0 } }

    /// Today's SpO2 log as the ring notifies it.
    private var oxygenAnswer: [SimulatedReply] {
        var day: [UInt8] = [0x00]
        for hour in 0..<24 { day += [oxygenHours[hour]?.lowest ?? 0, oxygenHours[hour]?.highest ?? 0] }
        var crc: UInt16 = 0xFFFF
        for byte in day {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? crc >> 1 ^ 0xA001 : crc >> 1 }
        }
        let answer: [UInt8] = [0xBC, 0x2A, UInt8(day.count), 0x00, UInt8(crc & 0xFF), UInt8(crc >> 8)] + day
        return stride(from: 0, to: answer.count, by: 20).map {
            SimulatedReply(characteristic: Self.bigDataAnswer, value: Array(answer[$0..<min($0 + 20, answer.count)]))
        }
    }

    private static func packet(_ bytes: [UInt8]) -> [UInt8] {
        var packet = Array((bytes + [UInt8](repeating: 0, count: 15)).prefix(15))
        packet.append(UInt8(truncatingIfNeeded: packet.reduce(0) { $0 + Int($1) }))
        return packet
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        if characteristic == Self.bigDataRequest {
            receivedBigData.withLock { $0.append(value) }
            return value == Self.oxygenSaturationRequest && answersOxygenSaturation ? oxygenAnswer : []
        }
        guard characteristic == Self.rx, value.count == 16 else { return [] }
        received.withLock { $0.append(value) }
        let packets: [[UInt8]]
        switch value[0] {
        case 0x01:
            packets = [Self.packet([0x01, 0x00, 0x00, 0x00, 0x02])]
        case 0x15:
            let midnight = Array(value[1...4])
            var readings = (0..<295).map { heartRates[$0] ?? 0 }
            var log = [Self.packet([0x15, 0x00, 24, 5]), Self.packet([0x15, 0x01] + midnight + readings.prefix(9))]
            readings.removeFirst(9)
            for index in 2..<24 {
                log.append(Self.packet([0x15, UInt8(index)] + readings.prefix(13)))
                readings.removeFirst(13)
            }
            packets = log
        case 0x43 where value[1] == 0 && !quarters.isEmpty:
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
            let today = calendar.dateComponents([.year, .month, .day], from: Date())
            func bcd(_ number: Int) -> UInt8 { UInt8((number / 10) << 4 | number % 10) }
            let date = [bcd((today.year ?? 2000) % 100), bcd(today.month ?? 1), bcd(today.day ?? 1)]
            let sorted = quarters.sorted { $0.key < $1.key }
            packets = [Self.packet([0x43, 0xF0, UInt8(sorted.count), 0x01])] + sorted.enumerated().map { index, entry in
                Self.packet([0x43] + date + [UInt8(entry.key), UInt8(index), UInt8(sorted.count), 0, 0,
                                             UInt8(entry.value.steps & 0xFF), UInt8(entry.value.steps >> 8),
                                             UInt8(entry.value.metres & 0xFF), UInt8(entry.value.metres >> 8)])
            }
        case 0x43:
            packets = [Self.packet([0x43, 0xFF])]
        default:
            packets = []
        }
        return packets.map { SimulatedReply(characteristic: Self.tx, value: $0) }
    }
}
