import BLEWire
import CaptureFormats
import Foundation
@testable import IngestRuntime
import Testing

/// Every fixture replayed through `CaptureReplay` (the code behind `ingestd decode`), compared
/// with the records and rejections written from the published values.
@Suite struct CaptureReplayTests {
    @Test(arguments: Captures.withExpectedRecords)
    func decodesToThePublishedValues(_ fixture: Fixture) async throws {
        let replayed = try await Replayed(fixture)
        let expected = try fixture.expectedRecords()
        try expectSameRecords(replayed.lines, expected, fixture.testDescription)
        // The summary's samples per type are the printed samples counted (types mixed within a batch too).
        var counted: [String: Int] = [:]
        for line in replayed.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for member in (object["objects"] as? [[String: Any]]) ?? [object] {
                counted[try #require(member["type"] as? String), default: 0] += 1
            }
        }
        #expect(replayed.summary.samplesPerType == counted, "\(fixture.testDescription)")
        if expected.isEmpty {
            // A capture that must give nothing (ant-plus/scale-unmeasured) says why: what the adapter skipped.
            #expect(!replayed.summary.skipped.isEmpty, "\(fixture.testDescription): nothing decoded and nothing skipped")
        } else {
            #expect(!replayed.lines.isEmpty, "a fixture with an expected file must produce records")
        }
        if !fixture.isBad {
            #expect(replayed.rejections.isEmpty, "\(replayed.rejections)")
            // Real logs may hold neighbours' garbled advertising data (the HidrateSpark log: 2), nothing else.
            #expect(replayed.summary.statistics.malformed.keys.allSatisfy { fixture.isReal && $0 == .advertisingDataMalformed },
                    "\(replayed.summary.statistics.malformed)")
            #expect(replayed.summary.warnings.isEmpty)
            // Real logs also hold the neighbours' advertisements.
            #expect(fixture.isReal || replayed.summary.unmatched.isEmpty, "\(replayed.summary.unmatched)")
            #expect(replayed.summary.unmatchedUSB.isEmpty, "\(replayed.summary.unmatchedUSB)")
            #expect(replayed.summary.rejected.isEmpty, "\(replayed.summary.rejected)")
            // In these folders every write a conversation makes is in the capture, byte for byte (a
            // clock written, a request); other folders' captures hold fewer writes than their conversations make.
            if ["colmi-ring", "omron-bp"].contains(fixture.folder) {
                #expect(replayed.summary.conversations.allSatisfy { $0.writesNotInCapture == 0 }, "\(replayed.summary.conversations)")
            }
        }
        if fixture.isUSB {
            // The capture's device went to the adapter of its folder, and the session ended with the capture.
            #expect(replayed.summary.matchedUSB.map(\.adapter) == [fixture.folder], "\(replayed.summary.matchedUSB)")
            #expect(replayed.summary.matchedUSB.allSatisfy { $0.failure == nil }, "\(replayed.summary.matchedUSB)")
        }
    }

    @Test(arguments: Captures.withFragmentedTwin)
    func fragmentedTwinGivesTheSameRecords(_ fixture: Fixture) async throws {
        let twin = try #require(fixture.fragmentedTwin)
        let whole = try await Replayed(path: fixture.path, options: try fixture.adapterOptions())
        let fragmented = try await Replayed(path: twin.path, options: try twin.adapterOptions())
        try expectSameRecords(fragmented.lines, whole.lines, twin.testDescription)
        #expect(fragmented.summary.statistics.notifications == whole.summary.statistics.notifications)
        #expect(fragmented.summary.statistics.indications == whole.summary.statistics.indications)
        #expect(fragmented.summary.statistics.subscriptions == whole.summary.statistics.subscriptions)
        #expect(fragmented.summary.statistics.malformed.isEmpty)
        #expect(fragmented.rejections == whole.rejections)

        // The twin must really split ATT PDUs: ACL continuation packets (boundary flag 0b01),
        // and none in the unfragmented capture.
        #expect(try continuationPackets(twin.path) > 0)
        #expect(try continuationPackets(fixture.path) == 0)
    }

    @Test(arguments: Captures.bad)
    func rejectsMalformedFramesWithReasons(_ fixture: Fixture) async throws {
        let replayed = try await Replayed(path: fixture.path, options: try fixture.adapterOptions(), keys: try fixture.keys())
        let expected = try fixture.expectedErrors()
        #expect(!expected.isEmpty)
        #expect(replayed.errorLines == expected,
                "\(fixture.testDescription):\n  got  \(replayed.errorLines.joined(separator: "\n       "))")
        // The summary `ingestd decode` prints counts the same rejections.
        let adapterLines = expected.filter { !$0.hasPrefix("trace: ") }
        #expect(replayed.summary.rejected.values.reduce(0, +) == adapterLines.count)
        if fixture.expectedRecordsPath == nil {
            #expect(replayed.lines.isEmpty, "\(replayed.lines)")
        }
    }

    /// The real captures of unsupported devices: decoded end to end, counts as in
    /// `Tests/CaptureFormatsTests` and `captures.md`, nothing for the health store. Neighbours that an
    /// adapter takes are listed: the DS-D6 log overheard two Huami bands (company 0x0157) whose
    /// frames carried no heart rate (the mi-band-heart-rate adapter counts them as skipped).
    @Test(arguments: [
        UnsupportedCapture(file: "dsd6_btsnoop_hci.log.63758104325217312", records: 470, advertisements: 145,
                           connections: 0, notifications: 0, malformed: [:],
                           matched: ["C6:40:17:1B:F6:E9": "mi-band-heart-rate", "E2:68:A2:4A:56:B0": "mi-band-heart-rate"]),
        UnsupportedCapture(file: "airbily_veryfitpro_bluethoot_logs.pcapng", records: 810, advertisements: 5,
                           connections: 1, notifications: 277, malformed: [:]),
    ])
    func unsupportedDevicesDecodeToNothing(_ capture: UnsupportedCapture) async throws {
        let path = Captures.directory.appendingPathComponent(Captures.unsupportedFolder)
            .appendingPathComponent(capture.file).path
        let replayed = try await Replayed(path: path)
        let statistics = replayed.summary.statistics
        #expect(replayed.summary.records == capture.records)
        #expect(statistics.advertisements == capture.advertisements)
        #expect(statistics.connections == capture.connections)
        #expect(statistics.notifications == capture.notifications)
        #expect(statistics.indications == 0)
        #expect(statistics.malformed == capture.malformed)
        #expect(replayed.summary.warnings.isEmpty)
        #expect(replayed.lines.isEmpty)
        #expect(replayed.summary.samplesPerType.isEmpty)
        #expect(replayed.rejections.isEmpty)
        #expect(Dictionary(uniqueKeysWithValues: replayed.summary.matched.map { ($0.key.description, $0.value) }) == capture.matched,
                "\(replayed.summary.matched)")
        #expect(!replayed.summary.unmatched.isEmpty)
    }

    /// The battery charges the real frames carry, as the public decoders' tests expect them
    /// (theengs: ATC1441 81 %, PVVX 100 %, the Qingping frames 73 then 75 %, Govee 100 %,
    /// Inkbird 89/48/100/89/89/96 %; xiaomi-ble: the MMC-T201-1 81 %), the newest per device.
    @Test func replayedCapturesHandOverEachDevicesNewestBatteryCharge() async throws {
        func charges(_ name: String) async throws -> [String: Int] {
            let path = Captures.directory.appendingPathComponent(name).path
            let replayed = try await Replayed(path: path)
            return Dictionary(replayed.summary.batteries.map { ($0.deviceKey, $0.percent) }, uniquingKeysWith: { _, last in last })
        }
        #expect(try await charges("room-thermometer/atc-pvvx.btsnoop")
                == ["A4:C1:38:D5:D4:98": 81, "A4:C1:38:CF:01:56": 100, "58:2D:34:12:33:DC": 75])
        let govee = try await charges("room-thermometer/govee.btsnoop")
        #expect(govee.count == 5 && govee.values.allSatisfy { $0 == 100 }, "\(govee)")
        #expect(Set(try await charges("room-thermometer/inkbird.btsnoop").values).isSubset(of: [89, 48, 100, 96]))
        #expect(try await charges("xiaomi-mibeacon/thermometers.btsnoop")["00:81:F9:DD:6F:C1"] == 81)
    }

    @Test func everyUnsupportedCaptureIsListed() throws {
        let listed: Set<String> = [
            "dsd6_btsnoop_hci.log.63758104325217312",
            "airbily_veryfitpro_bluethoot_logs.pcapng",
        ]
        let folder = Captures.directory.appendingPathComponent(Captures.unsupportedFolder).path
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: folder)).subtracting(["ORIGIN"])
        #expect(files == listed)
    }

    /// ACL packets with the continuation boundary flag.
    private func continuationPackets(_ path: String) throws -> Int {
        let reader = try CaptureFile.open(path: path)
        var count = 0
        while let record = try reader.next() {
            guard case .hci(let type) = record.content, type == .acl, record.bytes.count >= 2 else { continue }
            let flags = record.bytes[record.bytes.startIndex + 1] >> 4
            if flags & 0x03 == 0b01 { count += 1 }
        }
        return count
    }
}

/// A real capture and the counts it must give.
struct UnsupportedCapture: Sendable, CustomTestStringConvertible {
    var file: String
    var records: Int
    var advertisements: Int
    var connections: Int
    var notifications: Int
    var malformed: [TraceMalformation: Int]
    /// Neighbours some adapter takes (address: adapter id), though they give nothing.
    var matched: [String: String] = [:]

    var testDescription: String { file }
}
