/// An option read as `Value` through the handle it was declared with: its name is written once,
/// and the compiler checks the type of what is read (no string key at the reading site).
///
/// ```swift
/// static let days = TypedOption<Int>(Option("pending-days", valueName: "N", default: "30"))
/// static let birth = TypedOption<CalendarDate>(Option("date-of-birth", valueName: "YYYY-MM-DD"),
///                                              expected: "a date YYYY-MM-DD") { CalendarDate($0) }
/// static var arguments: [ArgumentElement] { [days.element, birth.element] }
/// let given = try values.value(Self.days)
/// ```
public struct TypedOption<Value>: ArgumentDeclaration {
    /// The declaration: name, help, default.
    public private(set) var option: Option
    /// Turns a given string into the value; throws `InvalidArgumentValue` to refuse it.
    let convert: @Sendable (String) throws -> Value

    /// An option of an `ArgumentValue` type (`Int`, `String`, `Double`, `Duration`).
    public init(_ option: Option) where Value: ArgumentValue {
        self.option = option
        self.convert = ArgumentConversion.standard
    }

    /// An option whose value `parse` converts; `nil` from `parse` is refused as not `expected`
    /// (`invalid value 'x' for --date-of-birth: not a date YYYY-MM-DD`).
    public init(_ option: Option, expected: String, parse: @escaping @Sendable (String) -> Value?) {
        self.option = option
        self.convert = ArgumentConversion.expecting(expected, parse)
    }

    public var element: ArgumentElement { option.element }

    /// `--pending-days` as typed on the command line (for error messages).
    public var spelling: String { option.spelling }

    /// The same option (same name, so the same reads) declared with another help text, for a
    /// command that says what the option means to it.
    public func withHelp(_ help: String) -> TypedOption {
        var copy = self
        copy.option.help = help
        return copy
    }
}

/// The conversions the typed handles share, so their errors read like the string-keyed reads'.
enum ArgumentConversion {
    /// `Value(argument:)`, refused as `not an integer` (the type's `expectedValue`).
    @Sendable static func standard<Value: ArgumentValue>(_ raw: String) throws -> Value {
        guard let converted = Value(argument: raw) else { throw InvalidArgumentValue("not \(Value.expectedValue)") }
        return converted
    }

    /// `parse`, whose `nil` is refused as `not <expected>`.
    static func expecting<Value>(_ expected: String, _ parse: @escaping @Sendable (String) -> Value?)
        -> @Sendable (String) throws -> Value {
        { raw in
            guard let converted = parse(raw) else { throw InvalidArgumentValue("not \(expected)") }
            return converted
        }
    }
}

extension ParsedValues {
    /// The last value of `option` (or its default, or a supplied value) as its type; `nil` when absent.
    public func value<T>(_ option: TypedOption<T>) throws -> T? {
        try value(option.option.name, parse: option.convert)
    }

    /// The value of a required option (`required: true`); absent, the usage error names it.
    public func required<T>(_ option: TypedOption<T>) throws -> T {
        try required(option.option.name, parse: option.convert)
    }

    /// Every value of a repeatable option, supplied values first, as its type.
    public func values<T>(_ option: TypedOption<T>) throws -> [T] {
        try values(option.option.name, parse: option.convert)
    }

    /// Whether `option` was given on the command line; defaults and supplied values don't count.
    public func isPresent<T>(_ option: TypedOption<T>) -> Bool {
        isPresent(option.option.name)
    }

    /// The strings given for `option` on the command line, without conversion or defaults.
    public func rawValues<T>(_ option: TypedOption<T>) -> [String] {
        rawValues(option.option.name)
    }

    /// Whether the command path declares `option` (for code shared by commands that may not).
    public func declares<T>(_ option: TypedOption<T>) -> Bool {
        declaresOption(option.option.name)
    }

    /// Where `option`'s value came from when not from the command line (`/etc/ingestd/ingestd.conf:4`).
    public func suppliedOrigin<T>(_ option: TypedOption<T>) -> String? {
        suppliedOrigin(option.option.name)
    }

    /// The integer of `option` (or its default), refused unless it lies in `range`:
    /// `invalid value '0' for --batch-size: must be 1...100000`.
    public func count(_ option: TypedOption<Int>, in range: ClosedRange<Int>) throws -> Int? {
        try count(option.option.name, in: range)
    }

    /// The duration of `option` (or its default) in seconds, refused unless it lies in `range`
    /// (seconds): `invalid value '0s' for --every: must be 1s...366d`.
    public func seconds(_ option: TypedOption<Duration>, in range: ClosedRange<Double>) throws -> Double? {
        try seconds(option.option.name, in: range)
    }

    /// The value of a required key converted by `parse` (the typed handles' reading).
    func required<T>(_ key: String, parse: (String) throws -> T) throws -> T {
        guard let converted = try value(key, parse: parse) else { throw missing(key) }
        return converted
    }
}

/// A duration option (`--every 15m`) is declared as `TypedOption<Duration>` and read in
/// seconds with its range: `values.seconds(Self.every, in: 1...86_400)`.
extension Duration: ArgumentValue {
    /// A duration as `DurationArgument` reads it (`30`, `0.5`, `30s`, `15m`, `1h`, `1d`).
    public init?(argument: String) {
        guard let seconds = try? DurationArgument.seconds(argument) else { return nil }
        self = .seconds(seconds)
    }

    public static var expectedValue: String { DurationArgument.expected }
}
