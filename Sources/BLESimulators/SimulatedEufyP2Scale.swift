import AdvertisementCrypto
import Foundation
import Synchronization
import Transport

/// A simulated Eufy Smart Scale P2 Pro (T9149): service 0xFFF0 with 0xFFF1 (write), 0xFFF2
/// (weight, notify) and 0xFFF4 (handshake, notify). It answers the client's id (C0 frames,
/// decrypted under the MD5 of its address) with its own (C1), checks the C2 frames hold
/// `<client id>_<its id>` and answers C3 with status 0 (or 1 when they do not), then notifies
/// `weightFrames`. It keeps no memory to erase.
public final class SimulatedEufyP2Scale: SimulatedResponder {
    public static let write = BLEUUID(0xFFF1)
    public static let weight = BLEUUID(0xFFF2)
    public static let handshake = BLEUUID(0xFFF4)

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "eufy T9149", services: [
        .init(uuid: BLEUUID(0xFFF0), characteristics: [
            .init(uuid: write, properties: 0x0C),
            .init(uuid: weight, properties: 0x10),
            .init(uuid: handshake, properties: 0x10),
        ]),
    ])

    private static let iv = [UInt8](repeating: 0x30, count: 16)

    private struct State {
        var pending: [UInt8: [UInt8]] = [:]
        var clientID: String?
        var accepted: Bool?
        var writes: [[UInt8]] = []
    }
    private let state = Mutex(State())
    private let key: [UInt8]
    private let scaleID: String
    private let weightFrames: [[UInt8]]

    /// A scale at `address` (its key) calling itself `scaleID`, sending `weightFrames` once it accepted the handshake.
    public init(address: BLEAddress, scaleID: String = "0c3f9a71d2e8b44", weightFrames: [[UInt8]]) throws {
        key = try AESCBC.md5(Array(address.description.replacingOccurrences(of: ":", with: "").uppercased().utf8))
        self.scaleID = scaleID
        self.weightFrames = weightFrames
    }

    /// Whether the scale accepted the handshake (nil before C2 came whole).
    public var accepted: Bool? { state.withLock { $0.accepted } }

    /// The client's id it decrypted from C0.
    public var clientID: String? { state.withLock { $0.clientID } }

    /// Everything written to 0xFFF1, in order.
    public var writes: [[UInt8]] { state.withLock { $0.writes } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.write, value.count >= 5 else { return [] }
        let prefix = value[0], count = Int(value[1]), index = Int(value[2])
        let whole: [UInt8]? = state.withLock { state in
            state.writes.append(value)
            if index == 0 { state.pending[prefix] = [] }
            state.pending[prefix, default: []] += value[4..<(value.count - 1)]
            return index + 1 == count ? state.pending.removeValue(forKey: prefix) : nil
        }
        guard let whole, let text = open(whole) else { return [] }
        switch prefix {
        case 0xC0:
            state.withLock { $0.clientID = text }
            return frames(scaleID, prefix: 0xC1).map { SimulatedReply(characteristic: Self.handshake, value: $0) }
        case 0xC2:
            let ok = state.withLock { state -> Bool in
                let ok = state.clientID.map { text == "\($0)_\(scaleID)" } ?? false
                state.accepted = ok
                return ok
            }
            let verdict: [UInt8] = [0xC3, 0x01, 0x00, 0x01, ok ? 0x00 : 0x01]
            var replies = [SimulatedReply(characteristic: Self.handshake, value: verdict + [verdict.reduce(0, ^)])]
            if ok { replies += weightFrames.map { SimulatedReply(characteristic: Self.weight, value: $0) } }
            return replies
        default:
            return []
        }
    }

    private func open(_ ascii: [UInt8]) -> String? {
        guard let encrypted = Data(base64Encoded: Data(ascii)), let cipher = try? AESCBC(),
              let plain = try? cipher.decrypt(key: key, iv: Self.iv, ciphertext: Array(encrypted)) else { return nil }
        return String(bytes: plain, encoding: .utf8)
    }

    private func frames(_ text: String, prefix: UInt8) -> [[UInt8]] {
        guard let cipher = try? AESCBC(), let encrypted = try? cipher.encrypt(key: key, iv: Self.iv, plaintext: Array(text.utf8))
        else { return [] }
        let ascii = Array(Data(encrypted).base64EncodedString().utf8)
        let count = (ascii.count + 14) / 15
        return (0..<count).map { index in
            let body = [prefix, UInt8(count), UInt8(index), UInt8(truncatingIfNeeded: ascii.count)]
                + ascii[(index * 15)..<min(ascii.count, (index + 1) * 15)]
            return body + [body.reduce(0, ^)]
        }
    }
}
