/// A flag read through the handle it was declared with, so its name is written once:
///
/// ```swift
/// static let json = TypedFlag(Flag("json", help: "Print JSON."))
/// static var arguments: [ArgumentElement] { [json.element] }
/// let isOn = values.flag(Self.json)
/// ```
public struct TypedFlag: ArgumentDeclaration {
    /// The declaration: name, help.
    public private(set) var flag: Flag

    public init(_ flag: Flag) {
        self.flag = flag
    }

    public var element: ArgumentElement { flag.element }

    /// `--json` as typed on the command line (for error messages).
    public var spelling: String { flag.spelling }

    /// The same flag (same name, so the same reads) declared with another help text.
    public func withHelp(_ help: String) -> TypedFlag {
        var copy = self
        copy.flag.help = help
        return copy
    }
}

/// A group of exclusive flags (`--sum|--average|…`) read through the handle it was declared
/// with: `values.choice(Self.statistic)` is the name of the flag given.
public struct TypedFlagGroup: ArgumentDeclaration {
    /// The declaration: key, flags, whether one is required.
    public let group: ExclusiveFlags

    public init(_ group: ExclusiveFlags) {
        self.group = group
    }

    public var element: ArgumentElement { group.element }
}

/// A positional taking at most one value (`TYPE`, `[ANCHOR]`), read as `Value` through the handle
/// it was declared with:
///
/// ```swift
/// static let type = TypedPositional<String>(Positional("TYPE", help: "The quantity type."))
/// static let signature = Signature { type }
/// let name = try arguments.required(Self.type)
/// ```
public struct TypedPositional<Value>: ArgumentDeclaration {
    /// The declaration: value name, key, arity (`.required` or `.optional`), help.
    public private(set) var positional: Positional
    let convert: @Sendable (String) throws -> Value

    /// A positional of an `ArgumentValue` type (`String`, `Int`, `Double`).
    public init(_ positional: Positional) where Value: ArgumentValue {
        self.positional = positional
        self.convert = ArgumentConversion.standard
    }

    /// A positional whose value `parse` converts; `nil` from `parse` is refused as not `expected`.
    public init(_ positional: Positional, expected: String, parse: @escaping @Sendable (String) -> Value?) {
        self.positional = positional
        self.convert = ArgumentConversion.expecting(expected, parse)
    }

    public var element: ArgumentElement { positional.element }

    /// `TYPE` as usage shows it (for error messages).
    public var label: String { positional.label }

    /// The same positional (same key, so the same reads) declared with another help text.
    public func withHelp(_ help: String) -> TypedPositional {
        var copy = self
        copy.positional.help = help
        return copy
    }
}

/// A variadic positional (`FILE...`, `[TYPE...]`), read as `[Value]` through the handle it was
/// declared with: `try arguments.values(Self.files)`.
public struct TypedPositionals<Value>: ArgumentDeclaration {
    /// The declaration: value name, key, arity (`.variadic`), help.
    public private(set) var positional: Positional
    let convert: @Sendable (String) throws -> Value

    /// Values of an `ArgumentValue` type (`String`, `Int`, `Double`).
    public init(_ positional: Positional) where Value: ArgumentValue {
        self.positional = positional
        self.convert = ArgumentConversion.standard
    }

    /// Values that `parse` converts; `nil` from `parse` is refused as not `expected`.
    public init(_ positional: Positional, expected: String, parse: @escaping @Sendable (String) -> Value?) {
        self.positional = positional
        self.convert = ArgumentConversion.expecting(expected, parse)
    }

    public var element: ArgumentElement { positional.element }

    /// `FILE...` as usage shows it (for error messages).
    public var label: String { positional.label }
}

extension ParsedValues {
    /// Whether `flag` was given.
    public func flag(_ flag: TypedFlag) -> Bool {
        self.flag(flag.flag.name)
    }

    /// Whether the flag `declaration` (listed in the signature as it is) was given: for flags
    /// declared from a table, such as a sink kind's options.
    public func flag(_ declaration: Flag) -> Bool {
        flag(declaration.name)
    }

    /// The strings given for the option `declaration` (listed in the signature as it is), without
    /// conversion or defaults: for options declared from a table, such as a sink kind's options.
    public func rawValues(_ declaration: Option) -> [String] {
        rawValues(declaration.name)
    }

    /// The name of the flag given from `group` (`sum`); nil when none was.
    public func choice(_ group: TypedFlagGroup) -> String? {
        choice(group.group.key)
    }

    /// The value of `positional` as its type; `nil` when an optional positional is absent.
    public func value<T>(_ positional: TypedPositional<T>) throws -> T? {
        try value(positional.positional.key, parse: positional.convert)
    }

    /// The value of a required positional as its type.
    public func required<T>(_ positional: TypedPositional<T>) throws -> T {
        try required(positional.positional.key, parse: positional.convert)
    }

    /// Whether `positional` was given.
    public func isPresent<T>(_ positional: TypedPositional<T>) -> Bool {
        isPresent(positional.positional.key)
    }

    /// Every value of a variadic positional, as its type.
    public func values<T>(_ positionals: TypedPositionals<T>) throws -> [T] {
        try values(positionals.positional.key, parse: positionals.convert)
    }
}
