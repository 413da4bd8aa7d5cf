import AdapterKit
import Transport

/// One MiBeacon frame (service data 0xFE95, the UUID bytes removed), its header read.
///
/// Layout: frame control (2, little-endian) · product id (2) · frame counter (1) · [the device's
/// MAC, 6 bytes least significant first, if bit 4] · [capability (1), and an I/O byte if its bit
/// 5, if bit 5] · the objects if bit 6: in clear, or, when bit 3 says encrypted (v4/v5), the
/// ciphertext · an extended frame counter (3) · the MIC (4). Frame control: bit 3 encrypted,
/// bit 4 MAC included, bit 5 capability included, bit 6 object included, bit 7 mesh, bits 12-15
/// the version. (Facts from Bluetooth-Devices/xiaomi-ble `parser.py`, `_parse_xiaomi`.)
public struct MiBeaconFrame: Sendable, Hashable {
    public var frameControl: UInt16
    public var productID: UInt16
    /// The frame counter byte (offset 4).
    public var frameCounter: UInt8
    /// The MAC the frame carries, if any (bit 4).
    public var macAddress: BLEAddress?
    /// Where the objects (or their ciphertext) start.
    public var objectOffset: Int
    /// The whole service data.
    public var bytes: [UInt8]

    public var version: Int { Int(frameControl >> 12) }
    public var isEncrypted: Bool { frameControl & 0x0008 != 0 }
    public var hasObjects: Bool { frameControl & 0x0040 != 0 }

    /// For an encrypted v4/v5 frame: the 32-bit counter (the extended counter's 3 bytes above the
    /// frame counter byte), which the device never repeats for new data.
    public var extendedCounter: UInt32? {
        guard isEncrypted, version >= 4, bytes.count >= objectOffset + 7 else { return nil }
        let end = bytes.count
        return UInt32(frameCounter) | UInt32(bytes[end - 7]) << 8 | UInt32(bytes[end - 6]) << 16 | UInt32(bytes[end - 5]) << 24
    }
}

/// Why MiBeacon service data cannot be read. Each case names the bytes.
public enum MiBeaconError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooShort(field: String, offset: Int, bytes: [UInt8])
    /// Versions 0 and 1 predate the layout read here.
    case unsupportedVersion(Int, bytes: [UInt8])
    /// Mesh frames (bit 7) have another layout.
    case mesh(bytes: [UInt8])
    /// v2/v3 encryption has no MIC: a wrong key yields garbage nobody can tell from data, so such frames are not read.
    case legacyEncryption(version: Int, bytes: [UInt8])
    /// The MAC in the frame is not the advertiser's.
    case macMismatch(frame: BLEAddress, advertiser: BLEAddress)
    /// An object's length runs past the end of the (decrypted) object data.
    case truncatedObject(id: UInt16, offset: Int, needed: Int, available: Int, objects: [UInt8])

    /// A short stable key for rejection counts.
    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .unsupportedVersion: "unsupported-version"
        case .mesh: "mesh-frame"
        case .legacyEncryption: "legacy-encryption"
        case .macMismatch: "mac-mismatch"
        case .truncatedObject: "truncated-object"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let field, let offset, let bytes):
            "MiBeacon data of \(bytes.count) bytes ends before \(field) at offset \(offset): \(hexString(bytes))"
        case .unsupportedVersion(let version, let bytes):
            "MiBeacon version \(version) (frame control bits 12-15) is older than 2: \(hexString(bytes))"
        case .mesh(let bytes): "a MiBeacon mesh frame (frame control bit 7) is not read: \(hexString(bytes))"
        case .legacyEncryption(let version, let bytes):
            "MiBeacon v\(version) encryption carries no MIC, so a decryption cannot be checked; not read: \(hexString(bytes))"
        case .macMismatch(let frame, let advertiser):
            "the frame names MAC \(frame) but was sent by \(advertiser)"
        case .truncatedObject(let id, let offset, let needed, let available, let objects):
            String(format: "object 0x%04x at offset %d needs %d bytes, %d remain: ", id, offset, needed, available) + hexString(objects)
        }
    }
}

/// One MiBeacon object: a 16-bit id and its value bytes.
public struct MiBeaconObject: Sendable, Hashable {
    public var id: UInt16
    public var value: [UInt8]
}

