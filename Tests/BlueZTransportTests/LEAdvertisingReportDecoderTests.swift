import BLESimulators
import BlueZTransport
import Foundation
import Testing
import Transport

@Suite struct LEAdvertisingReportDecoderTests {
    let time = Date(timeIntervalSince1970: 1_700_000_000)
    let address = BLEAddress("A4:C1:38:00:11:22")!

    /// The LE Meta parameters after the subevent byte of a built report packet.
    func parameters(of packet: [UInt8]) -> [UInt8] { Array(packet.dropFirst(4)) }

    @Test func legacyEventWithTwoReportsGivesBoth() {
        var decoder = LEAdvertisingReportDecoder()
        let first = Array(parameters(of: AdvertisingReportBuilder.legacy(address: address, data: [2, 1, 6])).dropFirst())
        let second = Array(parameters(of: AdvertisingReportBuilder.legacy(
            eventType: 4, address: address, data: ADStructure.completeLocalName("ATC"), rssi: 127)).dropFirst())
        let result = decoder.decode(subevent: 0x02, parameters: [2] + first + second, time: time)
        #expect(result.problems.isEmpty)
        #expect(result.advertisements.count == 2)
        #expect(result.advertisements.first?.flags == 6)
        #expect(result.advertisements.last?.localName == "ATC")
        #expect(result.advertisements.last?.rssi == nil)
        #expect(result.advertisements.last?.time == time)
    }

    @Test func truncatedLegacyReportKeepsEarlierReportsAndNamesTheOffset() {
        var decoder = LEAdvertisingReportDecoder()
        let first = Array(parameters(of: AdvertisingReportBuilder.legacy(address: address, data: [2, 1, 6])).dropFirst())
        // Claims two reports, the second has only its event type and address type.
        let result = decoder.decode(subevent: 0x02, parameters: [2] + first + [0x00, 0x00], time: time)
        #expect(result.advertisements.count == 1)
        #expect(result.problems == [LEAdvertisingReportProblem(subevent: 0x02, reason: .truncated, offset: 1 + first.count)])
    }

    @Test func extendedDataInTwoFragmentsIsReassembled() {
        var decoder = LEAdvertisingReportDecoder()
        let data = ADStructure.flags(0x06) + ADStructure.completeLocalName("Thermometer-Long-Name")
        let split = 10
        // Data status 1 (bits 5-6 = 01): more to come.
        let head = AdvertisingReportBuilder.extended(eventType: 0x0020, address: address, data: Array(data[..<split]), sid: 3)
        let tail = AdvertisingReportBuilder.extended(eventType: 0x0000, address: address, data: Array(data[split...]), sid: 3)
        let firstPart = decoder.decode(subevent: 0x0D, parameters: parameters(of: head), time: time)
        #expect(firstPart.advertisements.isEmpty)
        #expect(firstPart.problems.isEmpty)
        let whole = decoder.decode(subevent: 0x0D, parameters: parameters(of: tail), time: time)
        #expect(whole.advertisements.count == 1)
        #expect(whole.advertisements.first?.data == data)
        #expect(whole.advertisements.first?.localName == "Thermometer-Long-Name")
    }

    @Test func extendedDataTruncatedByTheControllerIsReportedButKept() {
        var decoder = LEAdvertisingReportDecoder()
        let packet = AdvertisingReportBuilder.extended(eventType: 0x0040, address: address, data: [2, 1, 6])
        let result = decoder.decode(subevent: 0x0D, parameters: parameters(of: packet), time: time)
        #expect(result.advertisements.count == 1)
        #expect(result.problems == [LEAdvertisingReportProblem(subevent: 0x0D, reason: .incompleteData, offset: 1)])
    }

    @Test func otherSubeventsGiveNothing() {
        var decoder = LEAdvertisingReportDecoder()
        let result = decoder.decode(subevent: 0x01, parameters: [0, 1, 2], time: time)
        #expect(result.advertisements.isEmpty && result.problems.isEmpty)
    }
}
