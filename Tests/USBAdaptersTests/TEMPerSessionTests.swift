import AdapterKit
import Foundation
import HealthModel
import Synchronization
import Testing
import TEMPer
import Transport

/// The TEMPer session against a scripted thermometer.
struct TEMPerSessionTests {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func thermometer(product: String = "TEMPer2V1.3", dataEndpoint: UInt8 = 0x82) -> USBDeviceDescription {
        USBDeviceDescription(vendorID: 0x0C45, productID: 0x7401, bus: 3, address: 7, manufacturer: "RDing", product: product,
                             interfaces: [
                                USBInterfaceDescription(number: 0, interfaceClass: 0x03, interfaceProtocol: 1, endpoints: [
                                    USBEndpointDescription(address: 0x81, transferType: .interrupt, maxPacketSize: 8),
                                ]),
                                USBInterfaceDescription(number: 1, interfaceClass: 0x03, endpoints: [
                                    USBEndpointDescription(address: dataEndpoint, transferType: .interrupt, maxPacketSize: 8),
                                ]),
                             ])
    }

    static let command = ScriptedUSBDevice.Step.control(requestType: 0x21, request: 0x09, value: 0x0200, index: 1,
                                                        data: TEMPerDecoder.readCommand, reply: [])

    /// One reading: the command twice, each followed by an answer.
    static func reading(_ first: [UInt8], _ second: [UInt8]) -> [ScriptedUSBDevice.Step] {
        [command, .read(first), command, .read(second)]
    }

    struct Run {
        var batches: [AdapterOutput] = []
        var error: (any Error)?
        var sleeps = 0
        var samples: [QuantitySample] { batches.flatMap(\.records).flatMap(\.samples) }
    }

    static func run(_ device: ScriptedUSBDevice, options: [String: String] = [:], stopAfter: Int = 1) -> Run {
        let clock = TestClock(start)
        let slept = SleepCounter()
        let adapter = TEMPerAdapter(sleep: { duration in
            slept.add()
            clock.advance(by: Double(duration.components.seconds))
        })
        let session = adapter.makeSession(for: device.device, context: AdapterContext(timeZone: .current, source: "temper", now: { clock.now }),
                                          options: options)
        var run = Run()
        do {
            try session.run(device, deliver: { run.batches.append($0); return .storedAll($0) }, shouldStop: { run.batches.count >= stopAfter })
        } catch {
            run.error = error
        }
        run.sleeps = slept.count
        return run
    }

    @Test func aReadingIsTheSecondAnswerToTheCommandSentTwice() {
        let device = ScriptedUSBDevice(device: Self.thermometer(), steps: Self.reading(
            [0x80, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], [0x80, 0x04, 0x0A, 0xE0, 0x15, 0x00, 0x1D, 0x15]))
        let run = Self.run(device)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(device.problems.isEmpty, "\(device.problems)")
        let samples = run.samples
        #expect(samples.map(\.type) == [.ambientTemperature, .ambientTemperature])
        #expect(samples.compactMap { try? $0.value(in: .degreeCelsius) } == [10.875, 21.0])
        #expect(samples.map { $0.metadata.entries["IngestSensorIndex"] } == [.number(0), .number(1)])
        #expect(samples.first?.device?.model == "TEMPer2")
        #expect(samples.first?.isInstantaneous == true)
        #expect(device.claimed.map(\.interface) == [0, 1])
        #expect(device.claimed.allSatisfy { $0.detach })
        #expect(device.reads.allSatisfy { $0.endpoint == 0x82 })
    }

    @Test func readingsFollowTheIntervalAndTheCalibration() {
        let answer: [UInt8] = [0x80, 0x02, 0x16, 0x80, 0x00, 0x00, 0x00, 0x00]   // 22.5 °C
        let device = ScriptedUSBDevice(device: Self.thermometer(product: "TEMPerV1.4"),
                                       steps: Self.reading(answer, answer) + Self.reading(answer, answer))
        let run = Self.run(device, options: ["temper-interval": "30", "temper-offset": "-0.5", "temper-scale": "1.0"],
                           stopAfter: 2)
        #expect(run.error == nil)
        #expect(run.samples.compactMap { try? $0.value(in: .degreeCelsius) } == [22.0, 22.0])
        #expect(run.samples.map(\.start) == [Self.start, Self.start + 30])
        #expect(run.sleeps == 30)
    }

    @Test func humidityIsDecodedButNotStored() {
        let device = ScriptedUSBDevice(device: Self.thermometer(product: "TEMPERHUM1V1.3"), steps: Self.reading(
            [0, 0, 0x56, 0x2C, 0xBF, 0xB1, 0, 0], [0, 0, 0x56, 0x2C, 0xBF, 0xB1, 0, 0]))
        let run = Self.run(device)
        #expect(run.samples.count == 1)
        #expect(run.batches.first?.skipped["temper humidity (no quantity type)"] == 1)
    }

    @Test func silenceAndShortAnswersAreRejectedAndTheSessionGoesOn() {
        let device = ScriptedUSBDevice(device: Self.thermometer(),
                                       steps: [Self.command, .timeout] + Self.reading([0x80], [0x80, 0x04, 0x0A]))
        let run = Self.run(device, stopAfter: 2)
        #expect(run.error == nil)
        #expect(run.batches.flatMap(\.rejections).map(\.reason) == ["no-answer", "short-message"])
        #expect(run.batches.flatMap(\.rejections).last?.detail == "TEMPer2: answer of 3 bytes, 6 needed: 80 04 0a")
        #expect(run.samples.isEmpty)
    }

    @Test func anUnpluggedThermometerEndsTheSession() {
        let device = ScriptedUSBDevice(device: Self.thermometer(), steps: [Self.command, .gone])
        let run = Self.run(device)
        #expect(run.error == nil)
        #expect(run.batches.isEmpty)
    }

    @Test func aDeviceWithoutAnInterruptInterfaceIsRefused() {
        let bare = USBDeviceDescription(vendorID: 0x0C45, productID: 0x7401, product: "TEMPerV1.4", interfaces: [])
        let run = Self.run(ScriptedUSBDevice(device: bare, steps: []))
        #expect(run.error as? TEMPerSessionError == .noReportInterface(device: bare.description))
    }

    @Test func badOptionsAreNamed() {
        let run = Self.run(ScriptedUSBDevice(device: Self.thermometer(), steps: []), options: ["temper-interval": "0"])
        #expect(run.error as? TEMPerSessionError
                == .options(.invalid(option: "temper-interval", value: "0", expected: "whole seconds from 1 to 86400")))
    }

    @Test func theDescriptorTakesTheThreeKnownIds() {
        let descriptor = TEMPerAdapter().descriptor
        #expect(descriptor.id == "temper")
        #expect(descriptor.produces == [.ambientTemperature])
        #expect(descriptor.matches(Self.thermometer()))
        #expect(descriptor.matches(USBDeviceDescription(vendorID: 0x1A86, productID: 0xE025)))
        #expect(descriptor.matches(USBDeviceDescription(vendorID: 0x0C45, productID: 0x7402)))
        #expect(!descriptor.matches(USBDeviceDescription(vendorID: 0x0C45, productID: 0x7403)))
    }
}

/// Counts the session's one-second sleeps.
final class SleepCounter: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
