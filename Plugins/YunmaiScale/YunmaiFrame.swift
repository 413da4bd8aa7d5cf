import Foundation

/// Why bytes from a Yunmai scale are not a frame we can use. Each case carries the bytes.
public enum YunmaiFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not `0D …`, or shorter than the 5 bytes of the smallest frame.
    case notAFrame(bytes: [UInt8])
    /// The length byte disagrees with the bytes received.
    case lengthMismatch(declared: Int, bytes: [UInt8])
    /// The XOR of the bytes after the start byte is not the last byte.
    case badChecksum(computed: UInt8, bytes: [UInt8])
    /// A finished-weighing frame shorter than its layout (20 bytes).
    case shortResult(bytes: [UInt8])

    /// A short kebab-case reason for rejection counts.
    public var reason: String {
        switch self {
        case .notAFrame: "not-a-frame"
        case .lengthMismatch: "length-mismatch"
        case .badChecksum: "bad-checksum"
        case .shortResult: "short-frame"
        }
    }

    public var description: String {
        switch self {
        case .notAFrame(let bytes): "not a Yunmai frame: \(hex(bytes))"
        case .lengthMismatch(let declared, let bytes): "length byte says \(declared), \(bytes.count) bytes came: \(hex(bytes))"
        case .badChecksum(let computed, let bytes):
            "checksum 0x\(String(format: "%02x", bytes.last ?? 0)) should be 0x\(String(format: "%02x", computed)): \(hex(bytes))"
        case .shortResult(let bytes): "finished-weighing frame of \(bytes.count) bytes, the layout has 20: \(hex(bytes))"
        }
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

/// One notification of the scale's measurement characteristic (0xFFE4), checked.
///
/// Layout (big-endian numbers): `0D` · protocol version · total length (start and checksum
/// included) · type · data · checksum (XOR of every byte after `0D`). Type 0x01 is a weight still
/// settling; type 0x02 a finished weighing: history flag · time (Unix seconds, u32) · user id (u32)
/// · weight (u16, 0.01 kg) · resistance (u16, ohms) · body fat (u16, 0.01 %).
public struct YunmaiFrame: Hashable, Sendable {
    public var protocolVersion: UInt8
    public var type: UInt8
    public var bytes: [UInt8]

    /// Checks start byte, length and checksum.
    public init(_ bytes: [UInt8]) throws(YunmaiFrameError) {
        guard bytes.count >= 5, bytes[0] == 0x0D else { throw .notAFrame(bytes: bytes) }
        guard Int(bytes[2]) == bytes.count else { throw .lengthMismatch(declared: Int(bytes[2]), bytes: bytes) }
        let computed = YunmaiCommand.checksum(bytes[1..<(bytes.count - 1)])
        guard computed == bytes[bytes.count - 1] else { throw .badChecksum(computed: computed, bytes: bytes) }
        protocolVersion = bytes[1]
        type = bytes[3]
        self.bytes = bytes
    }

    /// Whether the frame is a finished weighing.
    public var isResult: Bool { type == 0x02 }

    /// The finished weighing this frame holds.
    public func result() throws(YunmaiFrameError) -> YunmaiResult {
        guard bytes.count >= 20 else { throw .shortResult(bytes: bytes) }
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
        func u32(_ offset: Int) -> UInt32 { UInt32(u16(offset)) << 16 | UInt32(u16(offset + 2)) }
        // Scales from protocol version 0x1E on compute body fat themselves; older ones leave it to the app.
        let fat = protocolVersion >= 0x1E ? u16(17) : 0
        return YunmaiResult(isHistory: bytes[4] != 0, time: u32(5), userID: u32(9), weightCentikilograms: u16(13),
                            resistanceOhms: u16(15), bodyFatCentipercent: fat > 0 ? fat : nil)
    }
}

/// A finished weighing.
public struct YunmaiResult: Hashable, Sendable {
    /// A stored reading sent again rather than the weighing just taken.
    public var isHistory: Bool
    /// The scale's clock (Unix seconds) when the weighing finished.
    public var time: UInt32
    /// The user the scale recognised.
    public var userID: UInt32
    public var weightCentikilograms: Int
    public var resistanceOhms: Int
    /// Body fat in 0.01 %, nil when the scale did not compute it.
    public var bodyFatCentipercent: Int?
}

/// The commands written to 0xFFE9: `0D` · total length · command · data · XOR checksum.
public enum YunmaiCommand {
    /// XOR of the bytes.
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt8 { bytes.reduce(0, ^) }

    /// Starts a measurement (`0D 05 13 00 16`).
    public static let startMeasurement: [UInt8] = [0x0D, 0x05, 0x13, 0x00, 0x16]

    /// The scale's user profile (command 0x10): user id, height, sex, age, unit kg.
    public static func user(id: UInt16, heightCentimetres: UInt8, isMale: Bool, age: UInt8) -> [UInt8] {
        var bytes: [UInt8] = [0x0D, 0x12, 0x10, 0x01, 0x00, 0x00, UInt8(id >> 8), UInt8(id & 0xFF), heightCentimetres,
                              isMale ? 0x01 : 0x02, age, 0x55, 0x5A, 0x00, 0x00, 0x01, 0x00]
        bytes.append(checksum(bytes.dropFirst()))
        return bytes
    }

    /// Sets the scale's clock (command 0x11) to `date` in Unix seconds.
    public static func setTime(_ date: Date) -> [UInt8] {
        let seconds = UInt32(clamping: Int64(date.timeIntervalSince1970.rounded(.down)))
        var bytes: [UInt8] = [0x0D, 0x0D, 0x11, UInt8(seconds >> 24), UInt8((seconds >> 16) & 0xFF),
                              UInt8((seconds >> 8) & 0xFF), UInt8(seconds & 0xFF), 0, 0, 0, 0, 0, 0]
        bytes.append(checksum(bytes.dropFirst()))
        return bytes
    }
}
