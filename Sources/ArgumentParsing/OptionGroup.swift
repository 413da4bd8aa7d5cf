/// A set of arguments several commands accept (`--store` with `--json`, the capture options, …),
/// declared once and read once into typed values.
///
/// ```swift
/// struct StoreOptions: OptionGroup {
///     static let store = TypedOption<String>(Option("store", valueName: "PATH", help: "The store file."))
///     static let json = TypedFlag(Flag("json", help: "One JSON object per line."))
///     static var arguments: [ArgumentElement] { [store.element, json.element] }
///     var store: String?
///     var json: Bool
///     init(_ values: ParsedValues) throws {
///         store = try values.value(Self.store)
///         json = values.flag(Self.json)
///     }
/// }
/// static let signature = Signature { StoreOptions.self; Positional("TYPE", help: "…") }
/// init(_ arguments: ParsedValues) throws { options = try StoreOptions(arguments) }
/// ```
public protocol OptionGroup: Sendable {
    /// The group's declarations, in the order usage and help show them.
    static var arguments: [ArgumentElement] { get }

    /// Reads the group's values; throws what `ParsedValues` throws for a value that does not parse.
    init(_ values: ParsedValues) throws
}

extension SignatureBuilder {
    /// Lists a group's declarations in a signature: `Signature { StoreOptions.self }`.
    public static func buildExpression<Group: OptionGroup>(_ group: Group.Type) -> [ArgumentElement] {
        Group.arguments
    }
}
