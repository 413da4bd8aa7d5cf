/// A type that a command-line value converts to, such as `Int` for `--limit 10`.
public protocol ArgumentValue: Sendable {
    /// The value for `argument`, or `nil` when it does not parse.
    init?(argument: String)
    /// What a valid value is, with its article: `an integer`; errors say `not an integer`.
    static var expectedValue: String { get }
}

extension String: ArgumentValue {
    public init?(argument: String) {
        self = argument
    }

    public static var expectedValue: String { "a string" }
}

extension Int: ArgumentValue {
    public init?(argument: String) {
        self.init(argument)
    }

    public static var expectedValue: String { "an integer" }
}

extension Double: ArgumentValue {
    /// Accepts finite decimal numbers (`72.5`, `-3`, `1e3`); hexadecimal (`0x10`), `nan` and
    /// `inf` are refused.
    public init?(argument: String) {
        let decimal = argument.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || ".+-eE".utf8.contains(byte)
        }
        guard decimal, let value = Double(argument), value.isFinite else { return nil }
        self = value
    }

    public static var expectedValue: String { "a number" }
}

/// Thrown by a custom parse closure to reject a value; `reason` follows the value in the message:
/// `invalid value 'Mars/Olympus' for --tz: not a known time zone`.
public struct InvalidArgumentValue: Error, Equatable, Sendable {
    public var reason: String

    public init(_ reason: String) {
        self.reason = reason
    }
}

/// A value of an option from outside the command line, with where it came from
/// (`/etc/ingestd/ingestd.conf:3`, `INGESTD_STORE`), named in errors about it.
public struct SuppliedValue: Equatable, Sendable {
    public var value: String
    public var origin: String

    public init(_ value: String, origin: String) {
        self.value = value
        self.origin = origin
    }
}

/// The values given on the command line, read by name with the type the command wants.
///
/// Options and flags are looked up by their long name (`limit`), positionals by their key
/// (`type`), exclusive flag groups by their key. Looking up a name the signatures of the
/// command path do not declare is a programming error and stops the program.
public struct ParsedValues: Sendable {
    /// Raw strings of options and positionals by key, in command-line order.
    private var given: [String: [String]] = [:]
    private var flagsGiven: Set<String> = []
    private var choices: [String: String] = [:]
    /// Declared option and positional keys with their display label (`--limit`, `TYPE`).
    private var valueLabels: [String: String] = [:]
    private var defaults: [String: String] = [:]
    /// Values of options from outside the command line (a configuration file, the environment),
    /// read beneath the command line's: see `supply(_:for:)`.
    private var supplied: [String: [SuppliedValue]] = [:]
    /// Value names of declared options (`N` for `--limit N`), for error messages.
    private var optionValueNames: [String: String] = [:]
    private var declaredFlags: Set<String> = []
    private var declaredGroups: Set<String> = []

    public init() {}

    // MARK: Reading

    /// The last value of `key` (or its default) converted to `T`; `nil` when absent.
    public func value<T: ArgumentValue>(_ key: String, as type: T.Type = T.self) throws -> T? {
        try value(key) { raw in
            guard let converted = T(argument: raw) else { throw InvalidArgumentValue("not \(T.expectedValue)") }
            return converted
        }
    }

    /// The value of a required positional or option converted to `T`.
    public func required<T: ArgumentValue>(_ key: String, as type: T.Type = T.self) throws -> T {
        guard let converted: T = try value(key) else { throw missing(key) }
        return converted
    }

    /// Every value of a repeatable option or variadic positional, converted to `T`.
    public func values<T: ArgumentValue>(_ key: String, as type: T.Type = T.self) throws -> [T] {
        try values(key) { raw in
            guard let converted = T(argument: raw) else { throw InvalidArgumentValue("not \(T.expectedValue)") }
            return converted
        }
    }

    /// The last value of `key` (or its default) converted by `parse`; `nil` when absent.
    /// `parse` throws `InvalidArgumentValue` to reject a value with a reason.
    public func value<T>(_ key: String, parse: (String) throws -> T) throws -> T? {
        if let raw = rawValues(key).last { return try convert(raw, key: key, parse: parse) }
        if let outside = supplied[key]?.last { return try convert(outside.value, key: key, origin: outside.origin, parse: parse) }
        guard let raw = defaults[key] else { return nil }
        return try convert(raw, key: key, parse: parse)
    }

    /// The last value of `key` (or its default) converted by `parse`, which returns `nil` for a
    /// value that is not `expected` (e.g. "a known time zone").
    public func value<T>(_ key: String, expected: String, parse: (String) -> T?) throws -> T? {
        try value(key) { raw in
            guard let converted = parse(raw) else { throw InvalidArgumentValue("not \(expected)") }
            return converted
        }
    }

