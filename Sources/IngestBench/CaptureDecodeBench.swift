import AdapterKit
import BLEWire
import BuiltinAdapters
import CaptureFormats
import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#endif

// Capture decode throughput: what `ingestd decode` costs per advertising report.

/// Writes a btsnoop capture of `reports` LE Advertising Reports to a temporary file, then times
/// reading it, reconstructing events with `HCITraceDecoder` and routing them through the
/// built-in Bluetooth adapters (`AdapterRouter` with `BuiltinAdapters.bluetooth`), as
/// `ingestd decode` does. The reports are a mix that every adapter takes: Xiaomi Mi Smart Scale
/// broadcasts, BTHome v2 sensors and standard Weight Scale (0x181D) advertisers, from 16
/// devices each, with a new reading every 20 broadcasts (scales and sensors repeat themselves).
///
/// Prints on stdout `capture.reports_per_s <n> 1/s` (median of `repeats` runs; reports per
/// second of the decoding thread's CPU time, i.e. on one core, so that other processes on a
/// busy machine do not lower the figure; the wall-clock rate goes to stderr) and
/// `capture.peak_rss_delta_mb <n> MB` (the largest rise of the peak resident set over the
/// memory in use before a run; it stays flat when decoding streams). Progress goes to stderr.
/// `capture.reports_per_s_earlier_registry` is the same capture through the registry as it was
/// before the broadcast families of issue 24 (`earlierRegistry`), in the same runs, and
/// `capture.vs_earlier_registry` the ratio of the two: what the added adapters cost every report.
func captureDecodeBenchmark(reports: Int = 1_000_000, repeats: Int = 3) {
    do {
        try CaptureDecodeBench(reports: reports, repeats: repeats).run()
    } catch {
        FileHandle.standardError.write(Data("error: capture decode benchmark: \(error)\n".utf8))
    }
}

/// The capture decode benchmark's generator and timed loop.
struct CaptureDecodeBench {
    var reports: Int
    var repeats: Int
    /// Devices per kind of advertiser.
    var devicesPerKind = 16
    /// Broadcasts of one reading before the device has a new one (1: every report is a new reading).
    var repeatsPerReading = 20
    /// Mi Smart Scale broadcasts alone (`cli.decode_json_samples_per_s`) rather than the mix of three kinds.
    var miScaleOnly = false

    init(reports: Int, repeats: Int, devicesPerKind: Int = 16, repeatsPerReading: Int = 20, miScaleOnly: Bool = false) {
        self.reports = reports
        self.repeats = repeats
        self.devicesPerKind = devicesPerKind
        self.repeatsPerReading = repeatsPerReading
        self.miScaleOnly = miScaleOnly
    }

    /// The adapters the capture's three kinds of device are for (Mi scale broadcasts, BTHome
    /// sensors, standard Weight Scale service advertisers).
    static let adaptersInCapture: Set<String> = ["xiaomi-scale", "bthome", "gatt-health"]
    /// The Bluetooth adapters registered before issue 24's broadcast families: the baseline of
    /// `capture.vs_earlier_registry`.
    static let earlierRegistry: Set<String> = [
        "xiaomi-scale", "bthome", "dsd6-band", "yunmai-scale", "beurer-sanitas", "hidrate-spark", "gatt-health",
    ]
    /// What one decode pass saw.
    struct Counts: Equatable {
        var records = 0
        var advertisements = 0
        var samples = 0
        var matchedDevices = 0
        var adapters: Set<String> = []
    }

