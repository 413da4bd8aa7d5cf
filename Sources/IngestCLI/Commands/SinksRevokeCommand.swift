import ArgumentParsing
import HealthModel

/// `ingestd sinks revoke NAME TYPE...`: the sink stops reading those types; a Home Assistant
/// sink removes their entities at its next delivery.
struct SinksRevokeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "revoke", abstract: "Stop a sink reading TYPEs; Home Assistant entities of them go at the next delivery.",
        discussion: """
            What the receiver already has stays there, except Home Assistant's entities: an MQTT sink \
            with --home-assistant publishes empty retained configs for the revoked types at its next \
            delivery ('ingestd sinks deliver NAME', or a running ingestd after SIGHUP), and Home \
            Assistant deletes them. A sink reading every type keeps reading the others.
            """,
        usage: "NAME TYPE...",
        examples: [
            "ingestd sinks revoke ha heartRate",
            "ingestd sinks revoke ha bodyFatPercentage leanBodyMass && ingestd sinks deliver ha",
        ]
    )
    static let sinkName = TypedPositional<String>(Positional("NAME", help: "The sink."))
    static let types = TypedPositionals<String>(Positional(
        "TYPE", key: "types", arity: .oneOrMore, help: "Quantity types, e.g. heartRate bodyMass."))
    static let signature = Signature {
        Self.sinkName
        Self.types
        StoreOption.self
    }
    let name: String
    let types: [QuantityType]
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required(Self.sinkName)
        let names = try arguments.values(Self.types)
        types = try names.map(CommonArguments.quantityType)
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openSinks(context)
        defer { store.close() }
        let revoked = try SinksCommand.mapErrors {
            try store.revokeSinkTypes(sink: name, types: types.map(\.identifier),
                                      catalogue: QuantityType.catalogue.map(\.identifier))
        }
        let shown = revoked.compactMap { QuantityType.named($0)?.shortName }.joined(separator: ", ")
        context.stderr.writeLine("sink \(name) no longer reads \(shown); run 'ingestd sinks deliver \(name)' (or SIGHUP a running ingestd) to remove their Home Assistant entities")
    }
}