    /// Every value of `key` converted by `parse`.
    /// Supplied values (`supply(_:for:)`) come first, so the command line's, read later, win
    /// where a later value replaces an earlier one.
    public func values<T>(_ key: String, parse: (String) throws -> T) throws -> [T] {
        let given = rawValues(key)
        return try (supplied[key] ?? []).map { try convert($0.value, key: key, origin: $0.origin, parse: parse) }
            + given.map { try convert($0, key: key, parse: parse) }
    }

    /// Whether the flag `name` was given.
    public func flag(_ name: String) -> Bool {
        precondition(declaredFlags.contains(name), "flag '\(name)' is not declared in the command's signature")
        return flagsGiven.contains(name)
    }

    /// The name of the flag given from the exclusive group `key`, e.g. `sum`.
    public func choice(_ key: String) -> String? {
        precondition(declaredGroups.contains(key), "flag group '\(key)' is not declared in the command's signature")
        return choices[key]
    }

    /// The flag given from the exclusive group `key` as a `RawRepresentable` whose raw values
    /// are the flag names.
    public func choice<T: RawRepresentable>(_ key: String, as type: T.Type = T.self) -> T? where T.RawValue == String {
        choice(key).flatMap(T.init(rawValue:))
    }

    /// Whether `key` (option or positional) was given on the command line; defaults don't count.
    public func isPresent(_ key: String) -> Bool {
        !rawValues(key).isEmpty
    }

    /// The strings given for `key`, without conversion or defaults.
    public func rawValues(_ key: String) -> [String] {
        precondition(valueLabels[key] != nil, "'\(key)' is not declared in the command's signature")
        return given[key] ?? []
    }

    /// Whether the command path declares the option `name` (not a positional of that key).
    public func declaresOption(_ name: String) -> Bool {
        optionValueNames[name] != nil
    }

    /// Where the value `value(key)` reads comes from when the command line does not give it:
    /// the origin of the supplied value (`/etc/ingestd/ingestd.conf:3`), nil otherwise.
    public func suppliedOrigin(_ key: String) -> String? {
        isPresent(key) ? nil : supplied[key]?.last?.origin
    }

    private func convert<T>(_ raw: String, key: String, origin: String? = nil, parse: (String) throws -> T) throws -> T {
        let argument = origin.map { "\(label(key)) (from \($0))" } ?? label(key)
        do {
            return try parse(raw)
        } catch let invalid as InvalidArgumentValue {
            throw UsageError.invalidValue(raw, argument: argument, reason: invalid.reason)
        } catch let usage as UsageError {
            throw usage
        } catch {
            throw UsageError.invalidValue(raw, argument: argument, reason: "\(error)")
        }
    }

    private func label(_ key: String) -> String {
        valueLabels[key] ?? key
    }

    func missing(_ key: String) -> UsageError {
        if let valueName = optionValueNames[key] { return .missingOption(label(key), valueName: valueName) }
        return .missingArgument(label(key))
    }

    // MARK: Supplying values from outside the command line

    /// Gives the option `name` values from outside the command line, each with its origin: a
    /// single-valued option reads the last of them when the command line does not give it; a
    /// repeatable one reads them before the command line's. Ignored (false) when the command
    /// path does not declare the option.
    @discardableResult
    public mutating func supply(_ values: [SuppliedValue], for name: String) -> Bool {
        guard declaresOption(name), !values.isEmpty else { return false }
        supplied[name] = values
        return true
    }

    // MARK: Recording (used by the parser)

    mutating func declare(_ element: ArgumentElement) {
        switch element {
        case .positional(let positional):
            valueLabels[positional.key] = positional.label
        case .option(let option):
            valueLabels[option.name] = option.spelling
            optionValueNames[option.name] = option.valueName
            if let defaultValue = option.defaultValue { defaults[option.name] = defaultValue }
        case .flag(let flag):
            declaredFlags.insert(flag.name)
        case .exclusiveFlags(let group):
            declaredGroups.insert(group.key)
            for flag in group.flags { declaredFlags.insert(flag.name) }
        }
    }

    mutating func append(_ value: String, for key: String) {
        given[key, default: []].append(value)
    }

    mutating func setFlag(_ name: String) {
        flagsGiven.insert(name)
    }

    mutating func setChoice(_ flagName: String, group: String) {
        choices[group] = flagName
        flagsGiven.insert(flagName)
    }

    func hasValue(_ key: String) -> Bool {
        given[key] != nil
    }
}

extension ParsedValues {
    /// The chosen flag of a group, without the declaration check (for the parser).
    func choiceIfDeclared(_ key: String) -> String? {
        choices[key]
    }
}