    func run() throws {
        let path = NSTemporaryDirectory() + "/ingestbench-capture-\(ProcessInfo.processInfo.processIdentifier).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        Self.progress("capture decode: writing \(reports) advertising reports")
        try writeCapture(to: path)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        Self.progress(String(format: "capture decode: %.1f MB btsnoop", Double(size) / 1_048_576))

        var rates: [Double] = []
        var earlierRates: [Double] = []
        var peakDelta = 0.0
        let earlier = BuiltinAdapters.bluetooth.filter { Self.earlierRegistry.contains($0.descriptor.id) }
        for run in 0..<max(1, repeats) {
            Self.resetPeakResidentSet()
            let before = Self.procStatusKilobytes("VmRSS") ?? 0
            let start = DispatchTime.now().uptimeNanoseconds
            let cpuStart = Self.threadCPUSeconds()
            let counts = try decode(path: path)
            let seconds = Self.threadCPUSeconds() - cpuStart
            let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let peak = Self.procStatusKilobytes("VmHWM") ?? before
            guard counts.advertisements == reports else {
                throw CaptureBenchError("decoded \(counts.advertisements) advertisements, wrote \(reports)")
            }
            guard counts.adapters == Self.adaptersInCapture else {
                throw CaptureBenchError("not every adapter matched: \(counts.adapters.sorted())")
            }
            rates.append(Double(reports) / seconds)
            let earlierStart = Self.threadCPUSeconds()
            let earlierCounts = try decode(path: path, adapters: earlier)
            let earlierSeconds = Self.threadCPUSeconds() - earlierStart
            guard earlierCounts.samples == counts.samples else {
                throw CaptureBenchError("the earlier registry made \(earlierCounts.samples) samples, the full one \(counts.samples)")
            }
            earlierRates.append(Double(reports) / earlierSeconds)
            peakDelta = max(peakDelta, Double(max(0, peak - before)) / 1024)
            Self.progress(String(
                format: "capture decode run %d/%d: %.0f reports/s CPU (%.0f/s wall), %d samples, %d devices, peak +%.1f MB",
                run + 1, repeats, Double(reports) / seconds, Double(reports) / wall, counts.samples,
                counts.matchedDevices, Double(max(0, peak - before)) / 1024))
            Self.progress(String(format: "capture decode run %d/%d, earlier registry (%d adapters, now %d): %.0f reports/s CPU",
                                 run + 1, repeats, earlier.count, BuiltinAdapters.bluetooth.count, Double(reports) / earlierSeconds))
        }
        let median = rates.sorted()[rates.count / 2]
        let earlierMedian = earlierRates.sorted()[earlierRates.count / 2]
        print("capture.reports_per_s \(Int(median.rounded())) 1/s")
        print("capture.reports_per_s_earlier_registry \(Int(earlierMedian.rounded())) 1/s")
        print(String(format: "capture.vs_earlier_registry %.3f", median / earlierMedian))
        print(String(format: "capture.peak_rss_delta_mb %.1f MB", peakDelta))
    }

    /// One timed pass: read, reconstruct, route; records are counted and dropped.
    func decode(path: String, adapters: [any BLEAdapter] = BuiltinAdapters.bluetooth) throws -> Counts {
        let reader = try CaptureFile.open(path: path)
        let router = try AdapterRouter(adapters: adapters, timeZone: TimeZone(secondsFromGMT: 0) ?? .current)
        var decoder = HCITraceDecoder()
        var events: [TransportEvent] = []
        var output = AdapterOutput()
        var counts = Counts()
        while let record = try reader.next() {
            counts.records += 1
            events.removeAll(keepingCapacity: true)
            decoder.process(record, into: &events)
            for event in events { router.route(event, into: &output) }
            if !output.records.isEmpty {
                counts.samples += output.records.count
                output.records.removeAll(keepingCapacity: true)
            }
        }
        events.removeAll(keepingCapacity: true)
        decoder.finish(into: &events)
        for event in events { router.route(event, into: &output) }
        router.finish(into: &output)
        counts.samples += output.records.count
        counts.advertisements = decoder.statistics.advertisements
        counts.matchedDevices = router.matchedDevices.count
        counts.adapters = Set(router.matchedDevices.values)
        return counts
    }

    // MARK: The capture

