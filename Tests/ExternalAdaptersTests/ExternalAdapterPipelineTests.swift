import AdapterKit
import BLEWire
import CaptureFormats
import ExternalAdapters
import Foundation
import HealthModel
import Pipeline
import SQLiteStore
import TestSupport
import Testing
import Transport
import XiaomiScale

/// The "done when": a Python script dropped into a plugin directory decodes a BLE scale
/// from a replayed capture into the store, with no rebuild; grants are enforced by the pipeline.
@Suite("External adapters end to end", .offCooperativePool)
struct ExternalAdapterPipelineTests {
    let utc = TimeZone(identifier: "UTC")!

    /// An HCI LE Advertising Report event (Core spec Vol 4 Part E 7.7.65.2) with one ADV_IND report.
    func advertisingReport(address: BLEAddress, data: [UInt8], rssi: Int8) -> [UInt8] {
        let parameters: [UInt8] = [0x02, 0x01, 0x00, 0x00] + address.littleEndianBytes + [UInt8(data.count)] + data
            + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    /// A btsnoop capture with the Mi scale broadcasting one reading five times, then stepping off.
    func writeCapture(to path: String) throws {
        let address = try #require(BLEAddress(miScaleAddress))
        let writer = try BTSnoopWriter(path: path)
        let name = Array("MI_SCALE".utf8)
        func data(_ frame: [UInt8]) -> [UInt8] {
            [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name + [UInt8(frame.count + 3), 0x16, 0x1D, 0x18] + frame
        }
        let stable = hex(miScaleStableFrame)
        var removed = stable
        removed[0] |= 0x80
        let frames = Array(repeating: stable, count: 5) + [removed]
        for (index, frame) in frames.enumerated() {
            try writer.write(type: .event, direction: .received, timestamp: 1_618_150_000_000_000 + Int64(index) * 100_000,
                             packet: advertisingReport(address: address, data: data(frame), rssi: -58))
        }
        try writer.close()
    }

    /// Replays the capture through HCITraceDecoder → AdapterRouter, as `ingestd replay` does.
    func replay(_ path: String, adapters: [any BLEAdapter], forced: String? = nil) throws -> AdapterOutput {
        let reader = try CaptureFile.open(path: path)
        let router = try AdapterRouter(adapters: adapters, forcedAdapterID: forced, timeZone: utc)
        var decoder = HCITraceDecoder()
        var output = AdapterOutput()
        while let record = try reader.next() {
            for event in decoder.process(record) { router.route(event, into: &output) }
        }
        for event in decoder.finish() { router.route(event, into: &output) }
        router.finish(into: &output)
        return output
    }

    struct Setup {
        let plugins: PluginDirectory
        let capture: String
        let store: HealthStore
        let storeDirectory: String
        let catalogue: ExternalAdapterCatalogue
    }

    func setUp() throws -> Setup {
        let plugins = try PluginDirectory()
        try plugins.install("scale.py", as: "py-scale")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-e2e-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let capture = work + "/mi-scale.btsnoop"
        try writeCapture(to: capture)
        let store = try HealthStore(path: work + "/health.sqlite")
        let catalogue = ExternalAdapterCatalogue.load(directories: [plugins.path], reservedIDs: [XiaomiScaleAdapter.id],
                                                      configuration: testConfiguration())
        return Setup(plugins: plugins, capture: capture, store: store, storeDirectory: work, catalogue: catalogue)
    }

    @Test("A Python plugin decodes the scale in a replayed btsnoop capture into the store")
    func pythonScaleIntoStore() throws {
        let setup = try setUp()
        defer {
            setup.store.close()
            try? FileManager.default.removeItem(atPath: setup.storeDirectory)
        }
        try setup.store.grant(source: "py-scale", types: [.bodyMass])
        let output = try replay(setup.capture, adapters: setup.catalogue.adapters)
        #expect(output.rejections.isEmpty)
        let pipeline = try Pipeline(store: setup.store, now: { Date(timeIntervalSince1970: 1_800_000_000) })
        let report = try pipeline.ingest(output.records)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.written == 1)

        let stored = try setup.store.samples(type: .bodyMass)
        let sample = try #require(stored.first)
        #expect(stored.count == 1)
        #expect(sample.quantity.value == 86.55)
        #expect(sample.source == "py-scale")
        #expect(sample.start == ISO8601DateTime.date(from: "2021-04-11T16:19:01Z"))
        #expect(sample.device?.localIdentifier == miScaleAddress)
        #expect(sample.metadata.syncIdentifier == "\(miScaleAddress)/2021-04-11T16:19:01Z/17310")

        // Replaying the capture again changes nothing: the sync identifier makes it the same sample.
        let again = try pipeline.ingest(try replay(setup.capture, adapters: setup.catalogue.adapters).records)
        #expect(again.perType[QuantityType.bodyMass.identifier]?.written == 0)
        #expect(try setup.store.samples(type: .bodyMass).count == 1)
    }

    @Test("Without a grant the plugin's samples are held by the pipeline and nothing is stored")
    func grantsEnforced() throws {
        let setup = try setUp()
        defer {
            setup.store.close()
            try? FileManager.default.removeItem(atPath: setup.storeDirectory)
        }
        try setup.store.grant(source: XiaomiScaleAdapter.id, types: [.bodyMass])  // another source's grant does not count
        let output = try replay(setup.capture, adapters: setup.catalogue.adapters)
        #expect(output.records.count == 1)
        let report = try Pipeline(store: setup.store, now: { Date(timeIntervalSince1970: 1_800_000_000) }).ingest(output.records)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.held == 1)
        #expect(report.grantHints == ["ingestd auth grant py-scale bodyMass"])
        #expect(try setup.store.samples(type: .bodyMass).isEmpty)
    }

    @Test("Every matching adapter hears the broadcast (each its own source); --adapter routes it to the plugin alone")
    func routingWithBuiltIns() throws {
        let setup = try setUp()
        defer {
            setup.store.close()
            try? FileManager.default.removeItem(atPath: setup.storeDirectory)
        }
        let adapters: [any BLEAdapter] = [XiaomiScaleAdapter()] + setup.catalogue.adapters
        #expect(try replay(setup.capture, adapters: adapters).records.flatMap(\.samples).map(\.source).sorted()
                == ["py-scale", "xiaomi-scale"])
        #expect(try replay(setup.capture, adapters: adapters, forced: "py-scale").records.flatMap(\.samples).map(\.source) == ["py-scale"])
    }
}
