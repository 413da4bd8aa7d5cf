import AdapterKit
import Foundation
import FuzzSupport
import GATTHealthProfiles
import Transport

/// The characteristics a fuzz record can name (index = selector & 0x3F, modulo the count).
let characteristics: [UInt16] = [
    0x2A9D, 0x2A9C, 0x2A1C, 0x2A1E, 0x2A37, 0x2A53, 0x2A35, 0x2A36, 0x2A18, 0x2A34, 0x2A5E, 0x2A5F,
    0x2A1D, 0x2A38, 0x2A29, 0x2A24, 0x2A25, 0x2A27, 0x2A26, 0x2A28, 0x2A52,
]

/// libFuzzer target for the GATT health decoders and `GATTHealthSession`.
///
/// Input: byte 0 picks the time zone, then records `selector · gap · length · value`. The low six
/// bits of the selector pick the characteristic, the top two how the value came (notification,
/// indication, read, or a disconnection instead of a value). `gap` is the seconds since the
/// previous record (a day per unit from 0xF0 up). Every value also goes through every decoder.
func fuzzGATT(_ bytes: [UInt8]) {
    var input = FuzzBytes(bytes)
    let zone = fuzzTimeZone(input.byte())
    guard let address = BLEAddress("C8:47:8C:00:11:22") else { preconditionFailure("bad test address") }
    let session = GATTHealthSession(
        device: BLEDeviceTraits(address: address, name: "Fuzz"), context: AdapterContext(timeZone: zone, source: "gatt-health"))
    var output = AdapterOutput()
    var time = Date(timeIntervalSince1970: 1_736_931_600)
    while !input.isAtEnd {
        let selector = input.byte()
        let gap = input.byte()
        let value = input.chunk()
        time += gap >= 0xF0 ? Double(gap - 0xEF) * 86_400 : Double(gap)
        decodeEverywhere(value)
        let uuid = BLEUUID(characteristics[Int(selector & 0x3F) % characteristics.count])
        let kind: GATTValueKind
        switch selector >> 6 {
        case 0: kind = .notification
        case 1: kind = .indication
        case 2: kind = .read
        default:
            session.receive(.disconnected(BLEDisconnection(time: time, handle: 0x40, peerAddress: address, reason: 0x13)),
                            into: &output)
            continue
        }
        session.receive(.gattValue(GATTValue(
            time: time, connection: 0x40, peerAddress: address, serviceUUID: nil, characteristicUUID: uuid,
            handle: 0x0E, value: value, kind: kind)), into: &output)
    }
    session.finish(into: &output)
    checkRecords(output)
}

/// Runs every pure decoder on `value`; errors are fine, traps are not.
func decodeEverywhere(_ value: [UInt8]) {
    _ = try? WeightMeasurement(decoding: value)
    _ = try? BodyCompositionMeasurement(decoding: value)
    _ = try? TemperatureMeasurement(decoding: value)
    _ = try? HeartRateMeasurement(decoding: value)
    _ = try? RSCMeasurement(decoding: value)
    _ = try? BloodPressureMeasurement(decoding: value)
    _ = try? GlucoseMeasurement(decoding: value)
    _ = try? PLXSpotCheckMeasurement(decoding: value)
    _ = try? PLXContinuousMeasurement(decoding: value)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzGATT)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzGATT) }
}
#endif
