import AdapterKit
import Foundation
import HealthModel
import QNScale
import TestSupport
import Testing
import Transport

/// The shared broadcast session, driven by the QN decoder over openScale's real FT-26R-W frames
/// (QNHandlerBroadcastFT26RTest.kt): what ends a reading, what repeats it, what is rejected.
@Suite("AdvertisedReadingSession")
struct AdvertisedReadingSessionTests {
    static let address = "00:00:5E:00:53:01"
    static let settled = "aabb00005e00530172000000ffffff1500761b510e032300"  // 70.30 kg
    static let settledAgain = "aabb00005e0053017b000000ffffff1500761b510e032300"  // 70.30 kg, another counter
    static let moving = "aabb00005e0053016d000000ffffff1400671b510e032100"
    static let idle = "aabb00005e00530100f09f6affffff15a00000510e03500f"

    func makeSession() throws -> AdvertisedReadingSession {
        let traits = BLEDeviceTraits(address: try #require(BLEAddress(Self.address)), companyIDs: [0xFFFF])
        let context = AdapterContext(timeZone: try #require(TimeZone(identifier: "Europe/Berlin")), source: QNScaleAdapter.id)
        return AdvertisedReadingSession(device: traits, context: context, decoder: QNBroadcastDecoder())
    }

    func feed(_ frames: [String], to session: AdvertisedReadingSession) throws -> AdapterOutput {
        var output = AdapterOutput()
        for (offset, frame) in frames.enumerated() {
            let advertisement = try makeAdvertisement(address: Self.address, manufacturer: (0xFFFF, hex(frame)),
                                                      time: Date(timeIntervalSince1970: 1_736_931_600 + Double(offset)))
            session.receive(.advertisement(advertisement), into: &output)
        }
        return output
    }

    @Test("The same settled weight again is one sample; after the load was removed it is a new weighing")
    func repeatsAndNewWeighings() throws {
        let output = try feed([Self.moving, Self.settled, Self.settledAgain, Self.idle, Self.settled], to: try makeSession())
        #expect(samples(output).map(\.quantity) == [Quantity(value: 70.3, unit: .kilogram), Quantity(value: 70.3, unit: .kilogram)])
        #expect(samples(output).map(\.start) == [Date(timeIntervalSince1970: 1_736_931_601), Date(timeIntervalSince1970: 1_736_931_604)])
        #expect(output.skipped == ["settling": 1, "repeated-reading": 1, "load-removed": 1])
        #expect(output.rejections.isEmpty)
        #expect(samples(output).first?.device == Device(manufacturer: "QN", localIdentifier: Self.address))
    }

    @Test("A settling frame between two settled frames of one weight makes the second a new reading")
    func settlingEndsAReading() throws {
        let output = try feed([Self.settled, Self.moving, Self.settledAgain], to: try makeSession())
        #expect(samples(output).count == 2)
    }

    @Test("Another vendor's 0xFFFF frame is skipped; an implausible weight is a rejection naming the value")
    func foreignAndImplausibleFrames() throws {
        let heavy = String(Self.settled.prefix(34)) + "ffff" + String(Self.settled.dropFirst(38))
        let output = try feed(["0102030405", heavy], to: try makeSession())
        #expect(samples(output).isEmpty)
        #expect(output.skipped == ["not-an-aabb-frame": 1])
        #expect(output.rejections.map(\.description)
            == ["qn-scale-broadcast: implausible-value: 00:00:5E:00:53:01: 655.35 kg is outside the plausible range of bodyMass"])
    }
}
