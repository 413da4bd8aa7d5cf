import AdapterKit
import CaptureFormats
import Foundation
import HealthModel
import OmronPedometer
import Pipeline
import SQLiteStore
import TestSupport
import Testing
import Transport

/// The Omron session run against the three real HJ-720IT captures, compared with the vendor's CSV exports.
struct OmronPedometerSessionTests {
    static let utc = TimeZone(identifier: "UTC") ?? .current

    /// Download times that fall in the hour each capture shows as in progress (see the fixtures' ORIGIN).
    static let downloadTimes = [1: "2009-05-20T11:30:00Z", 2: "2009-05-21T09:30:00Z", 3: "2009-05-21T10:30:00Z"]

    struct Run {
        var outputs: [AdapterOutput] = []
        var device: OmronExchangeDevice
        var error: (any Error)?

        var samples: [QuantitySample] { outputs.flatMap(\.records).flatMap(\.samples) }
        var stepSamples: [QuantitySample] { samples.filter { $0.type == .stepCount } }
        var distanceSamples: [QuantitySample] { samples.filter { $0.type == .distanceWalkingRunning } }
    }

    static func date(_ text: String) -> Date {
        (try? Date(text, strategy: .iso8601)) ?? Date(timeIntervalSince1970: 0)
    }

    /// - Parameter commit: what the daemon's commit made of the batch (default: everything stored).
    static func run(log: Int, options: [String: String] = [:], device: OmronExchangeDevice? = nil,
                    failDelivery: Bool = false,
                    commit: (AdapterOutput) throws -> DeliveryReceipt = { .storedAll($0) }) throws -> Run {
        let fake = try device ?? OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog\(log).pcapng"))
        let now = date(downloadTimes[log] ?? "")
        let adapter = OmronPedometerAdapter()
        let session = adapter.makeSession(for: fake.device, context: AdapterContext(timeZone: utc, source: "omron-hj720it", now: { now }),
                                          options: options)
        var run = Run(device: fake)
        do {
            try session.run(fake, deliver: { output in
                fake.markDelivery()
                if failDelivery { throw USBError.io("commit failed") }
                run.outputs.append(output)
                return try commit(output)
            }, shouldStop: { false })
        } catch {
            run.error = error
        }
        return run
    }

    static func csv(_ number: Int) throws -> OmronVendorCSV {
        try OmronVendorCSV(url: Fixtures.url("omron-hj720it/pedometerData\(number).csv"))
    }

