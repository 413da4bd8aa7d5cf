import AdvertisementCrypto
import EufyP2Scale
import Foundation
import Testing
import Transport

/// The Eufy P2 family's handshake pieces and weight frame, on published bytes.
struct EufyP2HandshakeTests {
    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.replacingOccurrences(of: " ", with: "").utf8)
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }

    /// AES-128-CBC against NIST SP 800-38A F.2.1 (the first block; PKCS#7 adds a second), and
    /// MD5 against RFC 1321's "abc".
    @Test func theCipherAndTheDigestMatchTheirStandardVectors() throws {
        let cipher = try AESCBC()
        let key = bytes("2b7e151628aed2a6abf7158809cf4f3c")
        let iv = bytes("000102030405060708090a0b0c0d0e0f")
        let plaintext = bytes("6bc1bee22e409f96e93d7e117393172a")
        let sealed = try cipher.encrypt(key: key, iv: iv, plaintext: plaintext)
        #expect(Array(sealed.prefix(16)) == bytes("7649abac8119b246cee98e9b12e9197d"))
        #expect(sealed.count == 32)
        #expect(try cipher.decrypt(key: key, iv: iv, ciphertext: sealed) == plaintext)
        var changed = sealed
        changed[31] ^= 0x01
        #expect(try cipher.decrypt(key: key, iv: iv, ciphertext: changed) == nil, "a changed byte breaks the padding")
        #expect(try cipher.decrypt(key: key, iv: iv, ciphertext: [1, 2, 3]) == nil)
        #expect(throws: AESCBCError.keyLength(3)) { try cipher.encrypt(key: [1, 2, 3], iv: iv, plaintext: plaintext) }
        #expect(try AESCBC.md5(Array("abc".utf8)) == bytes("900150983cd24fb0d6963f7d28e17f72"))
    }

    /// The key is the MD5 of the address's digits in upper case; a 15-character id goes as two
    /// frames announcing 24 bytes of base64 (ble-scale-sync's tests), and comes back whole.
    @Test func theHandshakeFramesCarryTheEncryptedIDs() throws {
        let address = try #require(BLEAddress("cf:e6:03:1d:09:f7"))
        let key = try EufyP2Handshake.key(for: address)
        #expect(key == (try AESCBC.md5(Array("CFE6031D09F7".utf8))))
        let cipher = try AESCBC()
        let frames = try EufyP2Handshake.frames("abcdef123456789", prefix: EufyP2Handshake.clientID, key: key, cipher: cipher)
        #expect(frames.map { Array($0.prefix(4)) } == [[0xC0, 0x02, 0x00, 0x18], [0xC0, 0x02, 0x01, 0x18]])
        #expect(frames.allSatisfy { EufyP2Handshake.xor($0.dropLast()) == $0.last })
        var reassembly = EufyP2Handshake.Reassembly(prefix: 0xC0)
        #expect(try reassembly.take(frames[0]) == nil)
        let ascii = try #require(try reassembly.take(frames[1]))
        #expect(try EufyP2Handshake.open(ascii, key: key, cipher: cipher) == "abcdef123456789")
        let otherKey = try EufyP2Handshake.key(for: try #require(BLEAddress("CF:E6:03:1D:09:F8")))
        #expect(try EufyP2Handshake.open(ascii, key: otherKey, cipher: cipher) != "abcdef123456789")

        var broken = frames[0]
        broken[broken.count - 1] ^= 0xFF
        var again = EufyP2Handshake.Reassembly(prefix: 0xC0)
        #expect(throws: EufyP2Error.badChecksum(broken)) { try again.take(broken) }
        #expect(throws: EufyP2Error.outOfOrder(frames[1])) { try again.take(frames[1]) }
    }

    /// Real P2 Pro frames (ble-scale-sync issue #289): weight and impedance, and a socks-on frame without one.
    @Test func realWeightFramesDecode() throws {
        let first = try EufyP2Weight(bytes("cf 0e 00 cf 08 11 56 22 08 03 88 00 00 00 00 21"))
        #expect(first == EufyP2Weight(kilograms: 87.9, impedanceOhms: 436, isFinal: true))
        let second = try EufyP2Weight(bytes("cf 0e 00 cf 72 1a bd 1a 06 05 62 00 00 00 00 61"))
        #expect(second.kilograms == 68.45 && second.impedanceOhms == 677)
        let socksOn = try EufyP2Weight(bytes("cf 0e 00 cf 00 00 60 22 00 00 00 00 00 00 00 8d"))
        #expect(socksOn.kilograms == 88 && socksOn.impedanceOhms == nil && socksOn.isFinal)
        let wrong = bytes("cf 0e 00 cf 08 11 56 22 08 03 88 00 00 00 00 20")
        #expect(throws: EufyP2Error.badChecksum(wrong)) { try EufyP2Weight(wrong) }
        #expect(throws: EufyP2Error.badFrame([0xCF, 0x0E])) { try EufyP2Weight([0xCF, 0x0E]) }
    }

    /// One standing on the scale, advertised and then connected, shares one sync identifier (the
    /// first arrival's); another weight, another scale or a later weighing gets its own.
    @Test func aWeighingSeenBothWaysHasOneIdentity() throws {
        let weighings = EufyP2Weighings()
        let scale = try #require(BLEAddress("CF:E6:03:1D:09:F7"))
        let other = try #require(BLEAddress("CF:E6:03:1D:09:02"))
        let advertised = Date(timeIntervalSince1970: 1_736_931_600)
        let first = weighings.syncIdentifier(for: scale, kilograms: 87.9, at: advertised)
        #expect(first == "eufy-p2/CF:E6:03:1D:09:F7/1736931600")
        #expect(weighings.syncIdentifier(for: scale, kilograms: 87.9, at: advertised.addingTimeInterval(11)) == first)
        #expect(weighings.syncIdentifier(for: scale, kilograms: 87.95, at: advertised.addingTimeInterval(12)) == first)
        #expect(weighings.syncIdentifier(for: other, kilograms: 87.9, at: advertised.addingTimeInterval(12)) != first)
        let later = advertised.addingTimeInterval(EufyP2Weighings.window + 1)
        #expect(weighings.syncIdentifier(for: scale, kilograms: 87.9, at: later) == "eufy-p2/CF:E6:03:1D:09:F7/\(Int(later.timeIntervalSince1970))")
        let secondPerson = later.addingTimeInterval(30)
        #expect(weighings.syncIdentifier(for: scale, kilograms: 68.45, at: secondPerson)
            == "eufy-p2/CF:E6:03:1D:09:F7/\(Int(secondPerson.timeIntervalSince1970))")
    }
}
