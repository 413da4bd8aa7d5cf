import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd auth`: per (source, type) write authorization: granted, denied or undecided (the
/// default: nothing is stored, the samples wait in the pending area).
struct Auth: Command {
    static let configuration = CommandConfiguration(
        name: "auth", abstract: "Grant, deny, revoke and list which source may write which types; show held samples.",
        discussion: """
            Each (source, type) is granted, denied or undecided (the default). Samples of an undecided \
            pair are held in the store's pending area (never visible to queries or the change feed) until \
            'auth grant' brings them in or 'auth deny' discards them; held samples are removed after \
            --pending-days (of 'ingestd run' and 'ingestd replay').
            """,
        subcommands: [List.self, Grant.self, Revoke.self, Deny.self, Pending.self])

    init(_ arguments: ParsedValues) throws {}

    static func parseTypes(_ arguments: ParsedValues, all: Bool) throws -> [QuantityType] {
        let names: [String] = try arguments.values("types")
        if all, !names.isEmpty { throw UsageError.invalid("give TYPE... or --all, not both") }
        if !all, names.isEmpty { throw UsageError.invalid("give at least one TYPE, or --all") }
        return try names.map(CommonArguments.quantityType)
    }

    struct List: Command {
        static let configuration = CommandConfiguration(name: "list", abstract: "List the grants and the explicit denials.")
        static let signature = Signature {
            CommonArguments.json
            CommonArguments.store
        }
        let json: Bool
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            json = arguments.flag("json")
            storePath = try arguments.value("store")
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context)
            defer { store.close() }
            let decisions = try store.grants().map { ($0.source, $0.type, "granted") }
                + store.denials().map { ($0.source, $0.type, "denied") }
            if json {
                for (source, type, state) in decisions {
                    context.stdout.writeLine(
                        "{\"source\":\(JSONText.quoted(source)),\"type\":\(JSONText.quoted(type)),\"state\":\(JSONText.quoted(state))}")
                }
                return
            }
            if decisions.isEmpty {
                context.stdout.writeLine("no grants: samples are held until 'ingestd auth grant SOURCE TYPE...' (see 'ingestd auth pending')")
                return
            }
            let rows = decisions.map { source, type, state in
                [source, type == "*" ? "(all types)" : (QuantityType.named(type)?.shortName ?? type), type, state]
            }
            context.stdout.write(Table(header: ["SOURCE", "TYPE", "IDENTIFIER", "STATE"], rows: rows).rendered)
        }
    }

    /// What `grant` and `revoke` both take: a source and its types, or `--all`.
    struct GrantChange {
        let source: String
        let types: [QuantityType]
        let all: Bool
        let storePath: String?

        static func signature(sourceHelp: String, allHelp: String) -> Signature {
            Signature {
                Positional("SOURCE", help: sourceHelp)
                Positional("TYPE", key: "types", arity: .zeroOrMore, help: "Quantity types, e.g. stepCount bodyMass.")
                Flag("all", help: allHelp)
                CommonArguments.store
            }
        }

        init(_ arguments: ParsedValues) throws {
            source = try CommonArguments.sourceID(try arguments.required("source"), argument: "SOURCE")
            all = arguments.flag("all")
            types = try Auth.parseTypes(arguments, all: all)
            storePath = try arguments.value("store")
        }

        /// Applies the change and says what was done on stderr.
        func apply(_ context: CommandContext, verb: String, allWord: String,
                   _ change: (HealthStore) throws -> Void) throws {
            let store = try CommonArguments.openStore(storePath, context: context)
            defer { store.close() }
            try change(store)
            context.stderr.writeLine("\(verb) \(source): \(what(allWord: allWord))")
        }

        func what(allWord: String) -> String {
            all ? allWord : types.map(\.shortName).joined(separator: ", ")
        }
    }

    struct Grant: Command {
        static let configuration = CommandConfiguration(
            name: "grant", abstract: "Allow SOURCE to write TYPEs (short or full names) or --all types.",
            usage: "SOURCE TYPE...|--all")
        static let signature = GrantChange.signature(
            sourceHelp: "The source id (an adapter id, or the source of replayed records).",
            allHelp: "Every type, now and in the future.")
        let change: GrantChange

        init(_ arguments: ParsedValues) throws { change = try GrantChange(arguments) }

        /// Grants, then brings the held samples of the granted types in through the pipeline.
        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(change.storePath, context: context)
            defer { store.close() }
            try store.grant(source: change.source, types: change.types, all: change.all)
            context.stderr.writeLine("granted \(change.source): \(change.what(allWord: "every type"))")
            let release = try store.releaseHeld(source: change.source, types: change.types, all: change.all,
                                                through: try Pipeline(store: store))
            let totals = release.report.totals
            if release.released > 0 {
                context.stderr.writeLine("brought in \(release.released) held record\(release.released == 1 ? "" : "s"): "
                    + "\(totals.written) written, \(totals.duplicate) duplicate, \(totals.replaced) replaced, "
                    + "\(totals.held) still held, \(totals.denied) denied, \(totals.invalid) invalid")
            }
            for (key, count) in release.report.rejections.sorted(by: { $0.key < $1.key }) where key.reason != "denied" {
                let example = release.report.examples[key].map { ": \($0)" } ?? ""
                context.stderr.writeLine("warning: \(count) held \(key.type) sample\(count == 1 ? "" : "s") rejected (\(key.reason))\(example)")
            }
            if let error = release.firstUnreadableError {
                context.stderr.writeLine("warning: \(release.unreadable) held record\(release.unreadable == 1 ? "" : "s") could not be read and stay pending; first: \(error)")
            }
        }
    }

    struct Deny: Command {
        static let configuration = CommandConfiguration(
            name: "deny", abstract: "Refuse SOURCE's TYPEs (or --all) for good: discard what is held, never hold them again.",
            usage: "SOURCE TYPE...|--all")
        static let signature = GrantChange.signature(
            sourceHelp: "The source id.", allHelp: "Every type, now and in the future (replaces the source's grants).")
        let change: GrantChange

        init(_ arguments: ParsedValues) throws { change = try GrantChange(arguments) }

        func run(_ context: CommandContext) async throws {
            var discarded = 0
            try change.apply(context, verb: "denied", allWord: "every type") { store in
                discarded = try store.deny(source: change.source, types: change.types, all: change.all)
            }
            context.stderr.writeLine("discarded \(discarded) held record\(discarded == 1 ? "" : "s")")
        }
    }

    struct Pending: Command {
        static let configuration = CommandConfiguration(
            name: "pending", abstract: "Samples held for undecided sources: counts, reading times, device, the grant command.")
        static let signature = Signature {
            CommonArguments.json
            CommonArguments.store
        }
        let json: Bool
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            json = arguments.flag("json")
            storePath = try arguments.value("store")
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context, readOnly: true)
            defer { store.close() }
            let groups = try store.pendingGroups()
            let losses = try store.pendingLosses()
            func command(_ group: PendingGroup) -> String {
                AuthorizationPolicy.grantCommand(source: group.source, types: QuantityType.named(group.type).map { [$0] } ?? [])
            }
            if json {
                for group in groups {
                    let loss = losses[group.source]
                    context.stdout.writeLine(
                        "{\"source\":\(JSONText.quoted(group.source)),\"type\":\(JSONText.quoted(group.type)),"
                            + "\"device\":\(JSONText.quoted(group.device)),\"count\":\(group.count),"
                            + "\"first\":\(JSONText.quoted(ISO8601DateTime.string(from: group.firstStart))),"
                            + "\"last\":\(JSONText.quoted(ISO8601DateTime.string(from: group.lastEnd))),"
                            + "\"dropped\":\(loss?.dropped ?? 0),\"expired\":\(loss?.expired ?? 0),"
                            + "\"grant\":\(JSONText.quoted(command(group)))}")
                }
                return
            }
            if groups.isEmpty {
                context.stdout.writeLine("nothing held: no samples wait for a decision")
                return
            }
            context.stdout.write(Table(header: ["SOURCE", "TYPE", "DEVICE", "HELD", "FIRST", "LAST", "GRANT WITH"], rows: groups.map {
                [$0.source, QuantityType.named($0.type)?.shortName ?? $0.type, $0.device, "\($0.count)",
                 ISO8601DateTime.string(from: $0.firstStart), ISO8601DateTime.string(from: $0.lastEnd), command($0)]
            }).rendered)
            for source in Set(groups.map(\.source)).sorted() {
                if let loss = losses[source] {
                    context.stdout.writeLine("\(source): \(loss.dropped) dropped over the bound, \(loss.expired) expired")
                }
                context.stdout.writeLine("refuse \(source) with: \(AuthorizationPolicy.denyCommand(source: source, types: []))")
            }
        }
    }

    struct Revoke: Command {
        static let configuration = CommandConfiguration(
            name: "revoke", abstract: "Stop SOURCE writing TYPEs (or --all of its grants). Stored samples stay.",
            usage: "SOURCE TYPE...|--all")
        static let signature = GrantChange.signature(sourceHelp: "The source id.", allHelp: "Every grant of the source.")
        let change: GrantChange

        init(_ arguments: ParsedValues) throws { change = try GrantChange(arguments) }

        func run(_ context: CommandContext) async throws {
            try change.apply(context, verb: "revoked", allWord: "every grant") { store in
                try store.revoke(source: change.source, types: change.types, all: change.all)
            }
        }
    }
}

/// `ingestd priority TYPE SOURCE...`: which source wins where sources overlap.
struct Priority: Command {
    static let configuration = CommandConfiguration(
        name: "priority", abstract: "Show or set the source order of a type (first wins where sources overlap).",
        discussion: "Without SOURCE, prints the current order: explicit first, then by when each source first wrote the type.")
    static let signature = Signature {
        Positional("TYPE", help: "Quantity type.")
        Positional("SOURCE", key: "sources", arity: .zeroOrMore, help: "Sources, highest priority first.")
        CommonArguments.store
    }
    let type: QuantityType
    let sources: [String]
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required("type"))
        sources = try (arguments.values("sources") as [String]).map { try CommonArguments.sourceID($0, argument: "SOURCE") }
        storePath = try arguments.value("store")
        if Set(sources).count != sources.count { throw UsageError.invalid("a source is listed twice") }
    }

    func run(_ context: CommandContext) async throws {
        let store = try CommonArguments.openStore(storePath, context: context)
        defer { store.close() }
        if !sources.isEmpty { try store.setPriority(type: type, sources: sources) }
        for (rank, source) in try store.priority(for: type).enumerated() {
            context.stdout.writeLine("\(rank + 1) \(source)")
        }
    }
}

/// `ingestd sources`: who wrote what.
struct Sources: Command {
    static let configuration = CommandConfiguration(name: "sources", abstract: "List sources and their devices with sample counts.")
    static let signature = Signature {
        CommonArguments.json
        CommonArguments.store
    }
    let json: Bool
    let storePath: String?

    init(_ arguments: ParsedValues) throws {
        json = arguments.flag("json")
        storePath = try arguments.value("store")
    }

    func run(_ context: CommandContext) async throws {
        let store = try CommonArguments.openStore(storePath, context: context, readOnly: true)
        defer { store.close() }
        let encoder = HealthRecordEncoder()
        let held = try store.pendingCounts()
        var summaries = try store.sources()
        // A source that has only held samples so far is listed too.
        for name in held.keys where !summaries.contains(where: { $0.name == name }) {
            summaries.append(SourceSummary(name: name, sampleCount: 0, countsByType: [:], devices: []))
        }
        for source in summaries.sorted(by: { $0.name < $1.name }) {
            let heldCount = held[source.name] ?? 0
            if json {
                let counts = source.countsByType.keys.sorted().map { "\(JSONText.quoted($0)):\(source.countsByType[$0] ?? 0)" }
                let devices = source.devices.map { encoder.encode($0) }
                context.stdout.writeLine(
                    "{\"source\":\(JSONText.quoted(source.name)),\"samples\":\(source.sampleCount),\"held\":\(heldCount),\"types\":{\(counts.joined(separator: ","))},\"devices\":[\(devices.joined(separator: ","))]}")
            } else {
                let heldText = heldCount > 0 ? ", \(heldCount) held (undecided: ingestd auth pending)" : ""
                context.stdout.writeLine("\(source.name): \(source.sampleCount) samples\(heldText)")
                for type in source.countsByType.keys.sorted() {
                    context.stdout.writeLine("  \(QuantityType.named(type)?.shortName ?? type): \(source.countsByType[type] ?? 0)")
                }
                for device in source.devices {
                    let parts = [device.manufacturer, device.model, device.name, device.localIdentifier].compactMap { $0 }
                    context.stdout.writeLine("  device: \(parts.joined(separator: " "))")
                }
            }
        }
    }
}

/// `ingestd profile`: the characteristic types, kept once per store.
struct ProfileCommand: Command {
    static let configuration = CommandConfiguration(
        name: "profile", abstract: "Show or set the user's characteristics (date of birth, biological sex, height).",
        subcommands: [Show.self, Set.self], defaultSubcommand: Show.self)

    init(_ arguments: ParsedValues) throws {}

    struct Show: Command {
        static let configuration = CommandConfiguration(name: "show", abstract: "Print the profile.")
        static let signature = Signature {
            PersonOption.self
            CommonArguments.json
            CommonArguments.store
        }
        let person: PersonOption
        let json: Bool
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            person = try PersonOption(arguments)
            json = arguments.flag("json")
            storePath = try arguments.value("store")
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context)
            defer { store.close() }
            let profile = try person.resolve(in: store).profile
            if json {
                var line = "{\"dateOfBirth\":" + (profile.dateOfBirth.map { JSONText.quoted($0.description) } ?? "null")
                line += ",\"biologicalSex\":" + JSONText.quoted(profile.biologicalSex.rawValue)
                if let height = profile.height {
                    line += ",\"height\":{\"value\":\(JSONNumber.format(height.value)),\"unit\":\(JSONText.quoted(height.unit.unitString))}"
                } else {
                    line += ",\"height\":null"
                }
                context.stdout.writeLine(line + "}")
            } else {
                context.stdout.writeLine("date of birth:  \(profile.dateOfBirth?.description ?? "not set")")
                context.stdout.writeLine("biological sex: \(profile.biologicalSex.rawValue)")
                context.stdout.writeLine("height:         \(profile.height?.description ?? "not set")")
            }
        }
    }

    struct Set: Command {
        static let configuration = CommandConfiguration(name: "set", abstract: "Set characteristics; others stay as they are.")
        static let signature = Signature {
            Option("date-of-birth", valueName: "YYYY-MM-DD", help: "Date of birth.")
            Option("biological-sex", valueName: "female|male|other", help: "Biological sex.",
                   allowedValues: ["female", "male", "other", "notSet"])
            Option("height", valueName: "H", help: "Height (with --unit).")
            CommonArguments.unit
            PersonOption.self
            CommonArguments.store
        }
        let person: PersonOption
        let dateOfBirth: CalendarDate?
        let sex: BiologicalSex?
        let height: Quantity?
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            dateOfBirth = try arguments.value("date-of-birth", expected: "a date YYYY-MM-DD") { CalendarDate($0) }
            sex = try arguments.value("biological-sex", expected: "female, male or other") { BiologicalSex(named: $0) }
            let heightValue: Double? = try arguments.value("height")
            let unitText: String? = try arguments.value("unit")
            if let heightValue {
                guard let unitText else { throw UsageError.invalid("--height needs --unit (cm, m, in, ft)") }
                guard let unit = try? HealthModel.Unit(from: unitText), unit.isCompatible(with: .meter) else {
                    throw UsageError.invalidValue(unitText, argument: "--unit", reason: "not a length unit")
                }
                guard let metres = try? unit.convert(heightValue, to: .meter), QuantityType.height.plausibleRange.contains(metres) else {
                    throw UsageError.invalidValue(String(heightValue), argument: "--height", reason: "not a plausible height")
                }
                height = Quantity(value: heightValue, unit: unit)
            } else {
                if unitText != nil { throw UsageError.invalid("--unit is only used with --height") }
                height = nil
            }
            storePath = try arguments.value("store")
            person = try PersonOption(arguments)
            if let dateOfBirth, let date = CommonArguments.startOfDay(dateOfBirth, in: TimeZone(identifier: "UTC") ?? .current),
               date > Date() {
                throw UsageError.invalidValue(dateOfBirth.description, argument: "--date-of-birth", reason: "is in the future")
            }
            if dateOfBirth == nil, sex == nil, height == nil {
                throw UsageError.invalid("nothing to set: give --date-of-birth, --biological-sex or --height")
            }
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context)
            defer { store.close() }
            let owner = try person.resolve(in: store)
            var profile = owner.profile
            if let dateOfBirth { profile.dateOfBirth = dateOfBirth }
            if let sex { profile.biologicalSex = sex }
            if let height { profile.height = height }
            try store.setProfile(profile, of: owner)
        }
    }
}
