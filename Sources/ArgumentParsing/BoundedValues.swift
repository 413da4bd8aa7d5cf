/// Counts and durations read with their allowed range, so a value that would allocate, loop
/// or wait by its size (`--batch-size 2147483648`) is a usage error naming the range before
/// any work starts.
extension ParsedValues {
    /// The integer value of `key` (or its default), refused unless it lies in `range`:
    /// `invalid value '0' for --batch-size: must be 1...100000`.
    public func count(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        try value(key) { raw in
            guard let number = Int(argument: raw) else { throw InvalidArgumentValue("not \(Int.expectedValue)") }
            guard range.contains(number) else { throw InvalidArgumentValue("must be \(range.lowerBound)...\(range.upperBound)") }
            return number
        }
    }

    /// The duration of `key` (or its default) in seconds, parsed by `DurationArgument` and
    /// refused unless it lies in `range` (seconds).
    public func seconds(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        try value(key) { raw in
            let seconds = try DurationArgument.seconds(raw)
            guard range.contains(seconds) else {
                throw InvalidArgumentValue("must be \(DurationArgument.describe(range.lowerBound))...\(DurationArgument.describe(range.upperBound))")
            }
            return seconds
        }
    }
}

/// The one parser of durations on the command line: a plain decimal number (`30`, `0.5`) with
/// an optional unit `ms`, `s`, `m`, `h` or `d`; a number without a unit is in seconds.
/// Hexadecimal (`0x10`), exponents (`1e3`), signs, `inf`/`nan` and spaces are refused.
public enum DurationArgument {
    /// The units by suffix, in seconds.
    static let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]

    /// What a valid value looks like, for error messages.
    public static let expected = "a duration such as 30, 0.5, 30s, 15m, 1h or 1d"

    /// `text` in seconds, or `InvalidArgumentValue` naming the accepted forms.
    public static func seconds(_ text: String) throws(InvalidArgumentValue) -> Double {
        var number = Substring(text)
        var unit = 1.0
        for candidate in units where number.hasSuffix(candidate.suffix) {
            number = number.dropLast(candidate.suffix.count)
            unit = candidate.seconds
            break
        }
        guard isPlainDecimal(number), let value = Double(String(number)), value.isFinite else {
            throw InvalidArgumentValue("not \(expected)")
        }
        return value * unit
    }

    /// Digits with at most one decimal point between digits: `12`, `0.25`; not `.5`, `5.`, `0x1`.
    static func isPlainDecimal(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return false }
        return parts.allSatisfy { part in !part.isEmpty && part.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
    }

    /// `60 s`, `366 d`, `0.001 s`: a bound for messages.
    static func describe(_ seconds: Double) -> String {
        if seconds >= 86_400, seconds.truncatingRemainder(dividingBy: 86_400) == 0 { return "\(Int(seconds / 86_400))d" }
        if seconds == seconds.rounded(), seconds < 1e15 { return "\(Int(seconds))s" }
        return "\(seconds)s"
    }
}
