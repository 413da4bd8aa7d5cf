import Foundation

/// An adapter option (`--adapter-option KEY=VALUE`) given a value the adapter cannot use.
public enum AdapterOptionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `option` was given `value` (a secret is shown by its length only); `expected` says what it takes.
    case invalid(option: String, value: String, expected: String)

    /// The reason a session reports a bad option under (``AdapterOutput/reject(_:option:time:)``).
    public static let reason = "bad-option"

    public var description: String {
        switch self {
        case .invalid(let option, let value, let expected): "option \(option)=\(value) is not valid; expected \(expected)"
        }
    }
}

/// Reads adapter options by kind: the one place where a value an adapter cannot use becomes an
/// ``AdapterOptionError`` naming the option, the value and what was expected. An option not
/// given reads as nil, so each adapter keeps its own default.
public struct AdapterOptionReader: Sendable {
    /// The options as given, by key.
    public var options: [String: String]

    public init(_ options: [String: String]) {
        self.options = options
    }

    /// `option` made by `parse`; nil when the option is not given; an error when `parse` gives nil.
    /// With `isSecret` the error shows the value's length only.
    public func value<T>(_ option: String, expected: String, isSecret: Bool = false,
                         _ parse: (String) -> T?) throws(AdapterOptionError) -> T? {
        guard let text = options[option] else { return nil }
        guard let value = parse(text) else {
            throw .invalid(option: option, value: isSecret ? "<\(text.count) characters>" : text, expected: expected)
        }
        return value
    }

    /// A whole number in `range` (`expected` defaults to the range).
    public func integer<T: FixedWidthInteger>(_ option: String, in range: ClosedRange<T>, expected: String? = nil,
                                              isSecret: Bool = false) throws(AdapterOptionError) -> T? {
        try value(option, expected: expected ?? "a whole number from \(range.lowerBound) to \(range.upperBound)",
                  isSecret: isSecret) { T($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// A finite number for which `accept` holds.
    public func number(_ option: String, expected: String,
                       where accept: (Double) -> Bool = { _ in true }) throws(AdapterOptionError) -> Double? {
        try value(option, expected: expected) { Double($0).flatMap { $0.isFinite && accept($0) ? $0 : nil } }
    }

    /// One of `choices`, matched regardless of case (`expected` defaults to the choices joined by "or").
    public func choice<T>(_ option: String, _ choices: KeyValuePairs<String, T>,
                          expected: String? = nil) throws(AdapterOptionError) -> T? {
        try value(option, expected: expected ?? choices.map(\.key).joined(separator: " or ")) { text in
            choices.first { $0.key == text.lowercased() }?.value
        }
    }

    /// `true`, `yes` or `1`; `false`, `no` or `0`.
    public func flag(_ option: String) throws(AdapterOptionError) -> Bool? {
        try choice(option, ["true": true, "yes": true, "1": true, "false": false, "no": false, "0": false],
                   expected: "true or false")
    }
}

extension AdapterOutput {
    /// Rejects a bad adapter option under ``AdapterOptionError/reason``, the error as the detail.
    public mutating func reject(_ adapter: String, option error: AdapterOptionError, time: Date) {
        reject(adapter, reason: AdapterOptionError.reason, detail: error.description, time: time)
    }
}
