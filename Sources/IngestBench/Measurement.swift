import Foundation

/// Timing and memory helpers.
enum Measure {
    /// Seconds of a ContinuousClock duration.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// Runs `body` and adds its duration to `total`.
    static func timed<T>(_ total: inout Duration, _ body: () throws -> T) rethrows -> T {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        total += clock.now - start
        return result
    }

    /// The calling thread's CPU time so far, in seconds (user and system).
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// The CPU time of this whole process so far (every thread), in seconds: user and system.
    static func processCPU() -> (user: Double, system: Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    /// Seconds of a `timeval` (rusage's times).
    static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// A field of /proc/self/status in kB (e.g. `VmHWM`, the peak resident set), nil where
    /// there is no procfs.
    static func procStatusKilobytes(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return Int(digits)
        }
        return nil
    }
}

/// Prints the figures as `<name> <value> <unit>` lines, flushed at once so a pipe sees them.
struct FigurePrinter {
    func print(_ name: String, _ value: Double, _ unit: String, decimals: Int) {
        let text = decimals == 0 ? String(Int(value.rounded())) : String(format: "%.\(decimals)f", value)
        FileHandle.standardOutput.write(Data("\(name) \(text) \(unit)\n".utf8))
    }
}
