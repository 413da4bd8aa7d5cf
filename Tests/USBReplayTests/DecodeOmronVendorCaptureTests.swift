import Foundation
import TestSupport
import Testing

/// `ingestd decode` on the straight conversions of the Omron software's own sessions (pedometerLogN.pcapng, not the
/// re-sequenced -session files): the vendor program's extra requests (PRF00, repeated hand-shakes, other modes) sit
/// between the exchanges ingestd makes, and the tolerant replay passes over them. Every day the capture holds must
/// come out as the vendor exported it.
@Suite(.serialized) struct DecodeOmronVendorCaptureTests {
    static let folder = "AdapterTests/Captures/omron-hj720it"

    struct Decoded {
        var output: IngestdProcess.Output
        var samples: [DecodedSample]

        /// Hourly steps per day (UTC).
        var hourly: [String: [Int]] {
            var days: [String: [Int]] = [:]
            for sample in samples where sample.type == "HKQuantityTypeIdentifierStepCount" {
                let (day, hour) = DecodeOmronVendorCaptureTests.dayAndHour(sample.start)
                days[day, default: Array(repeating: 0, count: 24)][hour] += Int(sample.value)
            }
            return days
        }

        var distances: [String: DecodedSample] {
            Dictionary(samples.filter { $0.type == "HKQuantityTypeIdentifierDistanceWalkingRunning" }
                .map { (DecodeOmronVendorCaptureTests.dayAndHour($0.start).0, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    static func dayAndHour(_ date: Date) -> (String, Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.year, .month, .day, .hour], from: date)
        return (String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0), parts.hour ?? -1)
    }

    static func decode(log: Int, options: [String] = []) async throws -> Decoded {
        let output = try await IngestdProcess.run(["decode", Fixtures.path("\(folder)/pedometerLog\(log).pcapng"), "--usb", "0590:0028",
                                             "--json", "--tz", "UTC"] + options.flatMap { ["--adapter-option", $0] })
        return Decoded(output: output, samples: try output.lines.map { try DecodedSample(json: $0) })
    }

    /// Every hour and the totals of `days` equal the export's rows of the same dates; no other day has samples.
    static func expectVendorExport(_ decoded: Decoded, csv: Int, days: Set<String>) throws {
        let export = try OmronVendorCSV(path: Fixtures.path("\(folder)/pedometerData\(csv).csv"))
        let hourly = decoded.hourly
        #expect(Set(hourly.keys) == days)
        var compared = 0
        for day in export.days where days.contains(day.date) {
            compared += 1
            let stored = hourly[day.date] ?? []
            #expect(stored == day.hourlySteps, "hourly steps of \(day.date)")
            #expect(stored.reduce(0, +) == day.totalSteps, "total steps of \(day.date)")
            let distance = try #require(decoded.distances[day.date], "distance of \(day.date)")
            #expect(abs(distance.value - day.distance * 1609.344) < 1e-6, "distance of \(day.date)")
            #expect(distance.unit == "m")
            #expect(distance.end.timeIntervalSince(distance.start) == 86_400)
            #expect(distance.metadata["IngestOmronTotalSteps"] == Double(day.totalSteps), "\(day.date)")
            #expect(distance.metadata["IngestOmronAerobicSteps"] == Double(day.aerobicSteps), "\(day.date)")
            #expect(distance.metadata["IngestOmronKilocalories"] == Double(day.kilocalories), "\(day.date)")
        }
        #expect(compared == days.count, "the export has every day the capture holds")
        #expect(decoded.samples.allSatisfy { $0.source == "omron-hj720it" && $0.deviceIdentifier == "HJ7208Y125980" })
    }

    @Test func theFirstSessionGivesEveryExportedDay() async throws {
        let decoded = try await Self.decode(log: 1)
        #expect(decoded.output.status == 0, "\(decoded.output.stderr)")
        let export = try OmronVendorCSV(path: Fixtures.path("\(Self.folder)/pedometerData1.csv"))
        #expect(export.days.count == 7)
        try Self.expectVendorExport(decoded, csv: 1, days: Set(export.days.map(\.date)))
        #expect(decoded.samples.filter { $0.type == "HKQuantityTypeIdentifierStepCount" }.count == 61)
        #expect(decoded.distances.count == 7)
        // Every request ingestd makes is in the vendor's session: nothing was answered from elsewhere.
        #expect(decoded.output.stderr.contains("USB device 0590:0028 bus 001 address 002 → adapter omron-hj720it"))
        #expect(decoded.output.stderr.contains("writes not in the capture: 0"))
        #expect(!decoded.output.stderr.contains("session ended"))
    }

    /// The vendor software read only the days not yet transferred; ingestd asks for every stored day. The days in
    /// the capture come out exactly; for the first day it never asked about the summary says how many requests the
    /// capture lacks and why the session ended.
    @Test(arguments: [(2, ["2009-05-20", "2009-05-21"]), (3, ["2009-05-21"])])
    func laterSessionsGiveTheDaysTheyRead(log: Int, days: [String]) async throws {
        let decoded = try await Self.decode(log: log)
        #expect(decoded.output.status == 0, "\(decoded.output.stderr)")
        try Self.expectVendorExport(decoded, csv: log, days: Set(days))
        let notInCapture = try #require(decoded.output.stderr.split(separator: "\n")
            .first { $0.contains("writes not in the capture:") })
        #expect(!notInCapture.hasSuffix(": 0"), "\(decoded.output.stderr)")
        #expect(decoded.output.stderr.contains("session ended: omron-hj720it: no usable reply to GTD 00 00 0\(days.count)"),
                "\(decoded.output.stderr)")
    }

