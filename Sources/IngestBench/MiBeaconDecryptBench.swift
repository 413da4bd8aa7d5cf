import AdapterKit
import AdvertisementCrypto
import BuiltinAdapters
import CCrypto
import Foundation
import Transport

// Encrypted MiBeacon decoding: what the S400's frames cost, against libcrypto's AES-CCM alone.

/// Builds `frames` encrypted MiBeacon v5 frames of S400 weighings (object 0x6E16, weighed in socks
/// so every frame is a sample; 16 scales, each frame a new counter), sealed with libcrypto as a
/// scale does, then times, on the thread's CPU clock, (a) routing them as advertisements through
/// the built-in adapters with the scales' keys (`AdapterRouter`: match, MiBeacon header, key
/// lookup, AES-CCM open with its MIC check, objects, samples) and (b) only AES-128-CCM decryption
/// of the same ciphertexts, nonces and MICs through EVP in a loop (one reused context, as the
/// sessions have). Prints `mibeacon.decode_frames_per_s`, `mibeacon.raw_aesccm_frames_per_s`
/// (medians of `repeats` runs) and `mibeacon.decode_vs_raw_aesccm` (their ratio).
func mibeaconDecryptBenchmark(frames: Int = 200_000, repeats: Int = 3) {
    do {
        try MiBeaconDecryptBench(frames: frames, repeats: repeats).run()
    } catch {
        FileHandle.standardError.write(Data("error: MiBeacon decrypt benchmark: \(error)\n".utf8))
    }
}

struct MiBeaconDecryptBench {
    var frames: Int
    var repeats: Int
    static let scales = 16
    static let productID: UInt16 = 0x3BD5  // Body Composition Scale S400

    /// One frame, as sent and as its parts for the raw loop.
    struct Frame {
        var advertisement: BLEAdvertisement
        var ciphertext: [UInt8]
        var mic: [UInt8]
        var nonce: [UInt8]
        var key: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func run() throws {
        let (built, keys) = try makeFrames()
        var decodeRates: [Double] = []
        var rawRates: [Double] = []
        for run in 0..<max(1, repeats) {
            let decodeStart = CaptureDecodeBench.threadCPUSeconds()
            let samples = try decode(built, keys: keys)
            let decodeSeconds = CaptureDecodeBench.threadCPUSeconds() - decodeStart
            guard samples == built.count else { throw Failure(description: "decoded \(samples) samples from \(built.count) frames") }

            let rawStart = CaptureDecodeBench.threadCPUSeconds()
            let opened = try rawDecrypt(built)
            let rawSeconds = CaptureDecodeBench.threadCPUSeconds() - rawStart
            guard opened == built.count else { throw Failure(description: "libcrypto opened \(opened) of \(built.count) frames") }
            decodeRates.append(Double(built.count) / decodeSeconds)
            rawRates.append(Double(built.count) / rawSeconds)
            CaptureDecodeBench.progress(String(format: "mibeacon run %d/%d: decode %.0f frames/s CPU, raw AES-CCM %.0f frames/s CPU",
                                               run + 1, repeats, decodeRates.last ?? 0, rawRates.last ?? 0))
        }
        let decode = decodeRates.sorted()[decodeRates.count / 2]
        let raw = rawRates.sorted()[rawRates.count / 2]
        print("mibeacon.decode_frames_per_s \(Int(decode.rounded())) 1/s")
        print("mibeacon.raw_aesccm_frames_per_s \(Int(raw.rounded())) 1/s")
        print(String(format: "mibeacon.decode_vs_raw_aesccm %.3f x", decode / raw))
    }

    func makeFrames() throws -> ([Frame], AdvertisementKeys) {
        let cipher = try AESCCM()
        var keys: [BLEAddress: AdvertisementKey] = [:]
        var built: [Frame] = []
        built.reserveCapacity(frames)
        let start = Date(timeIntervalSince1970: 1_736_931_600)
        for index in 0..<frames {
            let scale = index % Self.scales
            let counter = UInt32(index / Self.scales + 1)
            guard let address = BLEAddress(rawValue: 0x8CD0_B2F6_0000 + UInt64(scale)) else { throw Failure(description: "address") }
            let key = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 17 + scale) }
            keys[address] = try AdvertisementKey(bytes: key)
            let mass = UInt32(600 + (index * 7) % 400)  // 60.0 … 99.9 kg, no heart rate, no impedance
            let object: [UInt8] = [0x16, 0x6E, 9, 1] + withUnsafeBytes(of: mass.littleEndian, Array.init) + [0, 0, 0, 0]
            let header: [UInt8] = [0x48, 0x59, UInt8(Self.productID & 0xFF), UInt8(Self.productID >> 8), UInt8(truncatingIfNeeded: counter)]
            let extended = [UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter >> 16),
                            UInt8(truncatingIfNeeded: counter >> 24)]
            let nonce = address.littleEndianBytes + header[2..<5] + extended
            let sealed = try cipher.seal(key: key, nonce: nonce, plaintext: object, associatedData: [0x11])
            let serviceData = header + sealed.ciphertext + extended + sealed.tag
            let data: [UInt8] = [0x02, 0x01, 0x06, UInt8(serviceData.count + 3), 0x16, 0x95, 0xFE] + serviceData
            let advertisement = BLEAdvertisement(time: start.addingTimeInterval(Double(index) / 100), address: address,
                                                 addressType: .public, eventType: .advInd, rssi: -60, data: data)
            built.append(Frame(advertisement: advertisement, ciphertext: sealed.ciphertext, mic: sealed.tag, nonce: nonce, key: key))
        }
        return (built, AdvertisementKeys(keys))
    }

    /// Routes every frame through the built-in adapters; returns the samples made.
    func decode(_ built: [Frame], keys: AdvertisementKeys) throws -> Int {
        let router = try AdapterRouter(adapters: BuiltinAdapters.bluetooth, timeZone: TimeZone(secondsFromGMT: 0) ?? .current,
                                       keys: keys)
        var output = AdapterOutput()
        var samples = 0
        for frame in built {
            router.route(.advertisement(frame.advertisement), into: &output)
            if !output.records.isEmpty {
                samples += output.records.count
                output.records.removeAll(keepingCapacity: true)
            }
        }
        guard output.rejections.isEmpty else { throw Failure(description: "rejected: \(output.rejections.prefix(3))") }
        return samples
    }

    /// Only AES-128-CCM of the same bytes through EVP; returns how many frames authenticated.
    func rawDecrypt(_ built: [Frame]) throws -> Int {
        guard let context = EVP_CIPHER_CTX_new() else { throw Failure(description: "no EVP context") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: 64)
        let associatedData: [UInt8] = [0x11]
        var opened = 0
        for frame in built {
            var length: Int32 = 0
            var tag = frame.mic
            EVP_CIPHER_CTX_reset(context)
            guard EVP_DecryptInit_ex(context, EVP_aes_128_ccm(), nil, nil, nil) == 1,
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(frame.nonce.count), nil) == 1,
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), &tag) == 1,
                  EVP_DecryptInit_ex(context, nil, nil, frame.key, frame.nonce) == 1,
                  EVP_DecryptUpdate(context, nil, &length, nil, Int32(frame.ciphertext.count)) == 1,
                  EVP_DecryptUpdate(context, nil, &length, associatedData, 1) == 1
            else { throw Failure(description: "EVP set-up failed") }
            if EVP_DecryptUpdate(context, &plaintext, &length, frame.ciphertext, Int32(frame.ciphertext.count)) == 1 { opened += 1 }
        }
        return opened
    }
}
