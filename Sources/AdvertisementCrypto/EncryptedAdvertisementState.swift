import AdapterKit
import Foundation
import Transport

/// What a session keeps about one device's encrypted advertisements (MiBeacon v4/v5, BTHome v2),
/// and the one way such a frame is opened (``open(counter:nonce:ciphertext:mic:associatedData:time:into:)``):
/// the device's key (looked up once), the last frame counter accepted, and the frames it could not
/// decode, counted by problem and explained once with the remedy.
///
/// The counter rules: the same counter again is a rebroadcast of the same reading (a duplicate,
/// skipped before any decryption); a lower one, after its MIC checked, is an old frame sent again
/// (replayed) and refused, unless it is below 100 while the last was at least 100 more: the device
/// started over (a battery change), as BTHome's reference decoder allows.
public struct EncryptedAdvertisementState {
    /// Why an encrypted frame was not decoded.
    public enum Refusal: Sendable, Hashable {
        /// No key for the device.
        case noKey
        /// The key does not authenticate the frame (its MIC).
        case micMismatch
        /// The frame's counter is older than one already accepted.
        case replayedCounter(counter: UInt32, last: UInt32)

        /// The short stable reason key of the rejection.
        public var reason: String {
            switch self {
            case .noKey: "no-key"
            case .micMismatch: "mic-mismatch"
            case .replayedCounter: "replayed-counter"
            }
        }
    }

    public let address: BLEAddress
    /// The sample source (the adapter id), for the rejections.
    public let source: String
    /// The protocol's name in explanations ("MiBeacon", "BTHome").
    public let protocolName: String
    /// What to call the device in explanations ("the scale", "the device").
    public let deviceWord: String
    public private(set) var lastCounter: UInt32?
    private var explained: Set<String> = []
    private var refused: [String: Int] = [:]
    private let keys: AdvertisementKeys
    private var key: AdvertisementKey??
    private var cipher: AESCCM?

    public init(address: BLEAddress, source: String, keys: AdvertisementKeys, protocolName: String,
                deviceWord: String = "the device") {
        self.address = address
        self.source = source
        self.keys = keys
        self.protocolName = protocolName
        self.deviceWord = deviceWord
    }

    /// The plaintext of an authentic, new frame; nil when the frame repeats the last counter
    /// (skipped as `repeatReason`), or has no key, fails its MIC or replays an older counter
    /// (each counted as a rejection and explained once).
    public mutating func open(counter: UInt32, nonce: [UInt8], ciphertext: ArraySlice<UInt8>, mic: ArraySlice<UInt8>,
                              associatedData: [UInt8] = [], repeatReason: String = "repeated-frame-counter", time: Date,
                              into output: inout AdapterOutput) -> [UInt8]? {
        if isRepeat(counter) {
            // A device repeats each frame many times: the same counter is the same reading.
            output.skip(repeatReason)
            return nil
        }
        if key == nil { key = .some(keys.key(for: address)) }
        guard let key = key ?? nil else {
            refuse(.noKey, time: time, into: &output)
            return nil
        }
        let plaintext: [UInt8]?
        do {
            if cipher == nil { cipher = try AESCCM() }
            plaintext = try cipher?.open(key: key.bytes, nonce: nonce, ciphertext: ciphertext, tag: mic, associatedData: associatedData)
        } catch {
            output.reject(source, reason: "decryption-failed", detail: "\(address): \(error.description)", time: time)
            return nil
        }
        guard let plaintext else {
            refuse(.micMismatch, time: time, into: &output)
            return nil
        }
        if isReplay(counter) {
            refuse(.replayedCounter(counter: counter, last: lastCounter ?? 0), time: time, into: &output)
            return nil
        }
        accept(counter)
        return plaintext
    }

    /// Whether `counter` is the last accepted one (a rebroadcast).
    public func isRepeat(_ counter: UInt32) -> Bool { counter == lastCounter }

    /// Whether an authentic frame with `counter` is an old one sent again.
    public func isReplay(_ counter: UInt32) -> Bool {
        guard let last = lastCounter, counter < last else { return false }
        return !(counter < 100 && last >= counter + 100)
    }

    /// Takes `counter` as the device's latest.
    public mutating func accept(_ counter: UInt32) { lastCounter = counter }

    /// Counts a frame not decoded as a rejection and explains the problem the first time this device has it.
    public mutating func refuse(_ refusal: Refusal, time: Date, into output: inout AdapterOutput) {
        output.reject(source, reason: refusal.reason, detail: "\(address): encrypted \(protocolName) frame not decoded", time: time,
                      isExplained: true)
        refused[refusal.reason, default: 0] += 1
        guard explained.insert(refusal.reason).inserted else { return }
        switch refusal {
        case .noKey:
            output.explain("no key for \(address): `ingestd keys add \(address) HEX` with \(deviceWord)'s 32-digit key "
                + "(its bindkey), or --key \(address)=HEX; its encrypted \(protocolName) frames are not decoded until then")
        case .micMismatch:
            output.explain("key for \(address) does not decrypt its \(protocolName) frames (MIC mismatch): \(deviceWord) may have "
                + "a new key after a reset or re-pairing; get it again and `ingestd keys add \(address) HEX`")
        case .replayedCounter(let counter, let last):
            output.explain("\(address) sent \(protocolName) frame counter \(counter) after \(last): an old frame sent again "
                + "(replayed), not decoded")
        }
    }

    /// Says, per problem, how many of the device's frames were not decoded (at the end of a capture or on shutdown).
    public mutating func finish(into output: inout AdapterOutput) {
        for (reason, count) in refused.sorted(by: { $0.key < $1.key }) {
            output.explain("\(address): \(count) encrypted \(protocolName) frame\(count == 1 ? "" : "s") not decoded (\(reason))")
        }
        refused = [:]
    }
}
