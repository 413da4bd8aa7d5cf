import AdapterKit
import AdvertisementCrypto
import Foundation
import Transport

/// The P2 family's handshake messages (see README.md): a message is AES-128-CBC under the MD5 of
/// the scale's address (12 upper-case hex digits, no colons), IV the 16 ASCII characters "0",
/// PKCS#7 padding, then base64; its ASCII is cut into frames of at most 15 bytes,
/// `<prefix> <frame count> <index> <total length> <up to 15 bytes> <XOR of the bytes before>`.
/// C0 carries the client's id, C1 the scale's, C2 `<client id>_<scale id>`; C3 `C3 01 00 01
/// <status>` ends it (status 0: accepted).
public enum EufyP2Handshake {
    /// The IV: sixteen ASCII "0" (0x30), not zero bytes.
    public static let iv = [UInt8](repeating: 0x30, count: 16)
    /// Bytes of base64 text per frame.
    public static let bytesPerFrame = 15
    /// The longest message a frame header can announce (its total length is one byte).
    public static let maximumMessageLength = 255

    public static let clientID: UInt8 = 0xC0
    public static let scaleID: UInt8 = 0xC1
    public static let combinedIDs: UInt8 = 0xC2
    public static let result: UInt8 = 0xC3

    /// The AES key of the scale at `address`.
    public static func key(for address: BLEAddress) throws(AESCBCError) -> [UInt8] {
        try AESCBC.md5(Array(address.description.replacingOccurrences(of: ":", with: "").uppercased().utf8))
    }

    /// `text` encrypted and base64-encoded, in frames with `prefix`.
    public static func frames(_ text: String, prefix: UInt8, key: [UInt8], cipher: AESCBC) throws(AESCBCError) -> [[UInt8]] {
        let encrypted = try cipher.encrypt(key: key, iv: iv, plaintext: Array(text.utf8))
        let ascii = Array(Data(encrypted).base64EncodedString().utf8)
        let count = (ascii.count + bytesPerFrame - 1) / bytesPerFrame
        return (0..<count).map { index in
            let body = [prefix, UInt8(count), UInt8(index), UInt8(truncatingIfNeeded: ascii.count)]
                + ascii[(index * bytesPerFrame)..<min(ascii.count, (index + 1) * bytesPerFrame)]
            return body + [xor(body)]
        }
    }

    /// The XOR of `bytes`.
    public static func xor<C: Collection<UInt8>>(_ bytes: C) -> UInt8 { bytes.reduce(0, ^) }

    /// Collects the frames of one message with `prefix`, in order; the text once whole.
    public struct Reassembly: Sendable {
        public let prefix: UInt8
        private var ascii: [UInt8] = []
        private var expectedFrames = 0
        private var announcedLength = 0
        private var nextIndex = 0

        public init(prefix: UInt8) { self.prefix = prefix }

        /// Takes one frame: nil while more are to come, the whole message's base64 text once the last came.
        public mutating func take(_ frame: [UInt8]) throws(EufyP2Error) -> [UInt8]? {
            guard frame.count >= 5, frame[0] == prefix else { throw .badFrame(frame) }
            guard xor(frame.dropLast()) == frame[frame.count - 1] else { throw .badChecksum(frame) }
            let count = Int(frame[1]), index = Int(frame[2])
            if index == 0 {
                ascii = []
                expectedFrames = count
                announcedLength = Int(frame[3])
                nextIndex = 0
            }
            guard count > 0, index == nextIndex, count == expectedFrames else { throw .outOfOrder(frame) }
            ascii += frame[4..<(frame.count - 1)]
            guard ascii.count <= maximumMessageLength else { throw .badFrame(frame) }
            nextIndex += 1
            guard nextIndex == expectedFrames else { return nil }
            guard ascii.count == announcedLength else { throw .lengthMismatch(announced: announcedLength, got: ascii.count) }
            return ascii
        }
    }

    /// The text of a whole message's base64 `ascii`, nil when it does not decode and decrypt under `key`.
    public static func open(_ ascii: [UInt8], key: [UInt8], cipher: AESCBC) throws(AESCBCError) -> String? {
        guard let encrypted = Data(base64Encoded: Data(ascii)),
              let plain = try cipher.decrypt(key: key, iv: iv, ciphertext: Array(encrypted)) else { return nil }
        return String(bytes: plain, encoding: .utf8)
    }
}

/// One weight frame of characteristic 0xFFF2 (16 bytes, real P2 Pro frames in the captures' ORIGIN):
/// `CF 0E 00 CF`, impedance at 4–5 (little-endian, 0.1 Ω; 0 when none was measured), weight at
/// 6–7 (little-endian, 0.01 kg), 0x00 at 12 when final, the XOR of bytes 2–14 at 15.
public struct EufyP2Weight: Equatable, Sendable {
    /// Weight in kilograms.
    public var kilograms: Double
    /// Impedance in ohms, nil when the scale measured none (shoes, socks, an object).
    public var impedanceOhms: Double?
    /// Whether the scale has settled on this weight.
    public var isFinal: Bool

    public init(kilograms: Double, impedanceOhms: Double?, isFinal: Bool) {
        self.kilograms = kilograms
        self.impedanceOhms = impedanceOhms
        self.isFinal = isFinal
    }

    /// Decodes a frame; a wrong length, signature or XOR is an error carrying the frame.
    public init(_ frame: [UInt8]) throws(EufyP2Error) {
        guard frame.count == 16, frame[0] == 0xCF, frame[1] == 0x0E, frame[2] == 0x00, frame[3] == 0xCF else {
            throw .badFrame(frame)
        }
        guard EufyP2Handshake.xor(frame[2...14]) == frame[15] else { throw .badChecksum(frame) }
        let impedance = Int(frame[4]) | Int(frame[5]) << 8
        kilograms = Double(Int(frame[6]) | Int(frame[7]) << 8) / 100
        impedanceOhms = impedance == 0 ? nil : Double(impedance) / 10
        isFinal = frame[12] == 0x00
    }
}

/// A frame of the P2 family the adapter cannot use; each carries the frame.
public enum EufyP2Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not the frame expected here (prefix, length, signature bytes).
    case badFrame([UInt8])
    /// Its XOR byte does not match.
    case badChecksum([UInt8])
    /// A handshake frame out of order (index or frame count).
    case outOfOrder([UInt8])
    /// The whole message is not as long as its first frame announced.
    case lengthMismatch(announced: Int, got: Int)

    public var reason: String {
        switch self {
        case .badFrame: "bad-frame"
        case .badChecksum: "bad-checksum"
        case .outOfOrder: "frame-out-of-order"
        case .lengthMismatch: "length-mismatch"
        }
    }

    public var description: String {
        switch self {
        case .badFrame(let bytes): "not a frame of this kind: \(hexString(bytes))"
        case .badChecksum(let bytes): "XOR check does not match: \(hexString(bytes))"
        case .outOfOrder(let bytes): "handshake frame out of order: \(hexString(bytes))"
        case .lengthMismatch(let announced, let got): "handshake message of \(got) bytes, \(announced) announced"
        }
    }
}
