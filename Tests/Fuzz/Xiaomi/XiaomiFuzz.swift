import AdapterKit
import Foundation
import FuzzSupport
import Transport
import XiaomiScale

/// libFuzzer target for `MiScaleDecoder` and `XiaomiScaleSession`.
///
/// Input: byte 0 picks the time zone, then records `mode · gap · length · bytes`. Even modes put
/// the bytes as service data of the Mi Smart Scale (mode & 2 == 0) or Body Composition Scale
/// into an advertisement named like the scale; odd modes use the bytes as the raw advertising
/// data. Every payload also goes through both decoders directly.
func fuzzXiaomi(_ bytes: [UInt8]) {
    var input = FuzzBytes(bytes)
    let zone = fuzzTimeZone(input.byte())
    guard let address = BLEAddress("50:FB:19:1B:B5:DC") else { preconditionFailure("bad test address") }
    let session = XiaomiScaleSession(
        device: BLEDeviceTraits(address: address, name: "MISCA"), context: AdapterContext(timeZone: zone, source: "xiaomi-scale"))
    var output = AdapterOutput()
    var time = Date(timeIntervalSince1970: 1_736_931_600)
    while !input.isAtEnd {
        let mode = input.byte()
        time += Double(input.byte())
        let payload = input.chunk()
        for model in MiScaleModel.allCases {
            if let reading = try? MiScaleDecoder.decode(payload, model: model) {
                precondition(reading.weightKilograms.isFinite && reading.weightKilograms >= 0)
                _ = reading.clock.date(in: zone)
            }
        }
        let data: [UInt8]
        if mode & 1 == 0 {
            let model: MiScaleModel = mode & 2 == 0 ? .smartScale : .bodyCompositionScale
            let name = Array((model == .smartScale ? "MISCA" : "MIBFS").utf8)
            let serviceData = Array(payload.prefix(25))
            data = [0x02, 0x01, 0x06]
                + [UInt8(serviceData.count + 3), 0x16, UInt8(model.serviceUUID & 0xFF), UInt8(model.serviceUUID >> 8)]
                + serviceData
                + (mode & 4 == 0 ? [UInt8(name.count + 1), 0x09] + name : [])
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
    fuzzEntry(start, count, fuzzXiaomi)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzXiaomi) }
}
#endif
