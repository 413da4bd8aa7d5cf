import ANTPlus
import AdapterKit
import Foundation
import HealthModel
import Testing

/// Samples from page streams: counters across wraps, reception gaps, heart-rate pacing, weighings.
struct ANTPlusReceiverTests {
    static let foot = ANTChannelID(deviceNumber: 4242, deviceType: 124, transmissionType: 5)
    static let heart = ANTChannelID(deviceNumber: 777, deviceType: 120, transmissionType: 1)
    static let scale = ANTChannelID(deviceNumber: 9, deviceType: 119, transmissionType: 1)
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Page 1 with a distance counter (metres + sixteenths) and a stride counter.
    static func stridePage(metres: UInt8, sixteenths: UInt8 = 0, strides: UInt8, speed: UInt8 = 3) -> [UInt8] {
        [0x01, 0x00, 0x00, metres, sixteenths << 4 | speed, 0x00, strides, 0x00]
    }

    static func values(_ output: AdapterOutput, _ type: QuantityType, in unit: HealthModel.Unit) -> [Double] {
        output.records.flatMap(\.samples).filter { $0.type == type }.compactMap { try? $0.value(in: unit) }
    }

    @Test func rollingCountersAccumulateAcrossWraps() {
        var counter = RollingCounter(modulus: 256)
        #expect(counter.advance(to: 250) == 0)
        #expect(counter.advance(to: 255) == 5)
        #expect(counter.advance(to: 3) == 4)
        #expect(counter.advance(to: 3) == 0)
        #expect(counter.advance(to: 2) == 255)   // one short of a full turn: the least the counter allows
        #expect(counter.total == 264)
    }

    @Test func stridesBecomeStepsAndDistanceAcrossWraps() {
        var receiver = ANTPlusReceiver(source: "ant-plus")
        var output = AdapterOutput()
        receiver.receive(Self.stridePage(metres: 250, sixteenths: 8, strides: 250), from: Self.foot, at: Self.start, into: &output)
        receiver.receive(Self.stridePage(metres: 254, sixteenths: 0, strides: 254), from: Self.foot,
                         at: Self.start + 1, into: &output)
        receiver.receive(Self.stridePage(metres: 4, sixteenths: 8, strides: 6), from: Self.foot, at: Self.start + 3, into: &output)
        receiver.flush(at: Self.start + 4, into: &output)
        // 250 → 6 is 12 strides = 24 steps; 250.5 m → 4.5 m (mod 256) is 10 m.
        #expect(Self.values(output, .stepCount, in: .count) == [24])
        #expect(Self.values(output, .distanceWalkingRunning, in: .meter) == [10])
        let steps = output.records.flatMap(\.samples).first { $0.type == .stepCount }
        #expect(steps?.start == Self.start)
        #expect(steps?.end == Self.start + 3)
        #expect(steps?.device?.localIdentifier == "ant+/124/4242")
        #expect(Self.values(output, .runningSpeed, in: .meter.unitDivided(by: .second)) == [3])
        #expect(receiver.strideTotal(of: Self.foot) == 12)
    }

    @Test func consecutiveFlushesCoverAdjacentIntervals() {
        var receiver = ANTPlusReceiver(source: "ant-plus")
        var output = AdapterOutput()
        receiver.receive(Self.stridePage(metres: 0, strides: 0), from: Self.foot, at: Self.start, into: &output)
        receiver.receive(Self.stridePage(metres: 2, strides: 2), from: Self.foot, at: Self.start + 1, into: &output)
        receiver.flush(at: Self.start + 1, into: &output)
        receiver.receive(Self.stridePage(metres: 2, strides: 2), from: Self.foot, at: Self.start + 2, into: &output)
        receiver.receive(Self.stridePage(metres: 5, strides: 4), from: Self.foot, at: Self.start + 3, into: &output)
        receiver.flush(at: Self.start + 4, into: &output)
        let steps = output.records.flatMap(\.samples).filter { $0.type == .stepCount }
        #expect(steps.map { try? $0.value(in: .count) } == [4, 4])
        #expect(steps.map(\.start) == [Self.start, Self.start + 2])
        #expect(steps.map(\.end) == [Self.start + 1, Self.start + 3])
        #expect(output.skipped["ant+ stride page without progress"] == 1)
    }