    static func dayAndHour(_ date: Date) -> (String, Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let parts = calendar.dateComponents([.year, .month, .day, .hour], from: date)
        return (String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0), parts.hour ?? -1)
    }

    /// Hourly steps per day as the session stored them.
    static func hourly(_ run: Run) -> [String: [Int]] {
        var days: [String: [Int]] = [:]
        for sample in run.stepSamples {
            let (day, hour) = dayAndHour(sample.start)
            days[day, default: Array(repeating: 0, count: 24)][hour] += Int((try? sample.value(in: .count)) ?? -1)
        }
        return days
    }

    /// Compares every hour and the day totals of `days` with the CSV rows of the same dates.
    static func expectMatches(_ run: Run, csv: OmronVendorCSV, days: Set<String>) throws {
        let hourly = hourly(run)
        #expect(Set(hourly.keys).isSubset(of: days), "steps stored for days the vendor did not export")
        for day in csv.days where days.contains(day.date) {
            let stored = hourly[day.date] ?? Array(repeating: 0, count: 24)
            #expect(stored == day.hourlySteps, "hourly steps of \(day.date)")
            #expect(stored.reduce(0, +) == day.totalSteps, "total steps of \(day.date)")
            let distance = try #require(run.distanceSamples.first { dayAndHour($0.start).0 == day.date },
                                        "distance of \(day.date)")
            #expect(abs(try distance.value(in: .meter) - day.distance * 1609.344) < 1e-6, "distance of \(day.date)")
            #expect(distance.duration == 86_400)
            #expect(distance.metadata.entries["IngestOmronTotalSteps"] == .number(Double(day.totalSteps)))
            #expect(distance.metadata.entries["IngestOmronAerobicSteps"] == .number(Double(day.aerobicSteps)))
            #expect(distance.metadata.entries["IngestOmronAerobicWalkingMinutes"] == .number(Double(day.aerobicMinutes)))
            #expect(distance.metadata.entries["IngestOmronKilocalories"] == .number(Double(day.kilocalories)))
            #expect(distance.metadata.entries["IngestOmronFatBurnedGrams"] == .number(day.fatGrams))
            let aerobic = run.stepSamples.filter { dayAndHour($0.start).0 == day.date }
                .reduce(0) { total, sample in
                    if case .number(let value) = sample.metadata.entries["IngestOmronAerobicSteps"] { total + Int(value) } else { total }
                }
            #expect(aerobic == day.aerobicSteps, "aerobic steps of \(day.date)")
        }
    }

    @Test func firstCaptureDecodesToTheVendorExportForEveryDay() throws {
        let run = try Self.run(log: 1)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.outputs.count == 1)
        let csv = try Self.csv(1)
        #expect(csv.days.count == 7)
        try Self.expectMatches(run, csv: csv, days: Set(csv.days.map(\.date)))
        // Days 7-9 of the device (before 5/14) are empty: nothing stored for them.
        #expect(Set(Self.hourly(run).keys) == Set(csv.days.map(\.date)))
        #expect(run.distanceSamples.count == 7)
        #expect(run.device.unanswered.isEmpty)
    }

    @Test func secondAndThirdCapturesMatchTheirExportsForTheDaysTheyRead() throws {
        let second = try Self.run(log: 2, options: ["omron-days": "new"])
        #expect(second.error == nil, "\(String(describing: second.error))")
        try Self.expectMatches(second, csv: try Self.csv(2), days: ["2009-05-20", "2009-05-21"])
        #expect(Set(Self.hourly(second).keys) == ["2009-05-20", "2009-05-21"])

        let third = try Self.run(log: 3, options: ["omron-days": "new"])
        #expect(third.error == nil, "\(String(describing: third.error))")
        try Self.expectMatches(third, csv: try Self.csv(3), days: ["2009-05-21"])
        #expect(Set(Self.hourly(third).keys) == ["2009-05-21"])
    }

    /// Through CaptureFormats' ReplayUSBDevice, the transport's own strict replay of usbmon captures, on the
    /// re-sequenced fixtures (`--omron-session`): every written report must equal the logged one byte for byte,
    /// every logged transfer is used, and the session's clock is the capture's time.
    @Test(arguments: [(1, "all"), (2, "new"), (3, "new")])
    func replayUSBDeviceRunsTheSessionOnEachCapture(log: Int, days: String) throws {
        let replay = try ReplayUSBDevice.open(path: Fixtures.url("omron-hj720it/pedometerLog\(log)-session.pcapng").path)
        #expect(replay.device.vendorID == 0x0590 && replay.device.productID == 0x0028)
        let adapter = OmronPedometerAdapter()
        #expect(adapter.descriptor.matches(replay.device))
        let captureClock: @Sendable () -> Date = { Date(timeIntervalSince1970: Double(replay.timestamp ?? 0) / 1_000_000) }
        let session = adapter.makeSession(for: replay.device,
                                          context: AdapterContext(timeZone: Self.utc, source: "omron-hj720it", now: captureClock),
                                          options: ["clear-after-sync": "true", "omron-days": days])
        var outputs: [AdapterOutput] = []
        let recorder = RecordingUSBDevice(wrapping: replay)
        try session.run(recorder, deliver: { output in
            recorder.markDelivery()
            outputs.append(output)
            return .storedAll(output)
        }, shouldStop: { false })
        #expect(replay.isFinished)
        // The clear command (CTD00) goes out only after the batch was handed over.
        let delivered = try #require(recorder.log.firstIndex(of: "deliver"))
        let cleared = try #require(recorder.log.firstIndex(of: "write 05 43 54 44 30 30 00 00"))
        #expect(delivered < cleared)
        #expect(recorder.log.last == "write 05 45 4e 44 ff ff 00 00")
        var run = Run(device: try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog\(log).pcapng")))
        run.outputs = outputs
        let csv = try Self.csv(log)
        let days: Set<String> = switch log {
        case 1: Set(csv.days.map(\.date))
        case 2: ["2009-05-20", "2009-05-21"]
        default: ["2009-05-21"]
        }
        try Self.expectMatches(run, csv: csv, days: days)
        #expect(Set(Self.hourly(run).keys) == days)
    }

    @Test func theSessionSpeaksTheProtocolInOrder() throws {
        let run = try Self.run(log: 1)
        let log = run.device.log
        #expect(Array(log.prefix(5)) == ["mode 01 02", "clear", "VER00", "SRL00", "CNT00"])
        let blocks = log.filter { $0.hasPrefix("GTD") }
        #expect(blocks.count == 40)
        #expect(blocks.first == "GTD 00 00 00 01 01")
        #expect(blocks.last == "GTD 00 00 09 04 0d")
        #expect(Array(log.suffix(2)) == ["deliver", "END ff ff"])
        #expect(run.device.claimed == [0])
    }

    @Test func memoryIsClearedOnlyWhenAskedAndOnlyAfterTheCommit() throws {
        let plain = try Self.run(log: 1)
        #expect(!plain.device.log.contains("CTD00"))

        let clearing = try Self.run(log: 1, options: ["clear-after-sync": "true"])
        #expect(clearing.error == nil)
        let log = clearing.device.log
        let delivered = try #require(log.firstIndex(of: "deliver"))
        let cleared = try #require(log.firstIndex(of: "CTD00"))
        #expect(delivered < cleared)
        #expect(log.last == "END ff ff")

        let failed = try Self.run(log: 1, options: ["clear-after-sync": "true"], failDelivery: true)
        #expect(failed.error != nil)
        #expect(!failed.device.log.contains("CTD00"))
        #expect(failed.device.log.last == "END ff ff")
    }

    /// Through the real pipeline and store: before any grant the history is only held (pending), so the device is
    /// not cleared even with `clear-after-sync=true`; after `auth grant` (which brings the held samples in with their
    /// original times) the next download is stored and only then cleared.
    @Test func aDeviceIsNotClearedWhileItsSamplesAreOnlyPending() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("omron-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try HealthStore(path: directory.appendingPathComponent("health.sqlite").path)
        defer { store.close() }
        let clock: @Sendable () -> Date = { Self.date("2009-05-22T00:00:00Z") }
        func commit(_ output: AdapterOutput) throws -> DeliveryReceipt {
            let totals = try Pipeline(store: store, now: clock).ingest(output.records).totals
            return DeliveryReceipt(stored: totals.written + totals.duplicate + totals.replaced, held: totals.held)
        }

        let undecided = try Self.run(log: 1, options: ["clear-after-sync": "true"], commit: commit)
        #expect(undecided.error == nil)
        #expect(undecided.device.log.contains("deliver"))
        #expect(!undecided.device.log.contains("CTD00"), "cleared while the samples were only pending")
        #expect(undecided.device.log.last == "END ff ff")
        #expect(try store.sourceTypeStatus().isEmpty)
        #expect(try store.pendingCounts() == ["omron-hj720it": undecided.samples.count])

        try store.grant(source: "omron-hj720it", types: [.stepCount, .distanceWalkingRunning])
        let release = try store.releaseHeld(source: "omron-hj720it", types: [.stepCount, .distanceWalkingRunning],
                                            all: false, through: try Pipeline(store: store, now: clock))
        #expect(release.report.totals.written == undecided.samples.count)
        #expect(try store.pendingCounts().isEmpty)

        let granted = try Self.run(log: 1, options: ["clear-after-sync": "true"], commit: commit)
        let log = granted.device.log
        let delivered = try #require(log.firstIndex(of: "deliver"))
        let cleared = try #require(log.firstIndex(of: "CTD00"))
        #expect(delivered < cleared)
    }

    @Test func rereadingTheHistoryGivesTheSameIdentitiesAndALaterReadReplacesOnlyGrownCounts() throws {
        func identities(_ run: Run) -> [String: Int] {
            Dictionary(run.samples.compactMap { sample in
                sample.metadata.syncIdentifier.map { ($0, sample.metadata.syncVersion ?? -1) }
            }, uniquingKeysWith: { first, _ in -1_000_000 + first })
        }
        let first = identities(try Self.run(log: 1))
        let again = identities(try Self.run(log: 1))
        #expect(first == again)
        #expect(first.count == (try Self.run(log: 1)).samples.count, "sync identifiers are unique")
        #expect(first["omron-hj720it:HJ7208Y125980:2009-05-16T08:steps"] == 6151)

        let next = identities(try Self.run(log: 2, options: ["omron-days": "new"]))
        let shared = Set(first.keys).intersection(next.keys)
        #expect(!shared.isEmpty)
        for key in shared {
            #expect(try #require(next[key]) >= (try #require(first[key])), "\(key)")
        }
        // 5/20 11:00 held 34 steps in both reads: the same version, so the store keeps the first.
        #expect(first["omron-hj720it:HJ7208Y125980:2009-05-20T11:steps"] == 34)
        #expect(next["omron-hj720it:HJ7208Y125980:2009-05-20T11:steps"] == 34)
        // The 5/20 distance grew from 0.13 to 0.48 miles: a higher version replaces it.
        #expect(first["omron-hj720it:HJ7208Y125980:2009-05-20:distance"] == 13)
        #expect(next["omron-hj720it:HJ7208Y125980:2009-05-20:distance"] == 48)
    }

    /// Through the real pipeline and store: a second read of the same history writes nothing; the next day's read
    /// replaces only the values that grew and adds the new ones.
    @Test func rereadingTheHistoryIntoTheStoreIsIdempotent() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("omron-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try HealthStore(path: directory.appendingPathComponent("health.sqlite").path)
        defer { store.close() }
        try store.grant(source: "omron-hj720it", types: [.stepCount, .distanceWalkingRunning])
        let pipeline = try Pipeline(store: store, now: { Self.date("2009-05-22T00:00:00Z") })
        func ingest(_ run: Run) throws -> TypeCounts {
            try pipeline.ingest(run.outputs.flatMap(\.records)).totals
        }
        let first = try Self.run(log: 1)
        let firstCounts = try ingest(first)
        #expect(firstCounts.written == first.samples.count)
        let again = try ingest(try Self.run(log: 1))
        #expect(again.written == 0 && again.replaced == 0)
        #expect(again.duplicate == first.samples.count)

        // Log 2 reads 5/20 (again, now complete) and 5/21. On 5/20 hours 9-11 are unchanged, hours 12-23 and the
        // distance are new or grown.
        let second = try Self.run(log: 2, options: ["omron-days": "new"])
        let counts = try ingest(second)
        #expect(counts.duplicate == 3)
        #expect(counts.replaced == 1)
        #expect(counts.written == second.samples.count - 4)
    }

    @Test func samplesNameTheDeviceAndTheirTimeZone() throws {
        let run = try Self.run(log: 3, options: ["omron-days": "new"])
        let sample = try #require(run.stepSamples.first)
        #expect(sample.device?.localIdentifier == "HJ7208Y125980")
        #expect(sample.device?.model == "HJ-720IT202")
        #expect(sample.metadata.deviceSerialNumber == "HJ7208Y125980")
        #expect(sample.metadata.timeZone == Self.utc.identifier)
        #expect(sample.source == "omron-hj720it")
        #expect(sample.duration == 3600)
    }

    @Test func aRefusedCommandIsSentAgain() throws {
        let device = try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog3.pcapng"))
        let recorded = try #require(device.answers["VER00"]?.first)
        device.answers["VER00"] = [[[0x02, 0x4E, 0x4F, 0, 0, 0, 0, 0]], recorded]
        let run = try Self.run(log: 3, options: ["omron-days": "new"], device: device)
        #expect(run.error == nil)
        #expect(run.device.log.filter { $0 == "VER00" }.count == 2)
        #expect(run.stepSamples.count == 3)
    }

    @Test func aBadChecksumIsRetriedAndReportedWithExpectedAndFound() throws {
        let device = try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog3.pcapng"))
        var corrupted = try #require(device.answers["CNT00"]?.first)
        // OK 00 00 0b 00 01 0a: the last byte is the checksum; 0x0b would be wrong.
        corrupted[corrupted.count - 1][1] ^= 0x01
        device.answers["CNT00"] = [corrupted]
        let run = try Self.run(log: 3, device: device)
        #expect(device.log.filter { $0 == "CNT00" }.count == OmronPedometerSession.attempts)
        let error = try #require(run.error as? OmronSessionError)
        guard case .badReply(let command, let attempts, .badChecksum(_, let expected, let found, _)) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(command == "CNT00")
        #expect(attempts == 3)
        #expect(expected == 0x0a)
        #expect(found == 0x0b)
        #expect(run.outputs.isEmpty)
    }

    @Test func silenceEndsTheSessionWithoutDelivering() throws {
        let device = try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog3.pcapng"))
        device.answers["SRL00"] = [[]]
        let run = try Self.run(log: 3, device: device)
        #expect(run.error as? OmronSessionError == .noReply(command: "SRL00", attempts: 3))
        #expect(run.outputs.isEmpty)
    }

    /// A day block that never comes (the device stops answering on day 3): days 0-2 were read completely and are
    /// delivered; nothing is cleared even when asked to; the session still says goodbye and reports the failure.
    @Test func daysReadBeforeTheHistoryBreaksOffAreDelivered() throws {
        let device = try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog1.pcapng"))
        device.answers["GTD 00 00 03 02 01"] = [[]]
        let run = try Self.run(log: 1, options: ["clear-after-sync": "true"], device: device)
        guard case .noReply(let command, let attempts)? = run.error as? OmronSessionError else {
            Issue.record("unexpected \(String(describing: run.error))")
            return
        }
        #expect(command == "GTD 00 00 03 02 01" && attempts == 3)
        #expect(run.outputs.count == 1)
        try Self.expectMatches(run, csv: try Self.csv(1), days: ["2009-05-18", "2009-05-19", "2009-05-20"])
        #expect(Set(Self.hourly(run).keys) == ["2009-05-18", "2009-05-19", "2009-05-20"])
        #expect(run.distanceSamples.count == 3)
        #expect(!device.log.contains("CTD00"))
        #expect(device.log.last == "END ff ff")
        let delivered = try #require(device.log.firstIndex(of: "deliver"))
        #expect(device.log[..<delivered].last == "GTD 00 00 03 02 01")
    }

    /// Pulled out in the middle of day 5: days 0-4 are delivered, and nothing more is sent to the gone device.
    @Test func aDevicePulledOutMidHistoryKeepsTheCompleteDays() throws {
        let inner = try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog1.pcapng"))
        let device = UnpluggedDevice(wrapping: inner, after: [0x07, 0x47, 0x54, 0x44, 0x00, 0x00, 0x05, 0x03])
        let session = OmronPedometerAdapter().makeSession(
            for: device.device, context: AdapterContext(timeZone: Self.utc, source: "omron-hj720it", now: { Self.date("2009-05-20T11:30:00Z") }), options: [:])
        var run = Run(device: inner)
        do {
            try session.run(device, deliver: { run.outputs.append($0); return .storedAll($0) }, shouldStop: { false })
        } catch {
            run.error = error
        }
        #expect(run.error as? USBError == .noDevice)
        let days: Set<String> = ["2009-05-16", "2009-05-17", "2009-05-18", "2009-05-19", "2009-05-20"]
        try Self.expectMatches(run, csv: try Self.csv(1), days: days)
        #expect(Set(Self.hourly(run).keys) == days)
        #expect(device.callsAfterUnplug == 0)
    }

    @Test func dayZeroMayBeGivenForAReplayOnAnotherDay() throws {
        let device = try OmronExchangeDevice(capture: Fixtures.url("omron-hj720it/pedometerLog3.pcapng"))
        let session = OmronPedometerAdapter().makeSession(
            for: device.device, context: AdapterContext(timeZone: Self.utc, source: "omron-hj720it", now: { Self.date("2031-01-01T12:00:00Z") }),
            options: ["omron-days": "new", "omron-today": "2009-05-21"])
        var run = Run(device: device)
        try session.run(device, deliver: { run.outputs.append($0); return .storedAll($0) }, shouldStop: { false })
        try Self.expectMatches(run, csv: try Self.csv(3), days: ["2009-05-21"])
        #expect(Set(Self.hourly(run).keys) == ["2009-05-21"])
    }

    @Test func badOptionsAreReportedByName() throws {
        let run = try Self.run(log: 3, options: ["clear-after-sync": "sometimes"])
        #expect(run.error as? OmronSessionError
                == .options(.invalid(option: "clear-after-sync", value: "sometimes", expected: "true or false")))
        #expect(run.device.log.isEmpty)
    }
}

/// Forwards to another device until the session writes `after`; from then on every call finds the device gone.
final class UnpluggedDevice: USBDeviceHandle {
    let inner: any USBDeviceHandle
    let trigger: [UInt8]
    private var gone = false
    /// Calls the session made after the device was gone (beyond the one that found out).
    private(set) var callsAfterUnplug = 0

    init(wrapping inner: any USBDeviceHandle, after trigger: [UInt8]) {
        self.inner = inner
        self.trigger = trigger
    }

    var device: USBDeviceDescription { inner.device }

    private func check() throws(USBError) {
        guard !gone else {
            callsAfterUnplug += 1
            throw .noDevice
        }
    }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        try check()
        try inner.claimInterface(number, detachKernelDriver: detachKernelDriver)
    }

    func releaseInterface(_ number: UInt8) throws(USBError) {}

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        try check()
        return try inner.controlTransfer(requestType: requestType, request: request, value: value, index: index,
                                         data: data, length: length, timeout: timeout)
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        try check()
        if data == trigger {
            gone = true
            throw .noDevice
        }
        return try inner.write(endpoint: endpoint, data: data, timeout: timeout)
    }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        try check()
        return try inner.read(endpoint: endpoint, length: length, timeout: timeout)
    }

    func close() {}
}
