import ColmiRing
import Foundation
import Testing

/// The Colmi rings' big-data answers on published bytes: the SpO2 answer an R09 sent
/// (nekodas-neko/TrainingAi_Open, lib/colmi-ble/__tests__/server-decode-archived-sync.test.ts)
/// and the sleep request foureight84/PulseLoopAndroid pull request 26 logged a ring answering.
@Suite struct ColmiBigDataTests {
    /// The R09's answer: `BC 2A`, 49 data bytes, CRC-16/MODBUS 0xFA53 (LE), today with hours 0–6.
    static let realAnswer: [UInt8] = [0xBC, 0x2A, 0x31, 0x00, 0x53, 0xFA, 0x00, 0x60, 0x60, 0x63, 0x63, 0x61, 0x61, 0x62, 0x62,
                                      0x61, 0x61, 0x63, 0x63, 0x63, 0x63] + [UInt8](repeating: 0, count: 34)
    static let today = Date(timeIntervalSince1970: 1_788_307_200)  // 2026-09-02 00:00 UTC

    private func collect(_ answer: [UInt8], in pieceSize: Int) throws(ColmiError) -> [UInt8]? {
        var collector = ColmiBigData.Collector(kind: ColmiBigData.oxygenSaturation)
        var data: [UInt8]?
        for start in stride(from: 0, to: answer.count, by: pieceSize) {
            #expect(data == nil, "nothing after the whole answer")
            data = try collector.take(Array(answer[start..<min(start + pieceSize, answer.count)]))
        }
        return data
    }

    @Test func requestsCarryTheirDataLengthAndCRC() {
        #expect(ColmiBigData.oxygenSaturationToday == [0xBC, 0x2A, 0x01, 0x00, 0xBF, 0x40, 0x00])
        #expect(ColmiBigData.request(0x27, [0xFF, 0x01]) == [0xBC, 0x27, 0x02, 0x00, 0x81, 0x80, 0xFF, 0x01], "the logged sleep request")
        #expect(ColmiBigData.crc16(Array("123456789".utf8)) == 0x4B37, "CRC-16/MODBUS's check value")
    }

    @Test(arguments: [1, 7, 20, 55])
    func theRealAnswerIsJoinedFromAnyPiecesAndGivesItsHours(pieceSize: Int) throws {
        let data = try #require(try collect(Self.realAnswer, in: pieceSize))
        #expect(data == Array(Self.realAnswer[6...]))
        let hours = try ColmiOxygenHour.hours(data, today: Self.today)
        #expect(hours.map(\.lowest) == [96, 99, 97, 98, 97, 99, 99] && hours.map(\.highest) == hours.map(\.lowest))
        #expect(hours.map(\.start) == (0..<7).map { Self.today.addingTimeInterval(Double($0) * 3_600) })
    }

    @Test func anOlderDayAndUnevenPairsAreTakenAndZeroPairsSkipped() throws {
        var data = [UInt8](repeating: 0, count: 98)
        data[0] = 1  // yesterday
        data[1 + 2 * 23] = 94
        data[2 + 2 * 23] = 97
        data[49 + 1 + 2 * 5] = 96  // today 05:00: one value only, no reading
        let hours = try ColmiOxygenHour.hours(data, today: Self.today)
        #expect(hours.map(\.start) == [Self.today.addingTimeInterval(-3_600)])
        #expect(hours.map(\.lowest) == [94] && hours.map(\.highest) == [97])
    }

    @Test func malformedAnswersAreRejectedWithTheirBytes() throws {
        var broken = Self.realAnswer
        broken[9] = 0x60
        #expect(throws: ColmiError.badChecksum(broken)) { try collect(broken, in: 20) }
        let longer = Self.realAnswer + [0x00]
        #expect(throws: ColmiError.badLength(longer)) { try collect(longer, in: 56) }
        var otherKind = Self.realAnswer
        otherKind[1] = 0x27
        #expect(throws: ColmiError.badPacket(Array(otherKind.prefix(20)))) { try collect(otherKind, in: 20) }
        #expect(throws: ColmiError.badPacket([0x15, 0x01])) { try collect([0x15, 0x01], in: 2) }
        let huge: [UInt8] = [0xBC, 0x2A, 0xFF, 0xFF, 0, 0]
        #expect(throws: ColmiError.badLength(huge)) { try collect(huge, in: 6) }
        var collector = ColmiBigData.Collector(kind: ColmiBigData.oxygenSaturation)
        #expect(try collector.take([0xBC, 0x2A, 0x31, 0x00]) == nil)
        #expect(throws: ColmiError.badLength([0xBC, 0x2A, 0x31, 0x00])) {
            for _ in 0..<ColmiBigData.Collector.maximumPieces { _ = try collector.take([]) }
        }
        #expect(throws: ColmiError.badPacket([0x00] + [UInt8](repeating: 0, count: 47))) {
            try ColmiOxygenHour.hours([0x00] + [UInt8](repeating: 0, count: 47), today: Self.today)
        }
        var overFull = [UInt8](repeating: 0, count: 49)
        overFull[1] = 101
        overFull[2] = 99
        #expect(throws: ColmiError.badPacket(overFull)) { try ColmiOxygenHour.hours(overFull, today: Self.today) }
    }
}
