import AdapterKit
import BLEWire
import BuiltinAdapters
import CaptureFormats
import Foundation
import HealthModel
@testable import IngestRuntime
import Testing
import Transport

/// The fixtures in `Captures/<adapter-id>/`, BLE and USB (see each folder's ORIGIN and the
/// `make-captures.py` beside the synthetic ones).
enum Captures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Captures")
    /// The folder of real captures that no adapter supports.
    static let unsupportedFolder = "unsupported"
    /// The zone the expected files were written for (`ingestd decode --tz Europe/Berlin`).
    static let zoneName = "Europe/Berlin"
    static let captureExtensions: Set<String> = ["btsnoop", "pcapng", "pcap"]
    /// Folders whose captures are compared with something other than an `.expected.jsonl`, and by which tests:
    /// the Omron vendor sessions are checked day by day against the vendor software's own CSV export.
    static let comparedWithVendorExports: [String: String] = [
        "omron-hj720it": "DecodeOmronVendorCaptureTests, OmronPedometerSessionTests (pedometerDataN.csv)",
    ]

    /// Every built-in adapter id, BLE then USB, in registry order.
    static var adapterIDs: [String] {
        BuiltinAdapters.bluetooth.map(\.descriptor.id) + BuiltinAdapters.usb.map(\.descriptor.id)
    }

    /// The sub-folders, sorted.
    static var folders: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            let path = directory.appendingPathComponent(name).path
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }.sorted()
    }

    /// Every capture of every folder.
    static var all: [Fixture] {
        folders.flatMap { folder in
            let folderURL = directory.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folderURL.path)) ?? []
            return names.sorted().compactMap { file -> Fixture? in
                let url = folderURL.appendingPathComponent(file)
                guard captureExtensions.contains(url.pathExtension) else { return nil }
                return Fixture(folder: folder, name: url.deletingPathExtension().lastPathComponent, path: url.path)
            }
        }
    }

    /// Captures of the adapter folders with an `.expected.jsonl`.
    static var withExpectedRecords: [Fixture] { all.filter { $0.expectedRecordsPath != nil } }
    /// `bad-` captures (they have an `.expected-error`).
    static var bad: [Fixture] { all.filter(\.isBad) }
    /// Captures with a `-fragmented` twin.
    static var withFragmentedTwin: [Fixture] {
        let everything = all
        return everything.filter { fixture in
            everything.contains { $0.folder == fixture.folder && $0.name == fixture.name + "-fragmented" }
        }
    }

    static func timeZone() throws -> TimeZone {
        try #require(TimeZone(identifier: zoneName))
    }
}

/// One capture file in the fixtures.
struct Fixture: Sendable, CustomTestStringConvertible {
    /// The folder: an adapter id, or `unsupported`.
    var folder: String
    /// The file name without extension, e.g. `weight-scale-fragmented`.
    var name: String
    var path: String

    var isBad: Bool { name.hasPrefix("bad-") }
    /// A real device's log (not generated): it may hold other devices' advertisements too.
    var isReal: Bool { name.hasPrefix("real-") }
    var testDescription: String { "\(folder)/\(name)" }
    /// Whether this is a usbmon capture (replayed through the USB adapters).
    var isUSB: Bool { CaptureReplay.isUSBCapture(path: path) }