/// The pure MiBeacon decoder: the header, the v4/v5 nonce, and the object list.
public enum MiBeaconDecoder {
    /// The service-data UUID of MiBeacon.
    public static let serviceUUID = BLEUUID(0xFE95)
    /// The associated data of v4/v5 encryption.
    public static let associatedData: [UInt8] = [0x11]

    /// Reads the header of `serviceData` sent by `advertiser`.
    public static func frame(_ serviceData: [UInt8], advertiser: BLEAddress) throws(MiBeaconError) -> MiBeaconFrame {
        let bytes = serviceData
        guard bytes.count >= 5 else { throw .tooShort(field: "the frame counter", offset: bytes.count, bytes: bytes) }
        let control = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        var frame = MiBeaconFrame(frameControl: control, productID: UInt16(bytes[2]) | UInt16(bytes[3]) << 8,
                                  frameCounter: bytes[4], macAddress: nil, objectOffset: 5, bytes: bytes)
        if control & 0x0080 != 0 { throw .mesh(bytes: bytes) }
        guard frame.version >= 2 else { throw .unsupportedVersion(frame.version, bytes: bytes) }
        var offset = 5
        if control & 0x0010 != 0 {
            guard bytes.count >= offset + 6 else { throw .tooShort(field: "the MAC", offset: offset, bytes: bytes) }
            let mac = BLEAddress(littleEndianBytes: bytes[offset..<(offset + 6)])
            if let mac, mac != advertiser { throw .macMismatch(frame: mac, advertiser: advertiser) }
            frame.macAddress = mac
            offset += 6
        }
        if control & 0x0020 != 0 {
            guard bytes.count > offset else { throw .tooShort(field: "the capability", offset: offset, bytes: bytes) }
            let capability = bytes[offset]
            offset += 1
            if capability & 0x20 != 0 {
                guard bytes.count > offset else { throw .tooShort(field: "the I/O capability", offset: offset, bytes: bytes) }
                offset += 1
            }
        }
        frame.objectOffset = offset
        guard frame.hasObjects else { return frame }
        if frame.isEncrypted {
            if frame.version <= 3 { throw .legacyEncryption(version: frame.version, bytes: bytes) }
            // At least one object header's worth of ciphertext, the extended counter and the MIC.
            guard bytes.count >= offset + 3 + 7 else {
                throw .tooShort(field: "the extended counter and MIC", offset: offset, bytes: bytes)
            }
        } else if bytes.count < offset + 3 {
            throw .tooShort(field: "the first object", offset: offset, bytes: bytes)
        }
        return frame
    }

    /// The 12-byte nonce of an encrypted v4/v5 frame: the device's MAC (least significant byte
    /// first), product id and frame counter (offsets 2-4), the extended counter.
    public static func nonce(of frame: MiBeaconFrame, device: BLEAddress) -> [UInt8] {
        let end = frame.bytes.count
        return (frame.macAddress ?? device).littleEndianBytes + frame.bytes[2..<5] + frame.bytes[(end - 7)..<(end - 4)]
    }

    /// The ciphertext and MIC of an encrypted v4/v5 frame.
    public static func sealed(_ frame: MiBeaconFrame) -> (ciphertext: ArraySlice<UInt8>, mic: ArraySlice<UInt8>) {
        let end = frame.bytes.count
        return (frame.bytes[frame.objectOffset..<(end - 7)], frame.bytes[(end - 4)..<end])
    }

    /// The objects of clear object data (an unencrypted frame's tail, or a decrypted payload).
    public static func objects(_ data: some Collection<UInt8>) throws(MiBeaconError) -> [MiBeaconObject] {
        let bytes = Array(data)
        var objects: [MiBeaconObject] = []
        var offset = 0
        while offset + 3 <= bytes.count {
            let id = UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
            let length = Int(bytes[offset + 2])
            let start = offset + 3
            guard start + length <= bytes.count else {
                throw .truncatedObject(id: id, offset: offset, needed: length, available: bytes.count - start, objects: bytes)
            }
            objects.append(MiBeaconObject(id: id, value: Array(bytes[start..<(start + length)])))
            offset = start + length
        }
        return objects
    }
}
