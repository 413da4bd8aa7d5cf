import BerryMedOximeter
import Foundation
import TestSupport
import Testing

/// The BerryMed (BCI) packet layout, the stream's resynchronisation and the one-per-second rule.
struct BerryMedPacketTests {
    @Test func decodesThePacketFields() throws {
        // Signal 6, pleth 50, bar 6, pulse 131 (bit 7 in byte 2, 3 in byte 3), SpO2 96.
        let packet = try #require(BerryMedPacket(hex("96 32 46 03 60")[...]))
        #expect(packet.signalStrength == 6)
        #expect(packet.pleth == 50)
        #expect(packet.pulseRate == 131)
        #expect(packet.oxygenSaturation == 96)
        #expect(!packet.fingerOut)
        #expect(packet.isReading)
        // No finger: pulse 255 (127 with bit 7), SpO2 127: no values, not a reading.
        let empty = try #require(BerryMedPacket(hex("96 10 50 7F 7F")[...]))
        #expect(empty.fingerOut && empty.pulseRate == nil && empty.oxygenSaturation == nil && !empty.isReading)
        #expect(BerryMedPacket(hex("16 32 46 03 60")[...]) == nil, "no header bit")
        #expect(BerryMedPacket(hex("96 B2 46 03 60")[...]) == nil, "a header bit inside")
        #expect(BerryMedPacket(hex("96 32 46 03")[...]) == nil, "short")
    }

    @Test func theStreamResynchronisesOnTheNextHeader() {
        var stream = BerryMedStream()
        // A stray data byte, a packet cut short by the next header, a whole packet split across two values.
        #expect(stream.append(hex("60 96 32 46")).isEmpty)
        let packets = stream.append(hex("96 32 06 48 61")) + stream.append(hex("96 33")) + stream.append(hex("06 48 62"))
        #expect(packets.map(\.oxygenSaturation) == [97, 98])
        #expect(packets.map(\.pulseRate) == [72, 72])
        #expect(stream.droppedBytes == 4, "the stray byte and the three bytes of the cut packet")
    }

    @Test func theNewerProtocolsPacketsNeverPassForPackets() {
        var stream = BerryMedStream()
        // A V1.5 packet start (FF AA) followed by bytes that would otherwise form a packet (AA 32 06 48 61).
        #expect(stream.append(hex("96 32 06 48 61 FF AA 32 06 48 61")).map(\.oxygenSaturation) == [97])
        #expect(stream.otherProtocol)
        #expect(stream.append(hex("96 32 06 48 61")).isEmpty, "nothing more is taken")
    }

    @Test func oneReadingPerSecondTheMedianOfItsPackets() throws {
        var reducer = BerryMedSecondReducer()
        let start = Date(timeIntervalSince1970: 1_760_000_000)
        func packet(_ spo2: UInt8, _ pulse: UInt8) throws -> BerryMedPacket {
            try #require(BerryMedPacket([0x96, 0x32, 0x06, pulse, spo2][...]))
        }
        #expect(reducer.add(try packet(97, 72), at: start) == nil)
        #expect(reducer.add(try packet(90, 60), at: start.addingTimeInterval(0.3)) == nil)
        #expect(reducer.add(try packet(97, 73), at: start.addingTimeInterval(0.6)) == nil)
        // The next second closes the first: the median of 97/90/97 and of 72/60/73.
        let first = reducer.add(try packet(98, 74), at: start.addingTimeInterval(1.1))
        #expect(first == BerryMedSecondReducer.Reading(second: 1_760_000_000, oxygenSaturation: 97, pulseRate: 72))
        #expect(reducer.finish() == BerryMedSecondReducer.Reading(second: 1_760_000_001, oxygenSaturation: 98, pulseRate: 74))
        #expect(reducer.finish() == nil)
    }
}
