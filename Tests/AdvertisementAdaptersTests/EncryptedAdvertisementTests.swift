import AdapterKit
import AdvertisementCrypto
import BTHome
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport
import XiaomiMiBeacon

/// AES-CCM through libcrypto on the published vectors, the key type's errors, and the encrypted
/// sessions (MiBeacon, BTHome) on real frames from the public decoders' tests.
@Suite("Encrypted advertisements")
struct EncryptedAdvertisementTests {
    static let bthomeKey = "231d39c1d7cc1ab1aee224cd096db932"  // bthome-ble tests/test_v2_encryption.py
    static let bthomeAddress = "54:48:E6:8F:80:A5"
    static let s400Address = "8C:D0:B2:F6:BE:EF"  // xiaomi-ble tests/test_parser.py
    static let s400Key = "0728974d657a4b60964c1b1677f35f7c"
    static let s400Weighing = hex("48 59 d5 3b 0a bc 07 8f f2 34 8c 84 41 38 e9 30 22 00 00 00 9e 53 85 99")
    static let s400Closing = hex("48 59 d5 3b 0b d6 ef 0b 25 db 72 78 5e 7e 2f 46 d6 00 00 00 d8 64 2d f6")

    @Test("AES-128-CCM seals and opens bthome-ble's test_encryption_example_1 to its published bytes")
    func aesCCMVector() throws {
        let cipher = try AESCCM()
        let key = hex(Self.bthomeKey.replacingOccurrences(of: " ", with: ""))
        let nonce = hex("54 48 e6 8f 80 a5 d2 fc 41 00 11 22 33")
        let sealed = try cipher.seal(key: key, nonce: nonce, plaintext: hex("02 ca 09 03 bf 13"))
        #expect(sealed.ciphertext == hex("a4 72 66 c9 5f 73"))
        #expect(sealed.tag == hex("78 23 72 14"))
        let opened = try cipher.open(key: key, nonce: nonce, ciphertext: hex("a4 72 66 c9 5f 73")[...], tag: hex("78 23 72 14")[...])
        #expect(opened == hex("02 ca 09 03 bf 13"))
        // One changed bit of ciphertext, tag or key: no plaintext at all.
        #expect(try cipher.open(key: key, nonce: nonce, ciphertext: hex("a4 72 66 c9 5f 72")[...], tag: hex("78 23 72 14")[...]) == nil)
        #expect(try cipher.open(key: key, nonce: nonce, ciphertext: hex("a4 72 66 c9 5f 73")[...], tag: hex("78 23 72 15")[...]) == nil)
        var otherKey = key
        otherKey[0] ^= 1
        #expect(try cipher.open(key: otherKey, nonce: nonce, ciphertext: hex("a4 72 66 c9 5f 73")[...], tag: hex("78 23 72 14")[...]) == nil)
        #expect(throws: AESCCMError.keyLength(15)) { try cipher.open(key: Array(key.dropLast()), nonce: nonce, ciphertext: [][...], tag: hex("00 00 00 00")[...]) }
    }

    @Test("Keys parse from 32 hex digits; errors say where and what, never the digits; a key prints as <key>")
    func keyText() throws {
        let key = try AdvertisementKey(hex: Self.s400Key + "\n")
        #expect(key.bytes == hex("07 28 97 4d 65 7a 4b 60 96 4c 1b 16 77 f3 5f 7c"))
        #expect("\(key)" == "<key>" && String(reflecting: key) == "<key>")
        #expect(throws: AdvertisementKeyError.notHex(position: 3)) { try AdvertisementKey(hex: "07x8974d657a4b60964c1b1677f35f7c") }
        #expect(throws: AdvertisementKeyError.wrongLength(12)) { try AdvertisementKey(hex: "0728974d657a4b60964c1b16") }
        #expect(throws: AdvertisementKeyError.oddDigitCount(31)) { try AdvertisementKey(hex: String(Self.s400Key.dropLast())) }
        #expect(throws: AdvertisementKeyError.empty) { try AdvertisementKey(hex: "") }
        for error in [AdvertisementKeyError.notHex(position: 3), .wrongLength(12), .oddDigitCount(31), .empty] {
            #expect(!error.description.contains("0728"))
        }
    }

