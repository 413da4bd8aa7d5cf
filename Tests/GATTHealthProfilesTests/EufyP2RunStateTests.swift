import AdapterKit
import EufyP2Scale
import Foundation
import HealthModel
import Testing
import TestSupport
import Transport

/// The P2 family's memory of recent weighings belongs to one run, not to the adapter.
struct EufyP2RunStateTests {
    /// The P2 Pro's advertised frame of a settled 87.90 kg weighing (0x2256 at 9-10, byte 15 = 0: final).
    /// ORIGIN: built to the 19-byte layout of bdr99/eufylife-ble-client (client.py) and ble-scale-sync
    /// (src/scales/eufy-p2.ts) under company 0xFF48; no public test holds a real advertised frame. The
    /// weight is that of ble-scale-sync's real P2 Pro frame (tests/scales/eufy-p2.test.ts, issue #289).
    private func advertised(_ address: String, at time: Date) throws -> TransportEvent {
        var frame = [UInt8](repeating: 0, count: 19)
        let parts = address.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        frame.replaceSubrange(0..<6, with: parts)
        frame[6] = 0xCF
        frame[9] = 0x56
        frame[10] = 0x22
        return .advertisement(try makeAdvertisement(address: address, name: "eufy T9149", manufacturer: (0xFF48, frame), time: time))
    }

    private func syncIdentifiers(_ adapter: EufyP2ScaleAdapter, run: AdapterRunState, address: String, at time: Date) throws -> [String] {
        let event = try advertised(address, at: time)
        guard case .advertisement(let advertisement) = event else { return [] }
        var traits = BLEDeviceTraits(address: advertisement.address)
        _ = traits.absorb(advertisement)
        let session = adapter.makeSession(
            for: traits, context: AdapterContext(timeZone: try #require(TimeZone(identifier: "UTC")), source: EufyP2ScaleAdapter.id, run: run))
        var output = AdapterOutput()
        session.receive(event, into: &output)
        #expect(output.rejections.isEmpty, "\(output.rejections)")
        return output.records.compactMap { record in
            if case .sample(let sample) = record, sample.type == .bodyMass { return sample.metadata.syncIdentifier }
            return nil
        }
    }

    /// Two runs of one adapter instance (two replays in one process, or the daemon started again)
    /// with the same scale showing the same weight a minute apart: each run's weighing has its own
    /// identifier. Failed before: the adapter instance kept the weighings, so the second run took
    /// the first run's identifier (and two captures replayed in one process took each other's).
    @Test func twoRunsDoNotShareTheirWeighings() throws {
        let adapter = EufyP2ScaleAdapter()
        let first = AdapterRunState()
        let second = AdapterRunState()
        let scale = "CF:E6:03:1D:09:F7"
        let shown = Date(timeIntervalSince1970: 1_736_931_600)
        #expect(try syncIdentifiers(adapter, run: first, address: scale, at: shown) == ["eufy-p2/CF:E6:03:1D:09:F7/1736931600"])
        let minuteLater = shown.addingTimeInterval(60)
        #expect(try syncIdentifiers(adapter, run: second, address: scale, at: minuteLater)
            == ["eufy-p2/CF:E6:03:1D:09:F7/1736931660"], "the second run's own weighing")
        // Within one run the weighing is still one: another session of the run (the conversation
        // the connection gets is given the same run) finds the first arrival's identifier.
        #expect(try syncIdentifiers(adapter, run: first, address: scale, at: minuteLater) == ["eufy-p2/CF:E6:03:1D:09:F7/1736931600"])
        // Another scale of the same run has its own.
        #expect(try syncIdentifiers(adapter, run: first, address: "CF:E6:03:1D:09:02", at: minuteLater)
            == ["eufy-p2/CF:E6:03:1D:09:02/1736931660"])
    }

    /// The weighings are the run's value: the same object for every context of one run, another for
    /// another run, and bounded per run (one entry per scale, at most ``EufyP2Weighings/maximumScales``).
    @Test func theWeighingsAreTheRunsOwn() throws {
        let zone = try #require(TimeZone(identifier: "UTC"))
        let run = AdapterRunState()
        let one = EufyP2Weighings.ofRun(AdapterContext(timeZone: zone, source: EufyP2ScaleAdapter.id, run: run))
        let again = EufyP2Weighings.ofRun(AdapterContext(timeZone: zone, source: EufyP2ScaleAdapter.id, run: run))
        let other = EufyP2Weighings.ofRun(AdapterContext(timeZone: zone, source: EufyP2ScaleAdapter.id, run: AdapterRunState()))
        #expect(one === again)
        #expect(one !== other)
        #expect(run.count == 1)
        let time = Date(timeIntervalSince1970: 1_736_931_600)
        for index in 0...EufyP2Weighings.maximumScales {
            let address = try #require(BLEAddress(String(format: "CF:E6:03:1D:%02X:%02X", index >> 8, index & 0xFF)))
            _ = one.syncIdentifier(for: address, kilograms: 87.9, at: time.addingTimeInterval(Double(index)))
        }
        #expect(one.count == EufyP2Weighings.maximumScales)
        #expect(other.count == 0)
    }
}
