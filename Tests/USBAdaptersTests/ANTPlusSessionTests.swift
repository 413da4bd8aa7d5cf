import ANTPlus
import AdapterKit
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport

/// The ANT session against a scripted stick: the start-up bytes, reception with extended data, batches, errors.
struct ANTPlusSessionTests {
    /// A made-up key for the tests (not the ANT+ key).
    static let keyHex = "0123456789abcdef"
    static let key: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func stick(interface: UInt8 = 0, input: UInt8 = 0x81, output: UInt8 = 0x01) -> USBDeviceDescription {
        USBDeviceDescription(vendorID: 0x0FCF, productID: 0x1008, bus: 1, address: 2, manufacturer: "Dynastream Innovations",
                             product: "ANT USBStick2", interfaces: [
                                USBInterfaceDescription(number: interface, interfaceClass: 0xFF, endpoints: [
                                    USBEndpointDescription(address: input, transferType: .bulk, maxPacketSize: 64),
                                    USBEndpointDescription(address: output, transferType: .bulk, maxPacketSize: 64),
                                ]),
                             ])
    }

    static func response(_ id: UInt8, channel: UInt8 = 0, code: UInt8 = 0) -> ScriptedUSBDevice.Step {
        .read(ANTMessage(id: 0x40, payload: [channel, id, code]).bytes)
    }

    static func command(_ message: ANTMessage, channel: UInt8 = 0) -> [ScriptedUSBDevice.Step] {
        [.write(message.bytes), response(message.id, channel: channel)]
    }

    static func broadcast(_ page: [UInt8], from id: ANTChannelID?, channel: UInt8 = 0) -> [UInt8] {
        var payload = [channel] + page
        if let id {
            payload += [0x80, UInt8(id.deviceNumber & 0xFF), UInt8(id.deviceNumber >> 8), id.deviceType, id.transmissionType]
        }
        return ANTMessage(id: 0x4E, payload: payload).bytes
    }

    static var scanStartUp: [ScriptedUSBDevice.Step] {
        [.write(ANTCommand.reset().bytes), .read([0xA4, 0x01, 0x6F, 0x00, 0xCA])]
            + command(ANTMessage(id: 0x46, payload: [0x00] + key))
            + command(ANTCommand.assignChannel(0))
            + command(ANTCommand.setChannelID(0))
            + command(ANTCommand.setPeriod(0, period: 8070))
            + command(ANTCommand.setFrequency(0))
            + command(ANTCommand.enableExtendedMessages())
            + command(ANTCommand.openRxScanMode())
    }

    static let heart = ANTChannelID(deviceNumber: 777, deviceType: 120, transmissionType: 1)
    static let foot = ANTChannelID(deviceNumber: 4242, deviceType: 124, transmissionType: 5)
    static let scale = ANTChannelID(deviceNumber: 9, deviceType: 119, transmissionType: 1)

    struct Run {
        var batches: [AdapterOutput] = []
        var error: (any Error)?
        var samples: [QuantitySample] { batches.flatMap(\.records).flatMap(\.samples) }
        var rejections: [AdapterRejection] { batches.flatMap(\.rejections) }
    }

    static func run(_ device: ScriptedUSBDevice, clock: TestClock,
                    options: [String: String] = ["ant-network-key": keyHex],
                    readFile: @escaping @Sendable (String) throws -> String = { _ in "" }) -> Run {
        let adapter = ANTPlusAdapter(readFile: readFile)
        let session = adapter.makeSession(for: device.device,
                                          context: AdapterContext(timeZone: .current, source: "ant-plus", now: { clock.now }),
                                          options: options)
        var run = Run()
        do {
            try session.run(device, deliver: { run.batches.append($0); return .storedAll($0) }, shouldStop: { device.isPlayed })
        } catch {
            run.error = error
        }
        return run
    }