    func writeCapture(to path: String) throws {
        let writer = try BTSnoopWriter(path: path)
        let start: Int64 = 1_736_931_600_000_000  // 2025-01-15T09:00:00Z
        let kinds = miScaleOnly ? 1 : 3
        for index in 0..<reports {
            let device = (index / kinds) % devicesPerKind
            let reading = index / (kinds * devicesPerKind * repeatsPerReading)
            let data: [UInt8]
            let address: UInt64
            switch miScaleOnly ? 0 : index % 3 {
            case 0:
                address = 0x50FB_191B_0000 + UInt64(device)
                data = Self.miScaleAdvertisement(reading: reading, device: device)
            case 1:
                address = 0xA4C1_388D_0000 + UInt64(device)
                data = Self.bthomeAdvertisement(reading: reading, device: device)
            default:
                address = 0xC847_8C00_0000 + UInt64(device)
                data = Self.weightScaleAdvertisement()
            }
            try writer.write(type: .event, direction: .received, timestamp: start + Int64(index) * 1000,
                             packet: Self.advertisingReport(address: address, data: data, eventType: !miScaleOnly && index % 3 == 2 ? 0x00 : 0x03))
        }
        try writer.close()
    }

    /// LE Meta event, LE Advertising Report with one report (Core Vol 4 Part E 7.7.65.2).
    static func advertisingReport(address: UInt64, data: [UInt8], eventType: UInt8) -> [UInt8] {
        var parameters: [UInt8] = [0x02, 0x01, eventType, 0x00]
        for shift in stride(from: 0, to: 48, by: 8) { parameters.append(UInt8(truncatingIfNeeded: address >> UInt64(shift))) }
        parameters.append(UInt8(data.count))
        parameters += data
        parameters.append(0xC4)  // RSSI -60
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    /// Flags, the name `MI_SCALE` and 0x181D service data: a stabilized kilogram reading
    /// (layout of the Mi Smart Scale), new weight and clock second per reading (consecutive
    /// readings of one device always differ in weight, so each is a new weighing).
    static func miScaleAdvertisement(reading: Int, device: Int) -> [UInt8] {
        let weight = UInt16(14_000 + (reading * 7 + device * 131) % 6_000)  // 70.0 … 100.0 kg
        let second = UInt8(reading % 60)
        let minute = UInt8((reading / 60) % 60)
        let frame: [UInt8] = [0x22, UInt8(weight & 0xFF), UInt8(weight >> 8), 0xE9, 0x07, 0x01, 0x0F, 0x08, minute, second]
        return [0x02, 0x01, 0x06, 0x09, 0x09] + Array("MI_SCALE".utf8) + [UInt8(frame.count + 3), 0x16, 0x1D, 0x18] + frame
    }

    /// Flags and BTHome v2 service data: packet id, temperature and mass, new per reading.
    static func bthomeAdvertisement(reading: Int, device: Int) -> [UInt8] {
        let temperature = UInt16(2_000 + (reading + device * 17) % 800)  // 20.00 … 27.99 °C
        let mass = UInt16(7_000 + (reading * 3 + device) % 2_000)  // 70.00 … 89.99 kg
        let payload: [UInt8] = [0x40, 0x00, UInt8(truncatingIfNeeded: reading),
                                0x02, UInt8(temperature & 0xFF), UInt8(temperature >> 8),
                                0x06, UInt8(mass & 0xFF), UInt8(mass >> 8)]
        return [0x02, 0x01, 0x06, UInt8(payload.count + 3), 0x16, 0xD2, 0xFC] + payload
    }

    /// Flags, the Weight Scale service UUID and a name: a standard scale waiting for a connection.
    static func weightScaleAdvertisement() -> [UInt8] {
        [0x02, 0x01, 0x06, 0x03, 0x03, 0x1D, 0x18, 0x06, 0x09] + Array("Scale".utf8)
    }

    // MARK: Measuring

    static func progress(_ message: String) {
        FileHandle.standardError.write(Data(("# " + message + "\n").utf8))
    }

    /// A `/proc/self/status` field in kB (`VmRSS`, `VmHWM`); nil off Linux.
    static func procStatusKilobytes(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).filter(\.isNumber))
        }
        return nil
    }

    /// CPU time of the calling thread in seconds (wall-clock time where that is not available).
    static func threadCPUSeconds() -> Double {
        #if canImport(Glibc)
        var time = timespec()
        if clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 {
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        #endif
        return Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// Resets the peak resident set (`VmHWM`) to the current one (Linux: `5` to clear_refs).
    static func resetPeakResidentSet() {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        try? handle.write(contentsOf: Data("5".utf8))
        try? handle.close()
    }
}

/// A capture decode benchmark that could not run as intended.
struct CaptureBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
