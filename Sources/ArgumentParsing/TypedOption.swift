/// An option read as `Value` through the handle it was declared with: its name is written once,
/// and the compiler checks the type of what is read (no string key at the reading site).
///
/// ```swift
/// static let days = TypedOption<Int>(Option("pending-days", valueName: "N", default: "30"))
/// static var arguments: [ArgumentElement] { [days.element] }
/// let given = try values.value(Self.days)
/// ```
public struct TypedOption<Value: ArgumentValue>: ArgumentDeclaration {
    /// The declaration: name, help, default.
    public let option: Option

    public init(_ option: Option) {
        self.option = option
    }

    public var element: ArgumentElement { option.element }

    /// `--pending-days` as typed on the command line (for error messages).
    public var spelling: String { option.spelling }
}

extension ParsedValues {
    /// The last value of `option` (or its default) as its type; `nil` when absent.
    public func value<T>(_ option: TypedOption<T>) throws -> T? {
        try value(option.option.name, as: T.self)
    }

    /// Where `option`'s value came from when not from the command line (`/etc/ingestd/ingestd.conf:4`).
    public func suppliedOrigin<T>(_ option: TypedOption<T>) -> String? {
        suppliedOrigin(option.option.name)
    }
}