    @Test func scanModeStartsUpAndTurnsPagesIntoSamples() throws {
        let clock = TestClock(Self.start)
        let hr = Self.broadcast([0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x10, 0x01, 0x3C], from: Self.heart)
        var corrupt = Self.broadcast([0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x14, 0x02, 0x3D], from: Self.heart)
        corrupt[corrupt.count - 1] ^= 0x55
        let footBaseline = Self.broadcast([0x01, 0x00, 0x00, 0xFA, 0x03, 0x00, 0xFA, 0x00], from: Self.foot)
        let footMoved = Self.broadcast([0x01, 0x00, 0x00, 0x04, 0x03, 0x00, 0x06, 0x00], from: Self.foot)
        let computing = Self.broadcast([0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFE, 0xFF], from: Self.scale)
        let weighed = Self.broadcast([0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0x3E, 0x1C], from: Self.scale)
        let steps: [ScriptedUSBDevice.Step] = Self.scanStartUp + [
            .read(hr),
            .timeout,
            .read(Array(footBaseline.prefix(6))),          // a message split over two transfers
            .read(Array(footBaseline.dropFirst(6)) + corrupt),
            .read(footMoved + [0x00, 0x00]),               // zero padding after a message
            .read(computing),
            .read(weighed + weighed),                      // two messages in one transfer
        ]
        let device = ScriptedUSBDevice(device: Self.stick(), steps: steps, clock: clock)
        let run = Self.run(device, clock: clock)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(device.problems.isEmpty, "\(device.problems)")
        #expect(device.written.last == ANTCommand.closeChannel(0).bytes)

        let samples = run.samples
        #expect(samples.filter { $0.type == .heartRate }.compactMap { try? $0.value(in: .countPerMinute) } == [60])
        #expect(samples.filter { $0.type == .stepCount }.compactMap { try? $0.value(in: .count) } == [24])
        #expect(samples.filter { $0.type == .distanceWalkingRunning }.compactMap { try? $0.value(in: .meter) } == [10])
        #expect(samples.filter { $0.type == .bodyMass }.compactMap { try? $0.value(in: .kilogram) } == [72.3])
        #expect(samples.first { $0.type == .heartRate }?.device?.localIdentifier == "ant+/120/777")
        #expect(run.rejections.map(\.reason) == ["bad-checksum"])
        #expect(run.rejections.first?.detail.contains("expected") == true)
        #expect(run.batches.flatMap(\.skipped).contains { $0.key == "ant padding" })
        #expect(device.claimed.map(\.interface) == [0])
        #expect(device.claimed.allSatisfy { $0.detach })
    }

    @Test func batchesAreCommittedAtTheConfiguredInterval() {
        let clock = TestClock(Self.start)
        var steps = Self.scanStartUp
        for beat in UInt8(1)...12 {
            steps.append(.read(Self.broadcast([0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x10, beat, 60 + beat], from: Self.heart)))
            steps += Array(repeating: .timeout, count: 7)
        }
        let device = ScriptedUSBDevice(device: Self.stick(), steps: steps, clock: clock)
        let run = Self.run(device, clock: clock, options: ["ant-network-key": Self.keyHex, "ant-batch-seconds": "5"])
        #expect(run.error == nil)
        // 12 beats two seconds apart (t = 0, 2, … 22 s): a sample at 0, 6, 12 and 18 s (5 s apart at least),
        // committed in batches of 5 s.
        let rates = run.samples.compactMap { try? $0.value(in: .countPerMinute) }
        #expect(rates == [61, 64, 67, 70])
        #expect(run.batches.count >= 4)
    }

    @Test func theEndpointsComeFromTheDescriptors() {
        let clock = TestClock(Self.start)
        let device = ScriptedUSBDevice(device: Self.stick(interface: 2, input: 0x83, output: 0x04), steps: Self.scanStartUp,
                                       clock: clock)
        let run = Self.run(device, clock: clock)
        #expect(run.error == nil)
        #expect(device.claimed.map(\.interface) == [2])
        #expect(!device.reads.isEmpty)
        #expect(device.reads.allSatisfy { $0.endpoint == 0x83 && $0.length == 64 })
    }

