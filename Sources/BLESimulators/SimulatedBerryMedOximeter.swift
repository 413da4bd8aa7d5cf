import Foundation
import Transport

/// A simulated BerryMed BM1000C finger oximeter: the vendor UART service with the stream
/// characteristic notified. Once subscribed it sends its stream at once (the real oximeter sends
/// about 60 five-byte packets a second, four to a 20-byte notification): `noFingerPackets`
/// packets without a finger (SpO2 127, pulse 255), then `packets` packets of `saturation` %
/// and `pulse` /min in which every tenth is a glitch (80 %, 50 /min), then it closes the link.
public final class SimulatedBerryMedOximeter: SimulatedResponder {
    public static let service = BLEUUID(high: 0x4953_5343_FE7D_4AE5, low: 0x8FA9_9FAF_D205_E455)
    public static let stream = BLEUUID(high: 0x4953_5343_1E4D_4BD9, low: 0xBA61_23C6_4724_9616)
    public static let command = BLEUUID(high: 0x4953_5343_8841_43F4, low: 0xA8D4_ECBE_3472_9BB3)

    /// The oximeter's GATT table.
    public static let profile = SimulatedProfile(name: "BM1000C", services: [
        .init(uuid: service, characteristics: [
            .init(uuid: stream, properties: 0x10),
            .init(uuid: command, properties: 0x0C),
        ]),
    ])

    private let saturation: UInt8
    private let pulse: Int
    private let packets: Int
    private let noFingerPackets: Int

    public init(saturation: UInt8, pulse: Int, packets: Int, noFingerPackets: Int = 0) {
        self.saturation = saturation
        self.pulse = pulse
        self.packets = packets
        self.noFingerPackets = noFingerPackets
    }

    /// One packet (Plugins/BerryMedOximeter/README.md): header with signal strength 6, the
    /// plethysmogram, the bar graph / no-finger / pulse bit 7 byte, pulse bits 0–6, SpO2.
    public static func packet(saturation: UInt8, pulse: Int, pleth: UInt8, finger: Bool) -> [UInt8] {
        let third = UInt8(pleth / 8 & 0x0F) | (finger ? 0 : 0x10) | UInt8((pulse >> 7) & 1) << 6
        return [0x96, pleth & 0x7F, third, UInt8(pulse & 0x7F), saturation]
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] { [] }

    public func respond(toSubscriptionOf characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.stream else { return [] }
        var bytes: [UInt8] = []
        for index in 0..<noFingerPackets {
            bytes += Self.packet(saturation: 127, pulse: 255, pleth: UInt8(index % 100), finger: false)
        }
        for index in 0..<packets {
            let glitch = index % 10 == 9
            bytes += Self.packet(saturation: glitch ? 80 : saturation, pulse: glitch ? 50 : pulse,
                                 pleth: UInt8(index * 7 % 100), finger: true)
        }
        let chunks = stride(from: 0, to: bytes.count, by: 20).map { Array(bytes[$0..<min($0 + 20, bytes.count)]) }
        return chunks.enumerated().map { index, chunk in
            SimulatedReply(characteristic: Self.stream, value: chunk, closesLink: index == chunks.count - 1)
        }
    }
}
