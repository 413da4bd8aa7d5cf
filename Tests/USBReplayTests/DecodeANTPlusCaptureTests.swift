import Foundation
import TestSupport
import Testing

/// `ingestd decode` on usbmon captures of an ANT stick as other software records them (Tests/AdapterTests/Captures/ant-plus/make-captures.py):
/// a channel-mode start-up of its own (specific channel ids, periods, lib config, capability and channel-id requests)
/// where ingestd's live session uses scan mode, and no network key given: the replay transmits nothing real.
@Suite(.serialized) struct DecodeANTPlusCaptureTests {
    static let folder = "AdapterTests/Captures/ant-plus"

    static func decode(_ name: String, _ extra: [String] = ["--adapter-option", "ant-batch-seconds=3600"])
        async throws -> (output: IngestdProcess.Output, samples: [DecodedSample]) {
        let output = try await IngestdProcess.run(["decode", Fixtures.path("\(folder)/\(name).pcapng"), "--json"] + extra)
        return (output, try output.lines.map { try DecodedSample(json: $0) })
    }

    static func expected(_ name: String) throws -> [DecodedSample] {
        let text = try String(contentsOfFile: Fixtures.path("\(folder)/\(name).expected.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { try DecodedSample(json: String($0)) }
    }

    static func expectSame(_ decoded: [DecodedSample], _ expected: [DecodedSample]) {
        #expect(decoded.count == expected.count, "\(decoded) vs \(expected)")
        for (found, wanted) in zip(decoded, expected) {
            #expect(found.matches(wanted), "found \(found), expected \(wanted)")
        }
    }

    @Test(arguments: ["hrm", "sdm", "scale", "scale-unmeasured"])
    func eachCaptureDecodesToItsExpectedSamples(name: String) async throws {
        let (output, samples) = try await Self.decode(name)
        #expect(output.status == 0, "\(output.stderr)")
        Self.expectSame(samples, try Self.expected(name))
        // The stick is found by the descriptors in the capture; no --usb and no network key were given.
        #expect(output.stderr.contains("USB device 0fcf:1008 bus 001 address 002 Dynastream Innovations ANT USBStick2 → adapter ant-plus"),
                "\(output.stderr)")
        #expect(!output.stderr.contains("session ended"), "\(output.stderr)")
        // The capture's key (01 23 45 67 89 ab cd ef) was used and is shown nowhere.
        for text in [output.stdout, output.stderr] {
            #expect(!text.lowercased().contains("0123456789abcdef") && !text.lowercased().contains("01 23 45 67"))
        }
    }

    /// Pages 0 and 4 without extended data: the sender is the channel id the capturing program set (12345, type 120);
    /// a sample per new beat with a valid rate, at most every 5 s of capture time.
    @Test func heartRatePagesWithoutExtendedDataNameTheConfiguredSensor() async throws {
        let (_, samples) = try await Self.decode("hrm")
        #expect(samples.map(\.value) == [62, 68, 65, 62, 68])
        #expect(samples.allSatisfy { $0.type == "HKQuantityTypeIdentifierHeartRate" && $0.unit == "count/min" })
        #expect(samples.allSatisfy { $0.deviceIdentifier == "ant+/120/12345" && $0.deviceName == "ANT+ heart rate monitor" })
        let gaps = zip(samples.dropFirst(), samples).map { $0.start.timeIntervalSince($1.start) }
        #expect(gaps.allSatisfy { $0 >= 5 })
    }

    /// Stride and distance counters that wrap (strides 240 → 24, distance 230 m → 58 m) are counted across the wrap;
    /// steps are two per stride; the sender comes from the extended data (4242, type 124, transmission 5).
    @Test func strideCountersAreCountedAcrossTheirWraps() async throws {
        let (_, samples) = try await Self.decode("sdm")
        let steps = try #require(samples.first { $0.type == "HKQuantityTypeIdentifierStepCount" })
        let distance = try #require(samples.first { $0.type == "HKQuantityTypeIdentifierDistanceWalkingRunning" })
        let speed = try #require(samples.first { $0.type == "HKQuantityTypeIdentifierRunningSpeed" })
        #expect(steps.value == 80)
        #expect(distance.value == 84.875 && distance.unit == "m")
        #expect(speed.value == 3.109375 && speed.unit == "m/s")
        #expect(samples.allSatisfy { $0.deviceIdentifier == "ant+/124/4242" })

        // With the default 10 s batches the same totals are split over several samples.
        let (_, batched) = try await Self.decode("sdm", [])
        let stepSamples = batched.filter { $0.type == "HKQuantityTypeIdentifierStepCount" }
        #expect(stepSamples.count > 1)
        #expect(stepSamples.map(\.value).reduce(0, +) == 80)
        #expect(batched.filter { $0.type == "HKQuantityTypeIdentifierDistanceWalkingRunning" }.map(\.value).reduce(0, +) == 84.875)
    }

    /// Computing (0xFFFE) and invalid (0xFFFF) weights give nothing; each weighing gives one sample, named by the
    /// channel id the stick reported when asked (5150, type 119).
    @Test func weightsAreTakenOncePerWeighingAndNeverWhileComputingOrInvalid() async throws {
        let (_, samples) = try await Self.decode("scale")
        #expect(samples.map(\.value) == [72.35, 72.4])
        #expect(samples.allSatisfy { $0.type == "HKQuantityTypeIdentifierBodyMass" && $0.unit == "kg" })
        #expect(samples.allSatisfy { $0.deviceIdentifier == "ant+/119/5150" && $0.metadata["IngestANTUserProfile"] == 3 })

        let (output, unmeasured) = try await Self.decode("scale-unmeasured")
        #expect(unmeasured.isEmpty)
        #expect(output.stderr.contains("frames skipped, ant+ scale computing: 14"), "\(output.stderr)")
        #expect(output.stderr.contains("frames skipped, ant+ scale invalid weight: 10"), "\(output.stderr)")
    }

    /// The replay tells what of ingestd's start-up the capture did not have.
    @Test func theSummaryCountsTheWritesTheCaptureLacks() async throws {
        let (output, _) = try await Self.decode("hrm")
        // Wildcard channel id, extended messages and Rx scan mode are not what the capturing program sent.
        #expect(output.stderr.contains("writes not in the capture: 3"), "\(output.stderr)")
        #expect(output.stderr.contains("frames skipped, ant command not answered in the capture: 2"), "\(output.stderr)")
    }
}
