import ANTPlus
import TestSupport
import Testing

/// The stick's IN stream gives the same messages however the USB transfers cut it.
struct ANTStreamFragmentationTests {
    /// Feeds each chunk as one transfer and takes every message it completes.
    static func messages(_ chunks: [ArraySlice<UInt8>]) -> [ANTMessage] {
        var decoder = ANTStreamDecoder()
        var messages: [ANTMessage] = []
        for chunk in chunks {
            decoder.append(Array(chunk))
            while let next = decoder.next() {
                if case .success(let message) = next { messages.append(message) }
            }
        }
        return messages
    }

    @Test func messagesDoNotDependOnWhereTransfersEnd() throws {
        let startup: [UInt8] = [0xA4, 0x01, 0x6F, 0x00, 0xCA]
        let broadcast: [UInt8] = [0xA4, 0x09, 0x4E, 0x00, 0x04, 0x00, 0x1A, 0x2B, 0x05, 0x1C, 0x21, 0x48, 0xA6]
        let response = ANTMessage(id: 0x40, payload: [0x00, 0x46, 0x00]).bytes
        let extended = ANTMessage(id: 0x4E, payload: [0x00, 0x04, 0x00, 0x1A, 0x2B, 0x05, 0x1C, 0x21, 0x48,
                                                      0x80, 0x39, 0x30, 0xF8, 0x21]).bytes
        var corrupt = response
        corrupt[corrupt.count - 1] ^= 0xFF
        // Garbage before a sync byte and a corrupt frame followed by a sync byte: skipped the same
        // way wherever a transfer ends.
        let stream = startup + broadcast + [0x00, 0x00] + response + corrupt + extended + broadcast
        let messages = try verifyFragmentation(of: stream) { Self.messages($0) }
        #expect(messages.map(\.id) == [0x6F, 0x4E, 0x40, 0x4E, 0x4E])
        #expect(messages[3].payload.count == 14)
    }
}
