import AdapterKit
import BTHome
import Foundation
import FuzzSupport
import Transport

/// libFuzzer target for `BTHomeDecoder` and `BTHomeSession`.
///
/// Input: byte 0 picks the time zone, then records `mode · gap · length · bytes`. Even modes put
/// the bytes as 0xFCD2 service data into an advertisement; odd modes use them as the raw
/// advertising data. Every payload also goes through the decoder directly.
func fuzzBTHome(_ bytes: [UInt8]) {
    var input = FuzzBytes(bytes)
    let zone = fuzzTimeZone(input.byte())
    guard let address = BLEAddress("A4:C1:38:8D:18:B2") else { preconditionFailure("bad test address") }
    let session = BTHomeSession(
        device: BLEDeviceTraits(address: address, name: "ATC_8D18B2"), context: AdapterContext(timeZone: zone, source: "bthome"))
    var output = AdapterOutput()
    var time = Date(timeIntervalSince1970: 1_736_931_600)
    while !input.isAtEnd {
        let mode = input.byte()
        time += Double(input.byte())
        let payload = input.chunk()
        if let packet = try? BTHomeDecoder.decode(payload) {
            for object in packet.objects {
                _ = object.value
                _ = object.text
                precondition(object.offset < payload.count, "object offset beyond the data")
            }
            _ = try? BTHomeDecoder.decodeStrictly(payload)
        }
        let data: [UInt8]
        if mode & 1 == 0 {
            let serviceData = Array(payload.prefix(26))
            data = [0x02, 0x01, 0x06, UInt8(serviceData.count + 3), 0x16, 0xD2, 0xFC] + serviceData
        } else {
            data = payload
        }
        session.receive(.advertisement(BLEAdvertisement(
            time: time, address: address, addressType: .public, eventType: .advInd, rssi: -60, data: data)),
            into: &output)
    }
    session.finish(into: &output)
    checkRecords(output)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzBTHome)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzBTHome) }
}
#endif
