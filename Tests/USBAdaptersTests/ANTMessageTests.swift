import ANTPlus
import Testing

/// ANT framing on the byte vectors of the ant-plus (Loghorn) project's message tests, and malformed frames.
struct ANTMessageTests {
    @Test func commandsFrameAsPublished() {
        #expect(ANTCommand.reset().bytes == [0xA4, 0x01, 0x4A, 0x00, 0xEF])
        #expect(ANTCommand.assignChannel(0).bytes == [0xA4, 0x03, 0x42, 0x00, 0x00, 0x00, 0xE5])
        #expect(ANTCommand.assignChannel(0, type: 0x40).bytes == [0xA4, 0x03, 0x42, 0x00, 0x40, 0x00, 0xA5])
        #expect(ANTCommand.setChannelID(0, deviceNumber: 12345, deviceType: 0x78).bytes
                == [0xA4, 0x05, 0x51, 0x00, 0x39, 0x30, 0x78, 0x00, 0x81])
        #expect(ANTCommand.setPeriod(0, period: 8070).bytes == [0xA4, 0x03, 0x43, 0x00, 0x86, 0x1F, 0x7D])
        #expect(ANTCommand.setSearchTimeout(0, timeout: 10).bytes == [0xA4, 0x02, 0x44, 0x00, 0x0A, 0xE8])
        #expect(ANTCommand.setFrequency(0).bytes == [0xA4, 0x02, 0x45, 0x00, 0x39, 0xDA])
        #expect(ANTCommand.openChannel(0).bytes == [0xA4, 0x01, 0x4B, 0x00, 0xEE])
        #expect(ANTCommand.closeChannel(0).bytes == [0xA4, 0x01, 0x4C, 0x00, 0xE9])
        #expect(ANTMessage(id: 0x4F, payload: [0, 1, 2, 3, 4, 5, 6, 7, 8]).bytes
                == [0xA4, 0x09, 0x4F, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0xEA])
    }

    @Test func aFrameDecodesToItsIdAndPayload() throws {
        // The startup message after a power-on reset.
        #expect(try ANTMessage.decode([0xA4, 0x01, 0x6F, 0x00, 0xCA]) == ANTMessage(id: 0x6F, payload: [0x00]))
    }

    @Test func aBadChecksumNamesExpectedAndFound() {
        #expect(throws: ANTFrameError.badChecksum(expected: 0xEF, found: 0xEE, bytes: [0xA4, 0x01, 0x4A, 0x00, 0xEE])) {
            try ANTMessage.decode([0xA4, 0x01, 0x4A, 0x00, 0xEE])
        }
    }

    @Test func shortAndOverlongFramesAreRefused() {
        #expect(throws: ANTFrameError.truncated(expected: 13, found: 6, bytes: [0xA4, 0x09, 0x4E, 0x00, 0x01, 0x02])) {
            try ANTMessage.decode([0xA4, 0x09, 0x4E, 0x00, 0x01, 0x02])
        }
        #expect(throws: ANTFrameError.truncated(expected: 4, found: 2, bytes: [0xA4, 0x01])) {
            try ANTMessage.decode([0xA4, 0x01])
        }
        #expect(throws: ANTFrameError.trailingBytes(expected: 5, found: 6, bytes: [0xA4, 0x01, 0x6F, 0x00, 0xCA, 0x00])) {
            try ANTMessage.decode([0xA4, 0x01, 0x6F, 0x00, 0xCA, 0x00])
        }
        #expect(throws: ANTFrameError.implausibleLength(200, bytes: [0xA4, 0xC8, 0x4E, 0x00])) {
            try ANTMessage.decode([0xA4, 0xC8, 0x4E, 0x00])
        }
        #expect(throws: ANTFrameError.missingSync(bytes: [0x01, 0x4A, 0x00, 0xEF])) {
            try ANTMessage.decode([0x01, 0x4A, 0x00, 0xEF])
        }
    }

    @Test func theStreamDecoderJoinsSplitMessagesAndSplitsJoinedOnes() throws {
        var decoder = ANTStreamDecoder()
        let startup: [UInt8] = [0xA4, 0x01, 0x6F, 0x00, 0xCA]
        let response = ANTMessage(id: 0x40, payload: [0x00, 0x46, 0x00]).bytes
        decoder.append(Array(startup.prefix(3)))
        #expect(decoder.next() == nil)
        decoder.append(Array(startup.dropFirst(3)) + response + [0xA4])
        #expect(try decoder.next()?.get() == ANTMessage(id: 0x6F, payload: [0x00]))
        #expect(try decoder.next()?.get() == ANTMessage(id: 0x40, payload: [0x00, 0x46, 0x00]))
        #expect(decoder.next() == nil)
        #expect(decoder.pending == [0xA4])
    }

    @Test func theStreamDecoderResynchronisesAfterGarbageAndBadChecksums() throws {
        var decoder = ANTStreamDecoder()
        let good = ANTMessage(id: 0x40, payload: [0x00, 0x4B, 0x00]).bytes
        var corrupt = good
        corrupt[corrupt.count - 1] ^= 0xFF
        decoder.append([0x00, 0x00] + corrupt + good)
        #expect(decoder.next() == .failure(.missingSync(bytes: [0x00, 0x00])))
        #expect(decoder.next() == .failure(.badChecksum(expected: good[good.count - 1], found: corrupt[corrupt.count - 1],
                                                         bytes: corrupt)))
        // A sync byte follows the corrupt frame: the frame goes as a whole and the good one is found.
        #expect(try decoder.next()?.get() == ANTMessage(id: 0x40, payload: [0x00, 0x4B, 0x00]))
        #expect(decoder.next() == nil)
    }

    @Test func aStraySyncByteCostsOnlyItself() throws {
        var decoder = ANTStreamDecoder()
        let good = ANTMessage(id: 0x6F, payload: [0x00]).bytes
        // 0xA4 0x02 looks like the start of a 6-byte frame that swallows the start of the good message.
        decoder.append([0xA4, 0x02, 0x11] + good)
        #expect(decoder.next() == .failure(.badChecksum(expected: 0xA4 ^ 0x02 ^ 0x11 ^ 0xA4 ^ 0x01,
                                                         found: 0x6F, bytes: [0xA4, 0x02, 0x11, 0xA4, 0x01, 0x6F])))
        #expect(decoder.next() == .failure(.missingSync(bytes: [0x02, 0x11])))
        #expect(try decoder.next()?.get() == ANTMessage(id: 0x6F, payload: [0x00]))
    }

    @Test func extendedDataNamesTheSender() throws {
        // Broadcast on channel 0 with flag 0x80: device 12345 (0x3039), type 0x78 with the pairing bit, trans. type 0x21.
        let message = ANTMessage(id: 0x4E, payload: [0x00, 0x04, 0x00, 0x1A, 0x2B, 0x05, 0x1C, 0x21, 0x48,
                                                     0x80, 0x39, 0x30, 0xF8, 0x21])
        let data = try ANTDataMessage(message)
        #expect(data.data == [0x04, 0x00, 0x1A, 0x2B, 0x05, 0x1C, 0x21, 0x48])
        #expect(data.channelID == ANTChannelID(deviceNumber: 12345, deviceType: 0x78, transmissionType: 0x21))
        #expect(data.channelID?.deviceType == 120)
        #expect(data.channelID?.extendedDeviceNumber == 0x2_3039)
        #expect(data.channelID?.description == "ant+/120/143417")
    }

    @Test func extendedDataWithRSSIAndTimestamp() throws {
        let message = ANTMessage(id: 0x4E, payload: [0x00, 1, 2, 3, 4, 5, 6, 7, 8,
                                                     0xE0, 0x39, 0x30, 0x7C, 0x01, 0x20, 0xC4, 0xF6, 0x34, 0x12])
        let data = try ANTDataMessage(message)
        #expect(data.channelID == ANTChannelID(deviceNumber: 12345, deviceType: 124, transmissionType: 1))
        #expect(data.rssi == -60)
        #expect(data.rxTimestamp == 0x1234)
    }

    @Test func shortDataAndUnknownFlagsAreRefused() {
        let short = ANTMessage(id: 0x4E, payload: [0x00, 1, 2, 3])
        #expect(throws: ANTPayloadError.tooShort(messageID: 0x4E, expected: 9, found: 4, payload: short.payload)) {
            try ANTDataMessage(short)
        }
        let cut = ANTMessage(id: 0x4E, payload: [0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0x39])
        #expect(throws: ANTPayloadError.tooShort(messageID: 0x4E, expected: 14, found: 11, payload: cut.payload)) {
            try ANTDataMessage(cut)
        }
        let odd = ANTMessage(id: 0x4E, payload: [0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x01])
        #expect(throws: ANTPayloadError.unknownExtendedFlags(0x01, payload: odd.payload)) {
            try ANTDataMessage(odd)
        }
    }

    @Test func channelResponsesSayWhatTheyAnswer() throws {
        let event = try ANTChannelEvent(ANTMessage(id: 0x40, payload: [0x00, 0x46, 0x00]))
        #expect(event.answers(0x46))
        #expect(event.code == ANTChannelEvent.noError)
        #expect(throws: ANTPayloadError.tooShort(messageID: 0x40, expected: 3, found: 1, payload: [0x00])) {
            try ANTChannelEvent(ANTMessage(id: 0x40, payload: [0x00]))
        }
    }
}