    @Test func withoutANetworkKeyTheErrorSaysHowToGiveIt() {
        let device = ScriptedUSBDevice(device: Self.stick(), steps: [])
        let run = Self.run(device, clock: TestClock(Self.start), options: [:])
        #expect(run.error as? ANTSessionError == .networkKey(.missing))
        let text = "\(run.error.map { "\($0)" } ?? "")"
        #expect(text.contains("ant-network-key=@FILE"))
        #expect(device.written.isEmpty)
        #expect(device.claimed.isEmpty)
    }

    @Test func aMalformedKeyIsNeverEchoed() {
        let secretish = "0123456789abcdeZ"
        let run = Self.run(ScriptedUSBDevice(device: Self.stick(), steps: []), clock: TestClock(Self.start),
                           options: ["ant-network-key": secretish])
        #expect(run.error as? ANTSessionError == .networkKey(.notHex))
        #expect(!"\(run.error.map { "\($0)" } ?? "")".contains("0123456789"))
        let short = Self.run(ScriptedUSBDevice(device: Self.stick(), steps: []), clock: TestClock(Self.start),
                             options: ["ant-network-key": "01:23:45"])
        #expect(short.error as? ANTSessionError == .networkKey(.wrongLength(digits: 6)))
    }

    @Test func theKeyMayComeFromAFileAndIsNotShownAnywhere() throws {
        let clock = TestClock(Self.start)
        let device = ScriptedUSBDevice(device: Self.stick(), steps: Self.scanStartUp, clock: clock)
        let run = Self.run(device, clock: clock, options: ["ant-network-key": "@/etc/ingestd/ant.key"],
                           readFile: { path in
                               guard path == "/etc/ingestd/ant.key" else { throw CocoaError(.fileNoSuchFile) }
                               return "0x01 0x23 0x45 0x67 0x89 0xab 0xcd 0xef\n"
                           })
        #expect(run.error == nil)
        #expect(device.problems.isEmpty, "\(device.problems)")
        let key = try ANTNetworkKey(hex: Self.keyHex)
        #expect("\(key)" == "ANT network key (8 bytes, not shown)")
        #expect(!String(reflecting: key).contains("23"))
        var dumped = ""
        dump(try ANTPlusConfiguration(options: ["ant-network-key": Self.keyHex], readFile: { _ in "" }), to: &dumped)
        #expect(!dumped.contains("35") && !dumped.contains("0x23") && !dumped.contains("171"))
    }

    @Test func aRefusedCommandStopsTheStartUpWithItsCode() {
        let steps: [ScriptedUSBDevice.Step] = [
            .write(ANTCommand.reset().bytes), .read([0xA4, 0x01, 0x6F, 0x00, 0xCA]),
            .write(ANTMessage(id: 0x46, payload: [0x00] + Self.key).bytes), Self.response(0x46, code: 0x28),
        ]
        let device = ScriptedUSBDevice(device: Self.stick(), steps: steps)
        let run = Self.run(device, clock: TestClock(Self.start))
        #expect(run.error as? ANTSessionError == .commandFailed(command: "set network key", code: 0x28))
        #expect(!"\(run.error.map { "\($0)" } ?? "")".contains("23 45"))
    }

    @Test func aSilentStickIsReported() {
        let steps: [ScriptedUSBDevice.Step] = [.write(ANTCommand.reset().bytes), .read([0xA4, 0x01, 0x6F, 0x00, 0xCA]),
                                               .write(ANTMessage(id: 0x46, payload: [0x00] + Self.key).bytes)]
        let run = Self.run(ScriptedUSBDevice(device: Self.stick(), steps: steps), clock: TestClock(Self.start))
        #expect(run.error as? ANTSessionError == .noResponse(command: "set network key"))
    }