    /// Asked for the new days only, as the vendor software did, the session finds every request in the capture.
    @Test(arguments: [(2, ["2009-05-20", "2009-05-21"]), (3, ["2009-05-21"])])
    func askingForTheNewDaysFollowsTheVendorSession(log: Int, days: [String]) async throws {
        let decoded = try await Self.decode(log: log, options: ["omron-days=new"])
        #expect(decoded.output.status == 0, "\(decoded.output.stderr)")
        try Self.expectVendorExport(decoded, csv: log, days: Set(days))
        #expect(decoded.output.stderr.contains("writes not in the capture: 0"), "\(decoded.output.stderr)")
        #expect(!decoded.output.stderr.contains("session ended"))
    }

    /// Issue 10, finding 8: a damaged last block discarded the whole session (0 of 68 samples). What came before the
    /// damage is decoded, the damage is reported with its offset, and the exit status says the input was bad.
    @Test func aDamagedLastBlockKeepsTheSamplesBeforeIt() async throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("\(Self.folder)/pedometerLog1.pcapng"))))
        // Walk the blocks (little-endian capture: type, total length, …) to the last one.
        var offset = 0
        var last = 0
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            guard length >= 12, offset + length <= bytes.count else { break }
            last = offset
            offset += length
        }
        #expect(offset == bytes.count, "the fixture is a whole number of blocks")
        #expect(last > 0)
        // An impossible total length in the last block's header.
        bytes.replaceSubrange(last + 4..<last + 8, with: [0xF0, 0xFF, 0xFF, 0x7F])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("damaged-omron-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let damaged = directory.appendingPathComponent("pedometerLog1-damaged.pcapng")
        try Data(bytes).write(to: damaged)

        let output = try await IngestdProcess.run(["decode", damaged.path, "--usb", "0590:0028", "--json", "--tz", "UTC"])
        let samples = try output.lines.map { try DecodedSample(json: $0) }
        let whole = try await Self.decode(log: 1)
        #expect(whole.samples.count == 68)
        #expect(samples == whole.samples, "the last block holds no answer the session uses: nothing is lost")
        #expect(output.status == 65)
        #expect(output.stderr.contains("impossible record length 2147483632 at byte \(last)"), "\(output.stderr)")
    }
}
