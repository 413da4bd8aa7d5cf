import Delivery
import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd sinks add NAME URL (--types T,… | --all-types) [--every D] [kind options]`.
struct SinksAddCommand: Command {
    static let configuration = CommandConfiguration(
        name: "add", abstract: "Add a sink: the URL's scheme ("
            + SinkKinds.all.flatMap { $0.schemes }.filter { !$0.isAlias }.map(\.name).joined(separator: ", ") + ") picks the kind.",
        discussion: """
            Secrets (--password, header values) may be written as @/path (read from that file when \
            connecting) or env:NAME (an environment variable of the delivering process); they are \
            never printed. The sink starts with the whole stored feed of its types as backlog.
            """ + "\n\n" + SinkKinds.notes,
        examples: [
            "ingestd sinks add alice-server https://health.example/alice --types stepCount,bodyMass --person alice",
            "ingestd sinks add ha-history ws://homeassistant.local:8123 --token @/etc/ingestd/ha-token --all-types --all-people",
        ]
    )
    static let nameArgument = TypedPositional<String>(Positional("NAME", help: "The sink's name (letters, digits, '-', '_')."))
    static let urlArgument = TypedPositional<String>(Positional("URL", help: SinkKinds.all.map { $0.urlForm }.joined(separator: ", ") + "."))
    static let typesOption = TypedOption<String>(Option(
        "types", valueName: "T,…", help: "Quantity types the sink may read, comma-separated (stepCount,bodyMass)."))
    static let allTypesFlag = TypedFlag(Flag("all-types", help: "Let the sink read every type."))
    static let everyOption = TypedOption<Duration>(Option(
        "every", valueName: "DURATION", help: "Deliver on a schedule (30s, 15m, 1h, 1d) instead of right after commits."))
    static let batchSizeOption = TypedOption<Int>(Option("batch-size", valueName: "N", help: SinkKinds.batchSizeHelp))
    static let allPeopleFlag = TypedFlag(Flag("all-people", help: "Deliver every person's samples."))

    static let signature = Signature(Signature {
        Self.nameArgument
        Self.urlArgument
        Self.typesOption
        Self.allTypesFlag
        Self.everyOption
        Self.batchSizeOption
    }.elements + SinkKinds.commandLineOptions.map { Self.declaration($0).element } + Signature {
        PersonOption.person.withHelp(
            "Deliver only this person's samples (default: the only person; required when the store has several, or --all-people).")
        Self.allPeopleFlag
        StoreOption.self
    }.elements)

    /// A kind's option as the parser declares it: a flag, or an option taking a value.
    enum KindDeclaration {
        case flag(Flag)
        case option(Option)

        var element: ArgumentElement {
            switch self {
            case .flag(let flag): flag.element
            case .option(let option): option.element
            }
        }
    }

    /// A kind's option as the parser declares it (and `GivenOptions` reads it: the same declaration).
    static func declaration(_ option: SinkOptionDeclaration) -> KindDeclaration {
        guard let valueName = option.valueName else { return .flag(Flag(option.name, help: option.help)) }
        return .option(Option(option.name, valueName: valueName, help: option.help, default: option.defaultValue,
                              allowedValues: option.allowedValues, repeatable: option.repeatable))
    }

    /// The kind options given on the command line, read through the kinds' typed handles.
    struct GivenOptions: SinkOptionValues {
        let arguments: ParsedValues

        func given(_ option: SinkOptionDeclaration) -> [String] {
            switch SinksAddCommand.declaration(option) {
            case .flag(let flag): arguments.flag(flag) ? [""] : []
            case .option(let declared): arguments.rawValues(declared)
            }
        }

        var hostName: String { SinksAddCommand.hostName() }

        func duration(_ text: String) -> Result<Double, SinkOptionValueRefusal> {
            do {
                return .success(try DurationArgument.seconds(text))
            } catch {
                return .failure(SinkOptionValueRefusal(error.reason))
            }
        }
    }

    let definition: SinkDefinition
    let storeFile: StoreOption
    let person: PersonOption
    let allPeople: Bool

    init(_ arguments: ParsedValues) throws {
        let name = try arguments.required(Self.nameArgument)
        let url = try arguments.required(Self.urlArgument)
        storeFile = try StoreOption(arguments)
        person = try PersonOption(arguments)
        allPeople = arguments.flag(Self.allPeopleFlag)
        if allPeople, person.name != nil { throw UsageError.invalid("give --person NAME or --all-people, not both") }
        let target: SinkTarget
        do {
            try SinkConfigurationError.validateName(name)
            target = try SinkTarget(url: url)
        } catch {
            throw UsageError.invalid(error.description)
        }
        let typeList = try arguments.value(Self.typesOption)
        let allTypes = arguments.flag(Self.allTypesFlag)
        if allTypes == (typeList != nil) { throw UsageError.invalid("give --types T,… or --all-types (exactly one)") }
        var readTypes = ["*"]
        if let typeList {
            readTypes = try typeList.split(separator: ",").map { try CommonArguments.quantityType(String($0)).identifier }
            if readTypes.isEmpty { throw UsageError.invalidValue(typeList, argument: Self.typesOption.spelling, reason: "no type named") }
        }
        guard let kind = target.kind.descriptor else { throw UsageError.invalid("unsupported sink kind \(target.kind)") }
        let given = GivenOptions(arguments: arguments)
        var options: any SinkKindOptions
        do throws(SinkConfigurationError) {
            for option in SinkKinds.commandLineOptions where !kind.commandLineOptions.contains(option) && !given.given(option).isEmpty {
                throw SinkConfigurationError.optionNotApplicable(option.label, kind: kind.name)
            }
            options = try kind.anyOptions(from: given, target: target)
        } catch {
            throw Self.commandLineError(error)
        }
        // Absent: the kind's default.
        if arguments.isPresent(Self.batchSizeOption), let batchSize = try arguments.count(Self.batchSizeOption, in: CommonArguments.batchSizes) {
            options.batchSize = batchSize
        }
        let every = try arguments.seconds(Self.everyOption, in: 1...(366 * 86_400))
        definition = SinkDefinition(name: name, url: url, options: options.encoded(), every: every, readTypes: readTypes)
    }

    /// A kind's refusal of its options as the command line reports it (exit 64; an unreadable file 66).
    static func commandLineError(_ error: SinkConfigurationError) -> any Error {
        switch error {
        case .invalidOption(let option, let value, let reason): UsageError.invalidValue(value, argument: option, reason: reason)
        case .optionFileUnreadable(_, let path, let reason): CommandError.unreadable(path: path, reason: reason)
        default: UsageError.invalid(error.description)
        }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "gateway" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "gateway" : name
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openSinks(context)
        defer { store.close() }
        var definition = self.definition
        if !allPeople {
            do {
                definition.person = try person.resolve(in: store).name
            } catch let error as UsageError where person.name == nil {
                throw UsageError.invalid("\(error.description); or --all-people to deliver everybody's")
            }
        }
        try SinksCommand.mapErrors { try store.addSink(definition) }
        let parsed = try? SinkConfiguration(definition)
        let target = parsed.map { $0.target.displayURL + $0.options.confirmation(target: $0.target) } ?? ""
        let types = definition.readsAllTypes ? "every type" : definition.readTypes.compactMap { QuantityType.named($0)?.shortName }.joined(separator: ", ")
        let whose = definition.person.map { "\($0)'s" } ?? "every person's"
        context.stderr.writeLine("added sink \(definition.name) → \(target), reading \(whose) \(types); a running ingestd picks it up on SIGHUP, or run 'ingestd sinks deliver \(definition.name)'")
    }
}
