import AdapterKit
import AdvertisementCrypto
import Foundation
import FuzzSupport
import Transport
import XiaomiMiBeacon

/// libFuzzer target for `MiBeaconDecoder` and `XiaomiMiBeaconSession`.
///
/// Input: byte 0 picks the time zone, then records `mode · gap · length · bytes`. Mode bit 0:
/// the bytes are the raw advertising data instead of 0xFE95 service data. Mode bit 1: the bytes
/// after the first two are an S400 frame's plaintext (product byte 2-3 kept from the input),
/// sealed with the device's key as a scale would, so that the decrypted object list is fuzzed too.
func fuzzMiBeacon(_ bytes: [UInt8]) {
    var input = FuzzBytes(bytes)
    let zone = fuzzTimeZone(input.byte())
    guard let address = BLEAddress("8C:D0:B2:F6:BE:EF"),
          let key = try? AdvertisementKey(hex: "0728974d657a4b60964c1b1677f35f7c"),
          let cipher = try? AESCCM() else { preconditionFailure("bad fixed inputs") }
    let session = XiaomiMiBeaconSession(
        device: BLEDeviceTraits(address: address),
        context: AdapterContext(timeZone: zone, source: "xiaomi-mibeacon", keys: AdvertisementKeys([address: key])))
    var output = AdapterOutput()
    var time = Date(timeIntervalSince1970: 1_736_931_600)
    var counter: UInt32 = 0
    while !input.isAtEnd {
        let mode = input.byte()
        time += Double(input.byte())
        let payload = input.chunk()
        if let frame = try? MiBeaconDecoder.frame(payload, advertiser: address) {
            precondition(frame.objectOffset <= payload.count, "object offset beyond the data")
            _ = frame.extendedCounter
            _ = try? MiBeaconDecoder.objects(payload[frame.objectOffset...])
        }
        var serviceData = Array(payload.prefix(24))
        if mode & 2 != 0 {
            counter &+= 1
            let product: [UInt8] = payload.count >= 2 ? [payload[0], payload[1]] : [0xD5, 0x3B]
            let header: [UInt8] = [0x48, 0x59] + product + [UInt8(truncatingIfNeeded: counter)]
            let extended = [UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter >> 16), 0]
            let nonce = address.littleEndianBytes + header[2..<5] + extended
            let plaintext = Array(payload.dropFirst(2).prefix(12))
            if let sealed = try? cipher.seal(key: key.bytes, nonce: nonce, plaintext: plaintext, associatedData: [0x11]) {
                serviceData = header + sealed.ciphertext + extended + sealed.tag
            }
        }
        let data = mode & 1 == 0 ? [0x02, 0x01, 0x06, UInt8(serviceData.count + 3), 0x16, 0x95, 0xFE] + serviceData : payload
        session.receive(.advertisement(BLEAdvertisement(
            time: time, address: address, addressType: .public, eventType: .advInd, rssi: -60, data: data)),
            into: &output)
    }
    session.finish(into: &output)
    checkRecords(output)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzMiBeacon)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzMiBeacon) }
}
#endif
