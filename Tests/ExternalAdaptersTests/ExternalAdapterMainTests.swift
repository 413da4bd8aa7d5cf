import AdapterKit
import ExternalAdapterProtocol
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport
import XiaomiScale

@Suite("ExternalAdapterMain")
struct ExternalAdapterMainTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    func traits() throws -> BLEDeviceTraits {
        BLEDeviceTraits(address: try #require(BLEAddress(miScaleAddress)), name: "MI_SCALE", serviceUUIDs: [BLEUUID(0x181D)])
    }

    func advertisement(_ frame: String, offset: TimeInterval = 0) throws -> BLEAdvertisement {
        try makeAdvertisement(address: miScaleAddress, name: "MI_SCALE", serviceData: [(0x181D, hex(frame))],
                              time: Date(timeIntervalSince1970: 1_618_150_000 + offset))
    }

    /// What the built-in adapter makes of the advertisements in-process.
    func builtInSamples(_ advertisements: [BLEAdvertisement]) throws -> [QuantitySample] {
        let session = XiaomiScaleAdapter().makeSession(for: try traits(), context: AdapterContext(timeZone: berlin, source: "xiaomi-scale"))
        var output = AdapterOutput()
        for advertisement in advertisements { session.receive(.advertisement(advertisement), into: &output) }
        session.finish(into: &output)
        return samples(output)
    }

    @Test("--describe prints the adapter's descriptor as one JSON line")
    func describe() {
        var lines: [String] = []
        let status = ExternalAdapterMain.serve(XiaomiScaleAdapter(), arguments: ["--describe"], readLine: { nil },
                                               writeLine: { lines.append($0) }, writeError: { _ in })
        #expect(status == 0)
        #expect(lines == [ExternalDescriptorCodec.encode(XiaomiScaleAdapter().descriptor)])
    }

    @Test("--run turns stdin lines into the adapter's records, rejections into log lines, and ends with done")
    func run() throws {
        let advertisements = [try advertisement(miScaleStableFrame), try advertisement(miScaleStableFrame, offset: 1)]
        var input = [ExternalInputCodec.encodeDeviceLine(.ble(try traits()), timeZone: berlin), ""]
            + advertisements.map(ExternalInputCodec.encodeAdvertisementLine)
            + [ExternalInputCodec.encodeAdvertisementLine(try advertisement("22 9e 43"))]  // too short
        input.reverse()
        var lines: [String] = []
        let status = ExternalAdapterMain.serve(XiaomiScaleAdapter(), arguments: ["--run"], readLine: { input.popLast() },
                                               writeLine: { lines.append($0) }, writeError: { _ in })
        #expect(status == 0)
        try #require(lines.count == 3)
        let record = try HealthRecordDecoder(defaultSource: "unused").decodeLine(lines[0])
        #expect(record.samples.map(withoutUUID) == (try builtInSamples(advertisements)).map(withoutUUID))
        #expect(lines[1].hasPrefix(#"{"log":{"level":"warning","message":"short-frame: "#))
        #expect(lines[2] == ExternalOutputLine.done)
    }

    @Test("Unknown arguments are a usage error")
    func usage() {
        var errors: [String] = []
        let status = ExternalAdapterMain.serve(XiaomiScaleAdapter(), arguments: ["--frobnicate"], readLine: { nil },
                                               writeLine: { _ in }, writeError: { errors.append($0) })
        #expect(status == 64)
        #expect(errors == ["usage: ingestd-adapter-xiaomi-scale --describe | --run  (ingestd external adapter protocol 1)"])
    }

    /// `ingestd-adapter-xiaomi-scale` next to the test bundle (SwiftPM builds all products there).
    static var executable: String? {
        var candidates: [URL] = []
        if let url = Bundle.main.executableURL { candidates.append(url.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        return candidates.map { $0.appendingPathComponent("ingestd-adapter-xiaomi-scale").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("The built ingestd-adapter-xiaomi-scale executable, run as an external adapter, gives what the built-in gives")
    func builtExecutable() throws {
        let path = try #require(Self.executable, "ingestd-adapter-xiaomi-scale is not built")
        let adapter = try loadAdapter(path, id: "xiaomi-scale", configuration: testConfiguration())
        #expect(adapter.descriptor == XiaomiScaleAdapter().descriptor)

        let advertisements = [try advertisement(miScaleStableFrame), try advertisement(miScaleStableFrame, offset: 1)]
        let session = adapter.makeSession(for: try traits(), context: AdapterContext(timeZone: berlin, source: "xiaomi-scale"))
        var output = AdapterOutput()
        for advertisement in advertisements { session.receive(.advertisement(advertisement), into: &output) }
        session.finish(into: &output)
        #expect(output.rejections.isEmpty)
        let external = samples(output)
        #expect(external.count == 1)
        #expect(external.map(withoutUUID) == (try builtInSamples(advertisements)).map(withoutUUID))
        #expect(adapter.supervisor.statistics.failures == 0)
    }
}