    @Test func channelModeOpensOneChannelPerProfileAndKnowsTheTypeByChannel() {
        let clock = TestClock(Self.start)
        var steps: [ScriptedUSBDevice.Step] = [.write(ANTCommand.reset().bytes), .timeout, .timeout, .timeout, .timeout,
                                               .timeout, .timeout, .timeout, .timeout]
        // No startup message within the reads allowed: the session goes on.
        steps += Array(repeating: ScriptedUSBDevice.Step.timeout, count: 24)
        steps += Self.command(ANTMessage(id: 0x46, payload: [0x00] + Self.key))
        for (channel, type, period) in [(UInt8(0), UInt8(120), UInt16(8070)), (1, 124, 8134), (2, 119, 8192)] {
            steps += Self.command(ANTCommand.assignChannel(channel), channel: channel)
            steps += Self.command(ANTCommand.setChannelID(channel, deviceType: type), channel: channel)
            steps += Self.command(ANTCommand.setPeriod(channel, period: period), channel: channel)
            steps += Self.command(ANTCommand.setFrequency(channel), channel: channel)
            steps += Self.command(ANTCommand.setSearchTimeout(channel, timeout: 0xFF), channel: channel)
        }
        steps += Self.command(ANTCommand.enableExtendedMessages())
        for channel in UInt8(0)...2 { steps += Self.command(ANTCommand.openChannel(channel), channel: channel) }
        // A stride page without extended data on channel 1, then the search on channel 2 ends and is restarted.
        steps.append(.read(Self.broadcast([0x01, 0x00, 0x00, 0x10, 0x03, 0x00, 0x20, 0x00], from: nil, channel: 1)))
        steps.append(.read(Self.broadcast([0x01, 0x00, 0x00, 0x12, 0x03, 0x00, 0x24, 0x00], from: nil, channel: 1)))
        steps.append(.read(ANTMessage(id: 0x40, payload: [0x02, 0x01, 0x07]).bytes))
        steps.append(.write(ANTCommand.openChannel(2).bytes))
        let device = ScriptedUSBDevice(device: Self.stick(), steps: steps, clock: clock)
        let run = Self.run(device, clock: clock, options: ["ant-network-key": Self.keyHex, "ant-mode": "channels"])
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(device.problems.isEmpty, "\(device.problems)")
        let steps8 = run.samples.filter { $0.type == .stepCount }
        #expect(steps8.compactMap { try? $0.value(in: .count) } == [8])
        #expect(steps8.first?.device?.localIdentifier == "ant+/124/0")
        #expect(Array(device.written.suffix(3)) == [0, 1, 2].map { ANTCommand.closeChannel($0).bytes })
    }

    @Test func anUnpluggedStickEndsTheSessionWithWhatWasReceived() {
        let clock = TestClock(Self.start)
        let steps = Self.scanStartUp + [
            .read(Self.broadcast([0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x10, 0x01, 0x50], from: Self.heart)),
            .gone,
        ]
        let device = ScriptedUSBDevice(device: Self.stick(), steps: steps, clock: clock)
        let run = Self.run(device, clock: clock)
        #expect(run.error == nil)
        #expect(run.samples.compactMap { try? $0.value(in: .countPerMinute) } == [80])
        #expect(device.written.last == ANTCommand.openRxScanMode().bytes, "nothing is sent to a stick that is gone")
    }

    @Test func badOptionsAreNamed() {
        let run = Self.run(ScriptedUSBDevice(device: Self.stick(), steps: []), clock: TestClock(Self.start),
                           options: ["ant-network-key": Self.keyHex, "ant-mode": "promiscuous"])
        #expect(run.error as? ANTSessionError
                == .options(.invalid(option: "ant-mode", value: "promiscuous", expected: "scan or channels")))
    }
}
