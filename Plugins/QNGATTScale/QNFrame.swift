import AdapterKit
import Foundation

/// The QN vendor protocol's frames (Renpho, FITINDEX, Arboleaf and other QN/Yolanda scales over
/// GATT): `opcode · length · protocol type · … · checksum`, the checksum the low byte of the sum
/// of the bytes before it. See README.md.
public enum QNFrame {
    /// The low byte of the sum of `bytes`.
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        UInt8(truncatingIfNeeded: bytes.reduce(0) { $0 + Int($1) })
    }

    /// `body` followed by its checksum.
    static func sealed(_ body: [UInt8]) -> [UInt8] { body + [checksum(body)] }

    /// The unit the scale shows.
    public enum DisplayUnit: UInt8, Sendable {
        case kilogram = 0x01
        case pound = 0x02
    }

    /// 0x13, the answer to the scale's information frame: the unit it shows.
    public static func configuration(protocolType: UInt8, unit: DisplayUnit) -> [UInt8] {
        sealed([0x13, 0x09, protocolType, unit.rawValue, 0x10, 0x00, 0x00, 0x00])
    }

    /// 0x20, the answer to the scale's ready frame: its clock, seconds since 2000-01-01 UTC (little-endian).
    public static func time(protocolType: UInt8, _ date: Date) -> [UInt8] {
        let seconds = UInt32(clamping: Int64(date.timeIntervalSince1970) - 946_684_800)
        return sealed([0x20, 0x08, protocolType, UInt8(seconds & 0xFF), UInt8(seconds >> 8 & 0xFF),
                       UInt8(seconds >> 16 & 0xFF), UInt8(seconds >> 24)])
    }

    /// 0xA2, the user's profile (age) the scale computes with.
    public static func userProfile(age: UInt8) -> [UInt8] {
        sealed([0xA2, 0x06, 0x01, 0x32, age])
    }

    /// The 0xA0 answers to the scale's configuration request (0x21): two for the ES-30M dialect
    /// (weights in tenths), one otherwise.
    public static func configurationAnswers(tenths: Bool) -> [[UInt8]] {
        tenths
            ? [sealed([0xA0, 0x0D, 0x04, 0xFE, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
               sealed([0xA0, 0x0D, 0x02, 0x01, 0x00, 0x08, 0x00, 0x21, 0x06, 0xB8, 0x04, 0x02])]
            : [sealed([0xA0, 0x0D, 0x02, 0xFE, 0xFF, 0xEE, 0x01, 0x1C, 0x06, 0x86, 0x03, 0x02])]
    }

    /// 0x22, start measuring (sent after the 0xA0 answers in the ES-30M dialect, after the
    /// scale's 0xA1 otherwise).
    public static func startMeasurement(protocolType: UInt8, tenths: Bool) -> [UInt8] {
        sealed([0x22, 0x06, protocolType, 0x00, tenths ? 0x03 : 0x01])
    }

    /// 0x1F, the acknowledgement of a stable weighing.
    public static func acknowledgement(protocolType: UInt8) -> [UInt8] {
        sealed([0x1F, 0x05, protocolType, 0x10])
    }

    /// A live weight frame (0x10).
    public struct Weight: Sendable, Equatable {
        /// The raw weight (hundredths or tenths of a kilogram, by the scale's factor).
        public var raw: UInt16
        public var stable: Bool
        /// The two resistances (Ω); 0 when not measured.
        public var resistance1: UInt16
        public var resistance2: UInt16

        /// Decodes a 0x10 frame: the ES-30M layout (state at 4, weight at 5…6, resistances at
        /// 7…10) when the scale counts tenths and byte 4 is a state (≤ 2), the original layout
        /// (weight at 3…4, stable flag at 5, resistances at 6…9) otherwise.
        public init(_ bytes: [UInt8], tenths: Bool) throws(QNFrameError) {
            try QNFrame.verify(bytes, minimumLength: 10)
            func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
            if tenths && bytes[4] <= 0x02 && bytes.count >= 12 {
                stable = bytes[4] == 0x02
                raw = u16(5)
                resistance1 = u16(7)
                resistance2 = u16(9)
            } else {
                stable = bytes[5] == 0x01
                raw = u16(3)
                resistance1 = u16(6)
                resistance2 = u16(8)
            }
        }

        /// The weight in kilograms: raw over the scale's factor, or over the other factor when
        /// only that gives a person's weight (5…250 kg), as the public decoders do.
        public func kilograms(tenths: Bool) -> Double {
            let primary = Double(raw) / (tenths ? 10 : 100)
            if primary > 5 && primary < 250 { return primary }
            let alternative = Double(raw) / (tenths ? 100 : 10)
            return alternative > 5 && alternative < 250 ? alternative : primary
        }

        /// The impedance the scale measured: the first resistance, else the second (0: none).
        public var impedance: UInt16 { resistance1 > 0 ? resistance1 : resistance2 }
    }

    /// Checks a frame's length byte and checksum.
    static func verify(_ bytes: [UInt8], minimumLength: Int) throws(QNFrameError) {
        guard bytes.count >= minimumLength, bytes.count >= 3 else { throw .tooShort(bytes: bytes) }
        let length = Int(bytes[1])
        guard length >= 3, length <= bytes.count else { throw .badLength(bytes: bytes) }
        guard checksum(bytes[0..<(length - 1)]) == bytes[length - 1] else { throw .badChecksum(bytes: bytes) }
    }
}

/// Why a frame of the scale could not be used; each case carries the bytes.
public enum QNFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(bytes: [UInt8])
    case badLength(bytes: [UInt8])
    case badChecksum(bytes: [UInt8])

    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .badLength: "bad-length"
        case .badChecksum: "bad-checksum"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let bytes): "frame too short: \(hexString(bytes))"
        case .badLength(let bytes): "length byte beyond the frame: \(hexString(bytes))"
        case .badChecksum(let bytes): "checksum does not match: \(hexString(bytes))"
        }
    }
}
