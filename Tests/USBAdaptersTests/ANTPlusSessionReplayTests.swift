import ANTPlus
import AdapterKit
import CaptureFormats
import Foundation
import HealthModel
import Testing
import Transport

/// Forwards to a replayed capture (keeping what makes it a playback: its prior host writes, `answersWrites` false)
/// and logs what the session writes.
final class RecordingReplay: USBDeviceHandle {
    let inner: ReplayUSBDevice
    private(set) var written: [[UInt8]] = []

    init(_ inner: ReplayUSBDevice) { self.inner = inner }

    var device: USBDeviceDescription { inner.device }
    func priorHostWrites(endpoint: UInt8) -> [[UInt8]]? { inner.priorHostWrites(endpoint: endpoint) }
    var answersWrites: Bool { inner.answersWrites }
    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        try inner.claimInterface(number, detachKernelDriver: detachKernelDriver)
    }
    func releaseInterface(_ number: UInt8) throws(USBError) { try inner.releaseInterface(number) }
    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8], length: Int,
                         timeout: Duration) throws(USBError) -> [UInt8] {
        try inner.controlTransfer(requestType: requestType, request: request, value: value, index: index, data: data,
                                  length: length, timeout: timeout)
    }
    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        written.append(data)
        return try inner.write(endpoint: endpoint, data: data, timeout: timeout)
    }
    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        try inner.read(endpoint: endpoint, length: length, timeout: timeout)
    }
    func close() { inner.close() }
}

/// The ANT session on playbacks of captures that other software made (a device handle with prior host writes that
/// does not answer writes, and the capture's clock in the context): no network key needed, the capture's own key
/// and channel ids used, a start-up that differs from ours passed over.
struct ANTPlusSessionReplayTests {
    /// The generated channel-mode captures (`Captures/ant-plus/make-captures.py`) in the adapter's capture folder.
    static func capture(_ name: String) -> String {
        Fixtures.url("ant-plus/\(name).pcapng").path
    }

    struct Run {
        var batches: [AdapterOutput] = []
        var error: (any Error)?
        var samples: [QuantitySample] { batches.flatMap(\.records).flatMap(\.samples) }
        var skipped: [String: Int] {
            batches.reduce(into: [:]) { total, batch in
                for (reason, count) in batch.skipped { total[reason, default: 0] += count }
            }
        }
    }

    static func run(_ device: any USBDeviceHandle, clock: @escaping @Sendable () -> Date,
                    options: [String: String] = [:]) -> Run {
        let adapter = ANTPlusAdapter()
        let session = adapter.makeSession(
            for: device.device, context: AdapterContext(timeZone: .current, source: "ant-plus", now: clock),
            options: options)
        var run = Run()
        do {
            try session.run(device, deliver: { run.batches.append($0); return .storedAll($0) }, shouldStop: { false })
        } catch {
            run.error = error
        }
        return run
    }

    static func replaying(_ name: String) throws -> (RecordingReplay, @Sendable () -> Date) {
        let replay = try ReplayUSBDevice.open(path: capture(name), mode: .tolerant)
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: Double(replay.timestamp ?? 0) / 1_000_000) }
        return (RecordingReplay(replay), clock)
    }

    @Test func aChannelModeCaptureOfAnotherProgramReplaysWithoutANetworkKey() throws {
        let (device, clock) = try Self.replaying("hrm")
        let run = Self.run(device, clock: clock)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.samples.compactMap { try? $0.value(in: .countPerMinute) } == [62, 68, 65, 62, 68])
        #expect(run.samples.allSatisfy { $0.device?.localIdentifier == "ant+/120/12345" })
        // The key the session sent is the one the capture shows (so the capture's exchange matched), and nothing
        // was sent after the capture ended (no close channel).
        let capturedKey = try #require(device.inner.capturedHostWrites(endpoint: 0x01).first { $0.count > 2 && $0[2] == 0x46 })
        #expect(device.written.contains(capturedKey))
        #expect(device.written.first == ANTCommand.reset().bytes)
        #expect(!device.written.contains(ANTCommand.closeChannel(0).bytes))
        #expect(device.inner.writesNotInCapture == 3)
        #expect(run.skipped["ant command not answered in the capture"] == 2)
    }

    @Test func aChannelIDTheStickReportsNamesTheSenderOfPagesWithoutExtendedData() throws {
        let (device, clock) = try Self.replaying("scale")
        let run = Self.run(device, clock: clock, options: ["ant-network-key": "ffeeddccbbaa9988"])
        #expect(run.error == nil)
        #expect(run.samples.compactMap { try? $0.value(in: .kilogram) } == [72.35, 72.4])
        #expect(run.samples.allSatisfy { $0.device?.localIdentifier == "ant+/119/5150" })
        // A configured key that differs from the capture's is not used: the capture's is.
        #expect(!device.written.contains { $0.count > 3 && $0[2] == 0x46 && $0[4] == 0xFF })
    }

    @Test func aMalformedKeyIsStillRefusedWhenReplaying() {
        let device = ScriptedUSBDevice(device: ANTPlusSessionTests.stick(), steps: [])
        device.answersWrites = false
        let run = Self.run(device, clock: { Date(timeIntervalSince1970: 0) }, options: ["ant-network-key": "0123"])
        #expect(run.error as? ANTSessionError == .networkKey(.wrongLength(digits: 4)))
    }

    /// Replaying, a refused or unanswered command is noted and passed over; the pages already heard count. Live,
    /// the same refusal ends the start-up (ANTPlusSessionTests.aRefusedCommandStopsTheStartUpWithItsCode).
    @Test func aRefusedOrUnansweredCommandDoesNotEndAReplay() {
        let heart = ANTChannelID(deviceNumber: 77, deviceType: 120, transmissionType: 1)
        let steps: [ScriptedUSBDevice.Step] = [
            .write(ANTCommand.reset().bytes), .read([0xA4, 0x01, 0x6F, 0x00, 0xCA]),
            .write(ANTMessage(id: 0x46, payload: [0x00] + ANTNetworkKey.placeholder.bytes).bytes),
            .read(ANTPlusSessionTests.broadcast([0x04, 0xFF, 0, 0, 0x00, 0x04, 9, 58], from: heart)),
            ANTPlusSessionTests.response(0x46, code: 0x28),
        ]
        let device = ScriptedUSBDevice(device: ANTPlusSessionTests.stick(), steps: steps,
                                       afterScript: .replayExhausted("capture ended"))
        device.answersWrites = false
        let run = Self.run(device, clock: { Date(timeIntervalSince1970: 1_700_000_000) })
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(device.problems.isEmpty, "\(device.problems)")
        #expect(run.samples.compactMap { try? $0.value(in: .countPerMinute) } == [58])
        #expect(run.skipped["ant command refused in the capture"] == 1)
        #expect(run.skipped["ant command not answered in the capture"] == 6)
        #expect(!device.written.contains(ANTCommand.closeChannel(0).bytes))
    }
}
