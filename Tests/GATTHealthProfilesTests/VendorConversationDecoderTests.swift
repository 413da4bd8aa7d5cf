import Foundation
import OmronBloodPressure
import QNGATTScale
import Testing

/// The pure decoders of the Omron and QN conversations, on the real bytes of the public tests
/// (hass-omron tests/test_record_parsers.py, ble-scale-sync tests/scales/qn-scale.test.ts).
@Suite struct VendorConversationDecoderTests {
    private func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
    }

    @Test func theRealOmronReadingsDecodeToTheirPublishedValues() throws {
        let slot13 = try #require(try OmronBPRecord(bytes("6558541a331ade1800004c00ba00"), layout: .byteAligned))
        #expect([slot13.systolic, slot13.diastolic, slot13.pulse] as [Int] == [126, 88, 84])
        #expect(slot13.time == DateComponents(year: 2026, month: 6, day: 17, hour: 19, minute: 35, second: 30))
        let slot7 = try #require(try OmronBPRecord(bytes("6457431a7316161c000046001900"), layout: .byteAligned))
        #expect([slot7.systolic, slot7.diastolic, slot7.pulse] as [Int] == [125, 87, 67])
        #expect(slot7.time == DateComponents(year: 2026, month: 5, day: 19, hour: 19, minute: 48, second: 22))
        let hem7600 = try #require(try OmronBPRecord(bytes("5b781a4819d71b42000014006996"), layout: .bitPacked))
        #expect([hem7600.systolic, hem7600.diastolic, hem7600.pulse] as [Int] == [145, 91, 72])
        #expect(hem7600.time == DateComponents(year: 2026, month: 6, day: 14, hour: 23, minute: 45, second: 2))
        #expect(!hem7600.irregularHeartbeat && !hem7600.bodyMovement)
    }

    @Test func emptyAndImpossibleOmronSlots() throws {
        #expect(try OmronBPRecord([UInt8](repeating: 0xFF, count: 16), layout: .byteAligned) == nil)
        #expect(try OmronBPRecord([UInt8](repeating: 0, count: 14), layout: .byteAligned) == nil)
        #expect(try OmronBPRecord([0xE2] + [UInt8](repeating: 0, count: 13), layout: .byteAligned) == nil)
        #expect(throws: OmronRecordError.tooShort(bytes: [0x65, 0x58])) { try OmronBPRecord([0x65, 0x58], layout: .byteAligned) }
        // Month 0: no such time; the error names the bytes.
        let noMonth = bytes("6558541a3300de1800004c00ba00")
        #expect(throws: OmronRecordError.impossibleTime(year: 2026, month: 0, day: 1, hour: 19, minute: 35, bytes: noMonth)) {
            try OmronBPRecord(noMonth, layout: .byteAligned)
        }
    }

    @Test func omronFramesAreSealedAndChecked() throws {
        #expect(OmronMemoryFrame.read(address: 0x02E8, count: 14) == [0x08, 0x01, 0x00, 0x02, 0xE8, 0x0E, 0x00, 0xED])
        #expect(OmronMemoryFrame.startSession.reduce(0, ^) == 0 && OmronMemoryFrame.endSession.reduce(0, ^) == 0)
        let written = OmronMemoryFrame.write(address: 0x0080, data: [1, 2, 3])
        #expect(written.count == 11 && written[0] == 11 && written.reduce(0, ^) == 0)
        let answer = [0x0E, 0x81, 0x00, 0x02, 0xE8, 0x06, 1, 2, 3, 4, 5, 6, 0x00] as [UInt8]
        let sealed = answer + [answer.reduce(0, ^)]
        #expect(try OmronMemoryFrame.Answer(sealed).data == [1, 2, 3, 4, 5, 6])
        var broken = sealed
        broken[7] ^= 0x40
        #expect(throws: OmronFrameError.badCheck(bytes: broken)) { try OmronMemoryFrame.Answer(broken) }
        #expect(throws: OmronFrameError.tooShort(bytes: Array(sealed.prefix(9)))) { try OmronMemoryFrame.Answer(Array(sealed.prefix(9))) }
        let overlong = [0x08, 0x81, 0x00, 0x00, 0x10, 0x20, 0x00] as [UInt8]
        let overlongSealed = overlong + [overlong.reduce(0, ^)]
        #expect(throws: OmronFrameError.countBeyondFrame(count: 32, bytes: overlongSealed)) { try OmronMemoryFrame.Answer(overlongSealed) }
    }

    @Test func omronModelsAreFoundByTheirNamesAndVariants() {
        #expect(OmronBPModel.named("BP5360")?.name == "HEM-7377T1")
        #expect(OmronBPModel.named("hem-7361t_esl")?.name == "HEM-7361T")
        #expect(OmronBPModel.named("HEM-9999T") == nil)
        #expect(OmronBPModel.all.allSatisfy { $0.cursorOffsets.count == $0.users })
    }

    @Test func omronClockBlockIsReadAndSetWithItsSum() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let date = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28 20:26:40 UTC
        let block = OmronClockBlock.setting([UInt8](repeating: 7, count: 16), to: date, in: zone, layout: .yearFirst)
        #expect(Array(block[8..<14]) == [26, 5, 28, 22, 26, 40])
        #expect(block[14] == UInt8(truncatingIfNeeded: block[0..<14].reduce(0) { $0 + Int($1) }) && block[15] == 0)
        #expect(OmronClockBlock.time(block, layout: .yearFirst)
                    == DateComponents(year: 2026, month: 5, day: 28, hour: 22, minute: 26, second: 40))
        #expect(OmronClockBlock.time([UInt8](repeating: 0, count: 16), layout: .yearFirst) == nil, "an unset clock")
    }

    /// The HEM-7600T's 10-byte block (omblepy `deviceSpecific/hem-7600t.py`, settings bytes
    /// 0x14…0x1D): month, year − 2000, hour, day, second, minute at 2…7, zero, then the sum.
    @Test func omronWordSwappedClockBlockIsReadAndSetWithItsSum() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let date = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28 22:26:40 in Berlin
        let read: [UInt8] = [0x12, 0x34, 1, 25, 3, 7, 9, 8, 0x55, 0x00]
        let block = OmronClockBlock.setting(read, to: date, in: zone, layout: .wordSwapped)
        let expected: [UInt8] = [0x12, 0x34, 5, 26, 22, 28, 40, 26, 0, 0xD9]  // 0xD9: the low byte of the sum of the nine
        #expect(block == expected)
        #expect(OmronClockBlock.time(read, layout: .wordSwapped)
                    == DateComponents(year: 2025, month: 1, day: 7, hour: 3, minute: 8, second: 9))
        #expect(OmronClockBlock.time(block, layout: .wordSwapped)
                    == DateComponents(year: 2026, month: 5, day: 28, hour: 22, minute: 26, second: 40))
        #expect(OmronClockBlock.time(Array(block.prefix(9)), layout: .wordSwapped) == nil, "a short block")
        #expect(OmronBPModel.named("HEM-7600T")?.clockLayout == .wordSwapped && OmronBPModel.named("HEM-7600T")?.clockOffset == 0x14)
    }

    @Test func theRealQNStableFrameDecodes() throws {
        let frame = bytes("100eff01020258 01fd01fb0033a7".replacingOccurrences(of: " ", with: ""))
        let weight = try QNFrame.Weight(frame, tenths: true)
        #expect(weight.stable && weight.kilograms(tenths: true) == 60 && weight.impedance == 509 && weight.resistance2 == 507)
        var broken = frame
        broken[6] = 0x59
        #expect(throws: QNFrameError.badChecksum(bytes: broken)) { try QNFrame.Weight(broken, tenths: true) }
        #expect(throws: QNFrameError.tooShort(bytes: Array(frame.prefix(6)))) { try QNFrame.Weight(Array(frame.prefix(6)), tenths: true) }
        var long = frame
        long[1] = 0x20
        #expect(throws: QNFrameError.badLength(bytes: long)) { try QNFrame.Weight(long, tenths: true) }
        #expect(QNFrame.acknowledgement(protocolType: 0xFF) == [0x1F, 0x05, 0xFF, 0x10, 0x33])
        #expect(QNFrame.configuration(protocolType: 0xFF, unit: .kilogram) == [0x13, 0x09, 0xFF, 0x01, 0x10, 0, 0, 0, 0x2C])
    }

    @Test func qnWeightsOutsideAPersonsRangeTryTheOtherFactor() throws {
        // 8320 raw with tenths gives 832 kg: the other factor gives 83.2 kg (the public decoders' heuristic).
        let body: [UInt8] = [0x10, 0x0B, 0xFF, 0x20, 0x80, 0x01, 0x01, 0xF4, 0x01, 0xF4]
        let frame = body + [UInt8(truncatingIfNeeded: body.reduce(0) { $0 + Int($1) })]
        let weight = try QNFrame.Weight(frame, tenths: true)
        #expect(weight.raw == 8320 && abs(weight.kilograms(tenths: true) - 83.2) < 1e-9)
    }
}
