import Transport

/// BTHome v2 encryption (AES-128-CCM, 4-byte MIC, no associated data; facts from
/// Bluetooth-Devices/bthome-ble `bthome_v2_encryption.py` and `parser.py`).
///
/// The encrypted part of the service data (after the device info byte and the MAC, if any) is
/// ciphertext · counter (4, little-endian) · MIC (4). The 13-byte nonce is the device's MAC (most
/// significant byte first) · the UUID as sent (D2 FC) · the device info byte · the counter bytes.
public enum BTHomeEncryption {
    /// The counter, ciphertext, MIC and nonce of an encrypted packet; nil when the encrypted part
    /// is too short to hold a counter, a MIC and at least one object byte.
    public static func parts(of packet: BTHomePacket, device: BLEAddress)
        -> (counter: UInt32, ciphertext: ArraySlice<UInt8>, mic: ArraySlice<UInt8>, nonce: [UInt8])?
    {
        guard let sealed = packet.encryptedPayload, sealed.count >= 9 else { return nil }
        let end = sealed.count
        let counterBytes = sealed[(end - 8)..<(end - 4)]
        let counter = counterBytes.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let nonce = (packet.macAddress ?? device).bytes + [0xD2, 0xFC, packet.deviceInfo.rawValue] + counterBytes
        return (counter, sealed[..<(end - 8)], sealed[(end - 4)...], nonce)
    }

    /// The clear service data a decrypted packet stands for: the device info byte without its
    /// encryption and MAC bits, then the decrypted objects (decoded by ``BTHomeDecoder/decode(_:)``).
    public static func clearServiceData(deviceInfo: BTHomeDeviceInfo, plaintext: [UInt8]) -> [UInt8] {
        [deviceInfo.rawValue & ~0x03] + plaintext
    }
}