    @Test func aReceptionGapCountsOnlyWhatTheCountersShow() {
        var receiver = ANTPlusReceiver(source: "ant-plus")
        var output = AdapterOutput()
        receiver.receive(Self.stridePage(metres: 100, strides: 200), from: Self.foot, at: Self.start, into: &output)
        // Five minutes without reception: the counter moved from 200 to 10. It may have wrapped more than once;
        // only the 66 strides it shows are counted, nothing is made up for the silence.
        receiver.receive(Self.stridePage(metres: 150, strides: 10), from: Self.foot, at: Self.start + 300, into: &output)
        receiver.flush(at: Self.start + 301, into: &output)
        #expect(Self.values(output, .stepCount, in: .count) == [132])
        #expect(Self.values(output, .distanceWalkingRunning, in: .meter) == [50])
        #expect(output.skipped["ant+ stride reception gap"] == 1)
    }

    @Test func heartRateSamplesArePacedAndNeedANewBeat() {
        var receiver = ANTPlusReceiver(source: "ant-plus")
        var output = AdapterOutput()
        func page(_ count: UInt8, _ bpm: UInt8) -> [UInt8] { [0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x10, count, bpm] }
        receiver.receive(page(1, 60), from: Self.heart, at: Self.start, into: &output)
        receiver.receive(page(1, 60), from: Self.heart, at: Self.start + 0.25, into: &output)   // same beat
        receiver.receive(page(2, 62), from: Self.heart, at: Self.start + 1, into: &output)      // within 5 s
        receiver.receive(page(8, 0), from: Self.heart, at: Self.start + 6, into: &output)       // invalid rate
        receiver.receive(page(9, 64), from: Self.heart, at: Self.start + 7, into: &output)
        #expect(Self.values(output, .heartRate, in: .countPerMinute) == [60, 64])
        #expect(output.skipped["ant+ heart rate without a new beat"] == 1)
        #expect(output.skipped["ant+ heart rate invalid"] == 1)
    }

    @Test func aWeighingGivesOneSampleAndNeverTheComputingOrInvalidValue() {
        var receiver = ANTPlusReceiver(source: "ant-plus")
        var output = AdapterOutput()
        let computing: [UInt8] = [0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFE, 0xFF]
        let invalid: [UInt8] = [0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]
        let weight: [UInt8] = [0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x3E, 0x1C]
        for (offset, page) in [computing, computing, invalid, weight, weight, weight].enumerated() {
            receiver.receive(page, from: Self.scale, at: Self.start + Double(offset), into: &output)
        }
        #expect(Self.values(output, .bodyMass, in: .kilogram) == [72.3])
        #expect(output.skipped["ant+ scale computing"] == 2)
        #expect(output.skipped["ant+ scale invalid weight"] == 1)
        #expect(output.skipped["ant+ scale repeated weight"] == 2)
        // A new weighing (computing again) with the same result is a new sample.
        receiver.receive(computing, from: Self.scale, at: Self.start + 30, into: &output)
        receiver.receive(weight, from: Self.scale, at: Self.start + 31, into: &output)
        #expect(Self.values(output, .bodyMass, in: .kilogram) == [72.3, 72.3])
    }

    @Test func unknownPagesAreRejectedWithTheSenderAndOtherDevicesSkipped() {
        var receiver = ANTPlusReceiver(source: "ant-plus")
        var output = AdapterOutput()
        receiver.receive([0x30, 0, 0, 0, 0, 0, 0, 0], from: Self.foot, at: Self.start, into: &output)
        receiver.receive([0, 0, 0, 0, 0, 0, 0, 0], from: ANTChannelID(deviceNumber: 1, deviceType: 121, transmissionType: 1),
                         at: Self.start, into: &output)
        #expect(output.rejections.map(\.reason) == ["unknown-page"])
        #expect(output.rejections.first?.detail.hasPrefix("ant+/124/4242: device type 124 has no page 48") == true)
        #expect(output.skipped["ant+ device type 121"] == 1)
        #expect(output.records.isEmpty)
    }
}
