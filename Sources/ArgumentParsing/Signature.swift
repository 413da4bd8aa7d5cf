/// The arguments a command accepts, in the order usage and help show them.
///
/// Build one with the result builder or from an array:
/// ```swift
/// static let signature = Signature {
///     Positional("TYPE", help: "The quantity type.")
///     ExclusiveFlags("statistic", required: true) {
///         Flag("sum", help: "Total of the values.")
///         Flag("average", help: "Mean of the values.")
///     }
///     Option("by", valueName: "INTERVAL", help: "Bucket size.", allowedValues: ["hour", "day"])
///     Flag("json", help: "Print JSON.")
/// }
/// ```
/// Positionals must come in the order required, optional, then at most one variadic.
public struct Signature: Sendable {
    /// The declarations in order.
    public var elements: [ArgumentElement]

    public init(_ elements: [ArgumentElement] = []) {
        self.elements = elements
    }

    public init(@SignatureBuilder _ build: () -> [ArgumentElement]) {
        self.elements = build()
    }

    /// The positional arguments in order.
    public var positionals: [Positional] {
        elements.compactMap { if case .positional(let positional) = $0 { positional } else { nil } }
    }
}

/// One declaration in a `Signature`.
public enum ArgumentElement: Sendable {
    case positional(Positional)
    case option(Option)
    case flag(Flag)
    case exclusiveFlags(ExclusiveFlags)
}

/// Something that can be listed in a `Signature` builder.
public protocol ArgumentDeclaration: Sendable {
    /// The declaration as a signature element.
    var element: ArgumentElement { get }
}

/// A positional argument such as `TYPE`, `[ANCHOR]` or `FILE...`.
public struct Positional: ArgumentDeclaration {
    /// How many values the positional takes.
    public enum Arity: Sendable, Equatable {
        /// Exactly one value.
        case required
        /// Zero or one value.
        case optional
        /// Any number of values, at least `minimum`.
        case variadic(minimum: Int)

        /// One or more values, as in `FILE...`.
        public static let oneOrMore = Arity.variadic(minimum: 1)
        /// Zero or more values, as in `[TYPE...]`.
        public static let zeroOrMore = Arity.variadic(minimum: 0)
    }

    /// Shown in usage and help, e.g. `TYPE`.
    public var valueName: String
    /// The name `ParsedValues` looks the value up by; the lowercased value name by default.
    public var key: String
    public var help: String
    public var arity: Arity

    public init(_ valueName: String, key: String? = nil, arity: Arity = .required, help: String = "") {
        self.valueName = valueName
        self.key = key ?? valueName.lowercased()
        self.arity = arity
        self.help = help
    }

    public var element: ArgumentElement { .positional(self) }

    /// `TYPE` or `FILE...`.
    var label: String {
        if case .variadic = arity { "\(valueName)..." } else { valueName }
    }
}

/// An option taking a value: `--store PATH`, given as `--store PATH` or `--store=PATH`.
public struct Option: ArgumentDeclaration {
    /// The long name without dashes, e.g. `store`; also the key in `ParsedValues`.
    public var name: String
    /// A one-letter alias used as `-s`.
    public var shortName: Character?
    /// Shown in usage and help, e.g. `PATH`; for a closed set of values without an explicit
    /// name, the values themselves: `hour|day|week|month`.
    public var valueName: String
    public var help: String
    /// Used when the option is absent; shown in help.
    public var defaultValue: String?
    /// When set, any other value is a usage error; usage shows them as `hour|day|week`.
    public var allowedValues: [String]?
    /// Whether the option may be given more than once, collecting every value.
    public var isRepeatable: Bool
    /// Whether leaving the option out is a usage error.
    public var isRequired: Bool
    /// Whether the subcommands of the declaring command accept the option too.
    public var isInherited: Bool

    public init(
        _ name: String,
        short shortName: Character? = nil,
        valueName: String? = nil,
        help: String = "",
        default defaultValue: String? = nil,
        allowedValues: [String]? = nil,
        repeatable: Bool = false,
        required: Bool = false,
        inherited: Bool = false
    ) {
        self.name = String(name.drop { $0 == "-" })
        self.shortName = shortName
        self.valueName = valueName ?? allowedValues?.joined(separator: "|") ?? "VALUE"
        self.help = help
        self.defaultValue = defaultValue
        self.allowedValues = allowedValues
        self.isRepeatable = repeatable
        self.isRequired = required
        self.isInherited = inherited
    }

    public var element: ArgumentElement { .option(self) }

    /// `--store` as typed on the command line.
    var spelling: String { "--\(name)" }
}

/// A flag without a value, such as `--json`.
public struct Flag: ArgumentDeclaration {
    /// The long name without dashes, e.g. `json`; also the key in `ParsedValues`.
    public var name: String
    /// A one-letter alias used as `-j`.
    public var shortName: Character?
    public var help: String
    /// Whether the subcommands of the declaring command accept the flag too.
    public var isInherited: Bool

    public init(_ name: String, short shortName: Character? = nil, help: String = "", inherited: Bool = false) {
        self.name = String(name.drop { $0 == "-" })
        self.shortName = shortName
        self.help = help
        self.isInherited = inherited
    }

    public var element: ArgumentElement { .flag(self) }

    /// `--json` as typed on the command line.
    var spelling: String { "--\(name)" }
}

/// Flags of which at most one may be given, such as `--sum|--average|--min|--max|--latest`.
/// Giving two is a usage error naming both.
public struct ExclusiveFlags: ArgumentDeclaration {
    /// The name `ParsedValues.choice(_:)` looks the chosen flag up by.
    public var key: String
    public var flags: [Flag]
    /// Whether one of the flags must be given.
    public var isRequired: Bool

    public init(_ key: String, required: Bool = false, flags: [Flag]) {
        self.key = key
        self.flags = flags
        self.isRequired = required
    }

    public init(_ key: String, required: Bool = false, @FlagListBuilder _ flags: () -> [Flag]) {
        self.init(key, required: required, flags: flags())
    }

    public var element: ArgumentElement { .exclusiveFlags(self) }

    /// `--sum|--average|--min`.
    var label: String {
        flags.map(\.spelling).joined(separator: "|")
    }
}

/// Collects the declarations of a `Signature`.
@resultBuilder
public enum SignatureBuilder {
    public static func buildExpression(_ declaration: some ArgumentDeclaration) -> [ArgumentElement] {
        [declaration.element]
    }

    public static func buildExpression(_ elements: [ArgumentElement]) -> [ArgumentElement] {
        elements
    }

    public static func buildBlock(_ parts: [ArgumentElement]...) -> [ArgumentElement] {
        parts.flatMap { $0 }
    }

    public static func buildOptional(_ part: [ArgumentElement]?) -> [ArgumentElement] {
        part ?? []
    }

    public static func buildEither(first part: [ArgumentElement]) -> [ArgumentElement] {
        part
    }

    public static func buildEither(second part: [ArgumentElement]) -> [ArgumentElement] {
        part
    }

    public static func buildArray(_ parts: [[ArgumentElement]]) -> [ArgumentElement] {
        parts.flatMap { $0 }
    }
}

/// Collects the flags of an `ExclusiveFlags` group.
@resultBuilder
public enum FlagListBuilder {
    public static func buildExpression(_ flag: Flag) -> [Flag] {
        [flag]
    }

    public static func buildBlock(_ parts: [Flag]...) -> [Flag] {
        parts.flatMap { $0 }
    }

    public static func buildArray(_ parts: [[Flag]]) -> [Flag] {
        parts.flatMap { $0 }
    }
}