    func mibeaconSession(keys: [String: String]) throws -> XiaomiMiBeaconSession {
        var table: [BLEAddress: AdvertisementKey] = [:]
        for (address, key) in keys { table[try #require(BLEAddress(address))] = try AdvertisementKey(hex: key) }
        let context = AdapterContext(timeZone: try #require(TimeZone(identifier: "Europe/Berlin")), source: XiaomiMiBeaconAdapter.id,
                                     keys: AdvertisementKeys(table))
        return XiaomiMiBeaconSession(device: BLEDeviceTraits(address: try #require(BLEAddress(Self.s400Address))), context: context)
    }

    func mibeacon(_ frame: [UInt8], at seconds: Double) throws -> TransportEvent {
        .advertisement(try makeAdvertisement(address: Self.s400Address, serviceData: [(0xFE95, frame)],
                                             time: Date(timeIntervalSince1970: 1_736_931_600 + seconds)))
    }

    @Test("S400 (xiaomi-ble test_Xiaomi_Scale_S400_MJTZC01YM and _packet_2): one weighing of 69.9 kg and 92 /min with both impedances, once complete")
    func s400Weighing() throws {
        let session = try mibeaconSession(keys: [Self.s400Address: Self.s400Key])
        var output = AdapterOutput()
        session.receive(try mibeacon(Self.s400Weighing, at: 0), into: &output)
        session.receive(try mibeacon(Self.s400Weighing, at: 0.1), into: &output)
        #expect(samples(output).isEmpty, "the weighing is not stable until its 250 kHz frame")
        session.receive(try mibeacon(Self.s400Closing, at: 1), into: &output)
        session.receive(try mibeacon(Self.s400Closing, at: 1.1), into: &output)
        let emitted = samples(output)
        #expect(emitted.map(\.type) == [.bodyMass, .heartRate])
        #expect(emitted.first?.quantity == Quantity(value: 69.9, unit: .kilogram))
        #expect(emitted.last?.quantity == Quantity(value: 92, unit: .countPerMinute))
        #expect(emitted.allSatisfy { $0.start == Date(timeIntervalSince1970: 1_736_931_600) })
        let metadata = try #require(emitted.first?.metadata)
        #expect(metadata.entries[XiaomiMiBeaconAdapter.impedanceMetadataKey] == .number(543.2))
        #expect(metadata.entries[XiaomiMiBeaconAdapter.highFrequencyImpedanceMetadataKey] == .number(497.6))
        #expect(emitted.first?.device?.model == "MJTZC01YM")
        #expect(output.skipped["repeated-frame-counter"] == 2)
        #expect(output.rejections.isEmpty && output.explanations.isEmpty)
    }

    @Test("Without a key, or with a wrong one, S400 frames are counted per frame, explained once, never decoded")
    func s400WithoutTheRightKey() throws {
        for keys in [[:], [Self.s400Address: "02d2900363ef629c736a4549677acbee"]] {
            let session = try mibeaconSession(keys: keys)
            var output = AdapterOutput()
            for (index, frame) in [Self.s400Weighing, Self.s400Closing, Self.s400Weighing].enumerated() {
                session.receive(try mibeacon(frame, at: Double(index)), into: &output)
            }
            let reason = keys.isEmpty ? "no-key" : "mic-mismatch"
            #expect(samples(output).isEmpty)
            // The third frame repeats nothing accepted (none was), so it is tried again and refused again.
            #expect(output.rejections.map(\.reason) == [reason, reason, reason])
            #expect(output.rejections.allSatisfy { $0.isExplained })
            #expect(output.explanations.count == 1)
            let explanation = try #require(output.explanations.first)
            #expect(explanation.contains(keys.isEmpty ? "no key for \(Self.s400Address): `ingestd keys add"
                                                      : "key for \(Self.s400Address) does not decrypt"))
            session.finish(into: &output)
            #expect(output.explanations.last == "\(Self.s400Address): 3 encrypted MiBeacon frames not decoded (\(reason))")
            #expect(!output.explanations.joined().contains("02d29003"))
        }
    }

    @Test("A frame counter older than the last accepted one is a replayed frame; near zero after a high one is a restart")
    func counterRules() throws {
        var state = EncryptedAdvertisementState(address: try #require(BLEAddress(Self.s400Address)), source: "x",
                                                keys: AdvertisementKeys(), protocolName: "MiBeacon")
        state.accept(11)
        #expect(state.isRepeat(11) && !state.isReplay(11))
        #expect(state.isReplay(10))
        #expect(!state.isReplay(12))
        state.accept(5_000)
        #expect(!state.isReplay(3), "a device that started over")
        #expect(state.isReplay(4_999) && state.isReplay(150))
    }

    func bthomeSession(key: String?) throws -> BTHomeSession {
        var table: [BLEAddress: AdvertisementKey] = [:]
        if let key { table[try #require(BLEAddress(Self.bthomeAddress))] = try AdvertisementKey(hex: key) }
        let context = AdapterContext(timeZone: try #require(TimeZone(identifier: "Europe/Berlin")), source: BTHomeAdapter.id,
                                     keys: AdvertisementKeys(table))
        return BTHomeSession(device: BLEDeviceTraits(address: try #require(BLEAddress(Self.bthomeAddress))), context: context)
    }

    func bthome(_ payload: String) throws -> TransportEvent {
        .advertisement(try makeAdvertisement(address: Self.bthomeAddress, serviceData: [(0xFCD2, hex(payload))]))
    }

    @Test("BTHome v2 encrypted (bthome-ble test_bindkey_correct, test_bthome_with_mac_encrypted): 25.06 degC with the key only")
    func bthomeEncrypted() throws {
        let withKey = try bthomeSession(key: Self.bthomeKey)
        var output = AdapterOutput()
        withKey.receive(try bthome("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"), into: &output)
        #expect(samples(output).map(\.quantity) == [Quantity(value: 25.06, unit: .degreeCelsius)])
        #expect(samples(output).first?.type == .ambientTemperature)

        let withMAC = try bthomeSession(key: Self.bthomeKey)
        var macOutput = AdapterOutput()
        withMAC.receive(try bthome("43 a5 80 8f e6 48 54 f1 96 c0 6f fb 49 00 11 22 33 f0 8e cb de"), into: &macOutput)
        #expect(samples(macOutput).map(\.quantity) == [Quantity(value: 25.06, unit: .degreeCelsius)])
        #expect(samples(macOutput).first?.device?.localIdentifier == Self.bthomeAddress)

        let withoutKey = try bthomeSession(key: nil)
        var refused = AdapterOutput()
        withoutKey.receive(try bthome("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"), into: &refused)
        #expect(samples(refused).isEmpty)
        #expect(refused.rejections.map(\.reason) == ["no-key"])
        #expect(refused.explanations.count == 1)
    }

    @Test("The router keeps at most maximumMatchedDevices devices' sessions; the oldest are ended, forgotten and counted")
    func routerBoundsMatchedDevices() throws {
        let router = try AdapterRouter(adapters: [BTHomeAdapter()], timeZone: try #require(TimeZone(identifier: "UTC")),
                                       maximumMatchedDevices: 3)
        var output = AdapterOutput()
        for index in 0..<10 {
            let address = String(format: "A4:C1:38:00:00:%02X", index)
            router.route(.advertisement(try makeAdvertisement(address: address, serviceData: [(0xFCD2, hex("40 06 5e 1f"))])),
                         into: &output)
        }
        #expect(router.matchedDevices.count == 3)
        #expect(router.forgottenMatched == 7)
        #expect(Set(router.matchedDevices.keys.map(\.description)) == ["A4:C1:38:00:00:07", "A4:C1:38:00:00:08", "A4:C1:38:00:00:09"])
        #expect(samples(output).count == 10)
    }
}
