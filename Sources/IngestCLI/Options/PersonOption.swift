import ArgumentParsing
import HealthModel
import Pipeline

/// `--person NAME` of the query commands: whose samples a command reads. Without it, the only
/// person of the store; with several people, a usage error listing them.
struct PersonOption: OptionGroup {
    static let person = TypedOption<String>(Option(
        "person", valueName: "NAME", help: "Whose samples (default: the only person; required when the store has several)."))

    static var arguments: [ArgumentElement] { [person.element] }

    /// The name given, or nil for "the only person".
    let name: String?
    /// Where the name came from when not from the command line (`/etc/ingestd/ingestd.conf:4`).
    let origin: String?

    init(_ values: ParsedValues) throws {
        name = try values.value(Self.person)
        origin = values.suppliedOrigin(Self.person)
    }

    /// The person named by `--person`, or the only one; a usage error when the name is unknown
    /// or when several people leave the choice open.
    func resolve(in store: any PeopleStore) throws -> Person {
        let everybody = try store.people()
        if let name {
            guard let person = everybody.first(where: { $0.name == name }) else {
                throw Self.unknownPerson(name, known: everybody.map(\.name), origin: origin)
            }
            return person
        }
        guard everybody.count == 1, let only = everybody.first else {
            if everybody.isEmpty { throw UsageError.invalid("the store has no people; add one with 'ingestd people add NAME'") }
            throw Self.severalPeople(everybody.map(\.name))
        }
        return only
    }

    /// `--person NAME` (or the configuration's `person`, from `origin`) names nobody: a few of
    /// the people and their count, never all 10,001.
    static func unknownPerson(_ name: String, known: [String], origin: String? = nil) -> UsageError {
        .invalidValue(PrintableText.escaped(name), argument: "--person" + (origin.map { " (from \($0))" } ?? ""),
                      reason: "no such person (people: \(peopleList(known)))")
    }

    /// No `--person` in a store of several people.
    static func severalPeople(_ names: [String]) -> UsageError {
        .invalid("the store has \(names.count) people (\(peopleList(names))): give --person NAME")
    }

    /// `Ann, Bob, Cem, Dan, Eve and 9996 more; 'ingestd people list' shows all 10001`.
    static func peopleList(_ names: [String]) -> String { PeopleError.listing(names) }
}

/// `--assign-tolerance PERCENT` of `run` and `replay`: how far a shared scale's body mass may be
/// from a person's recent weight to be theirs (when nobody else's is also that close).
struct AssignToleranceOption: OptionGroup {
    static let tolerance = TypedOption<Double>(Option(
        "assign-tolerance", valueName: "PERCENT",
        help: "A shared scale's weighing goes to the only person whose recent weight is within this many percent.",
        default: "10"))

    static var arguments: [ArgumentElement] { [tolerance.element] }

    /// The tolerance as a fraction (10 % = 0.10).
    let fraction: Double

    init(_ values: ParsedValues) throws {
        let percent = try values.value(Self.tolerance) ?? PersonAssigner.defaultTolerance * 100
        guard percent.isFinite, percent >= 0, percent <= 50 else {
            throw UsageError.invalidValue(String(percent), argument: Self.tolerance.spelling, reason: "must be 0...50 (percent)")
        }
        fraction = percent / 100
    }
}

extension PeopleError {
    /// The CLI's view of a refused change: every case names an argument the user gave (an
    /// unknown name or uuid, a taken slot, a missing --reassign), so it is a usage error.
    var usageError: UsageError { .invalid(description) }
}