    /// The `--adapter-option` values the expected output was written for: `<name>.adapter-options`, one
    /// `key=value` a line (none when the file is absent).
    func adapterOptions() throws -> [String: String] {
        guard let path = sibling(".adapter-options") else { return [:] }
        var options: [String: String] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            let pair = try #require(parts.count == 2 ? parts : nil, "\(path): not key=value: \(line)")
            options[pair[0]] = pair[1]
        }
        return options
    }

    /// The `--adapter-option` arguments of `ingestd decode` for this capture.
    func adapterOptionArguments() throws -> [String] {
        try adapterOptions().sorted { $0.key < $1.key }.flatMap { ["--adapter-option", "\($0.key)=\($0.value)"] }
    }

    private func sibling(_ suffix: String) -> String? {
        let path = URL(fileURLWithPath: self.path).deletingLastPathComponent()
            .appendingPathComponent(name + suffix).path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    var expectedRecordsPath: String? { sibling(".expected.jsonl") }
    var expectedErrorPath: String? { sibling(".expected-error") }

    /// The `-fragmented` twin of this capture.
    var fragmentedTwin: Fixture? {
        sibling("-fragmented.btsnoop").map { Fixture(folder: folder, name: name + "-fragmented", path: $0) }
    }

    /// The expected records, one JSON line each.
    func expectedRecords() throws -> [String] {
        let path = try #require(expectedRecordsPath, "\(testDescription) has no .expected.jsonl")
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// The expected rejection lines.
    func expectedErrors() throws -> [String] {
        let path = try #require(expectedErrorPath, "\(testDescription) has no .expected-error")
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }
}

/// What a capture gives when replayed as `ingestd decode` does.
struct Replayed {
    /// The records as `ingestd decode --json` prints them.
    var lines: [String]
    /// The summary `ingestd decode` prints to stderr.
    var summary: CaptureReplay.Summary
    /// Every adapter rejection, in order (from a second pass with the same components, since
    /// the summary keeps only counts and one example per reason).
    var rejections: [AdapterRejection]
    /// What each device advertised or exposed, as the router saw it.
    var traits: [BLEAddress: BLEDeviceTraits]

    /// Rejections as `<adapter>: <reason>: <detail>`, then trace malformations as
    /// `trace: <malformation> <count>`: the format of `.expected-error` files.
    var errorLines: [String] {
        rejections.map(\.description)
            + summary.statistics.malformed.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "trace: \($0.key.rawValue) \($0.value)" }
    }

    /// Replays a usbmon capture through `CaptureReplay.runUSB` (the code behind `ingestd decode` of a USB
    /// capture) with the built-in USB adapters; USB sessions report rejections only as counts in the summary.
    init(usbPath path: String, options: [String: String]) throws {
        let replay = CaptureReplay(adapters: [], forcedAdapterID: nil, timeZone: try Captures.timeZone())
        let encoder = HealthRecordEncoder()
        var lines: [String] = []
        summary = try replay.runUSB(path: path, adapters: BuiltinAdapters.usb, forcedDevice: nil, options: options) { records, _ in
            lines += records.map(encoder.encode)
            return DeliveryReceipt(stored: records.count, held: 0)
        }
        self.lines = lines
        rejections = []
        traits = [:]
    }

    /// Replays a fixture as `ingestd decode` would, BLE or USB.
    init(_ fixture: Fixture) async throws {
        if fixture.isUSB {
            try self.init(usbPath: fixture.path, options: try fixture.adapterOptions())
        } else {
            try await self.init(path: fixture.path, options: try fixture.adapterOptions())
        }
    }

    /// Replays `path` through `CaptureReplay`, the code behind `ingestd decode` and `ingestd replay`.
    init(path: String, adapters: [any BLEAdapter] = BuiltinAdapters.bluetooth, options: [String: String] = [:]) async throws {
        let zone = try Captures.timeZone()
        var replay = CaptureReplay(adapters: adapters, forcedAdapterID: nil, timeZone: zone)
        replay.options = options
        let encoder = HealthRecordEncoder()
        var lines: [String] = []
        summary = try await replay.run(path: path) { records in lines += records.map(encoder.encode) }
        self.lines = lines

        // Second pass for the device traits.
        let reader = try CaptureFile.open(path: path)
        let router = try AdapterRouter(adapters: adapters, timeZone: zone)
        var decoder = HCITraceDecoder()
        var output = AdapterOutput()
        var traits: [BLEAddress: BLEDeviceTraits] = [:]
        var connections: [UInt16: BLEAddress] = [:]
        while let record = try reader.next() {
            for event in decoder.process(record) {
                switch event {
                case .advertisement(let advertisement):
                    traits[advertisement.address, default: BLEDeviceTraits(address: advertisement.address)]
                        .absorb(advertisement)
                case .connected(let connection):
                    connections[connection.handle] = connection.peerAddress
                case .gattValue(let value):
                    if let address = value.peerAddress ?? connections[value.connection], let service = value.serviceUUID {
                        traits[address, default: BLEDeviceTraits(address: address)].serviceUUIDs.insert(service)
                    }
                case .disconnected, .subscriptionChanged:
                    break
                }
                router.route(event, into: &output)
            }
        }
        router.finish(into: &output)
        rejections = summary.rejectionLog
        self.traits = traits
    }
}

/// A JSON value for comparing records structurally.
indirect enum JSONTree: Decodable, Equatable, CustomStringConvertible {
    case object([String: JSONTree])
    case array([JSONTree])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONTree].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }

    /// Parses one JSON line.
    init(line: String) throws {
        self = try JSONDecoder().decode(JSONTree.self, from: Data(line.utf8))
    }

    /// The same tree without `uuid` members (generated afresh on every decode).
    var withoutUUIDs: JSONTree {
        switch self {
        case .object(let members):
            .object(members.filter { $0.key != "uuid" }.mapValues(\.withoutUUIDs))
        case .array(let elements):
            .array(elements.map(\.withoutUUIDs))
        default:
            self
        }
    }

    var description: String {
        switch self {
        case .object(let members):
            "{" + members.keys.sorted().map { "\"\($0)\":\(members[$0]?.description ?? "")" }.joined(separator: ",") + "}"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ",") + "]"
        case .string(let string): "\"\(string)\""
        case .number(let number): "\(number)"
        case .bool(let bool): "\(bool)"
        case .null: "null"
        }
    }
}

/// Compares JSON lines ignoring `uuid`; records every difference as a test issue.
func expectSameRecords(_ actual: [String], _ expected: [String], _ what: String,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(actual.count == expected.count, "\(what): \(actual.count) records, expected \(expected.count)",
            sourceLocation: sourceLocation)
    for (index, (got, want)) in zip(actual, expected).enumerated() {
        let gotTree = try JSONTree(line: got).withoutUUIDs
        let wantTree = try JSONTree(line: want).withoutUUIDs
        #expect(gotTree == wantTree, "\(what) record \(index + 1):\n  got  \(gotTree)\n  want \(wantTree)",
                sourceLocation: sourceLocation)
    }
}
