import ArgumentParsing
import Export
import Foundation
import HealthModel
import Pipeline

/// `ingestd export --format fhir|csv|jsonl`: the store's records as a FHIR R4 transaction Bundle,
/// CSV or JSON lines, streamed from a cursor to stdout or `--out FILE`.
struct ExportCommand: Command {
    static let configuration = CommandConfiguration(
        name: "export", abstract: "Export stored samples as FHIR R4 Observations, CSV or JSON lines.",
        discussion: """
            fhir: one transaction Bundle; each sample an Observation (LOINC code, UCUM unit, the sample \
            uuid as identifier) created only if none with that identifier exists; a blood pressure is one \
            panel Observation with systolic and diastolic components. Types without a LOINC code are \
            skipped and listed on stderr. csv: one row per sample (--layout long), or openScale's import \
            columns for body measurements (--layout openscale, times in --tz). jsonl: ingestd's sample \
            format. Records overlapping [--from, --to) are exported, oldest first, in constant memory. \
            With --store postgresql://… the fleet's samples (every gateway's, or --gateway ID's); a fleet \
            keeps samples, not correlations, so a blood pressure comes as its two member samples.
            """,
        examples: [
            "ingestd export --format csv --layout openscale --out weight.csv",
            "ingestd export --format fhir --out health.json",
            "ingestd export --format jsonl --store postgresql://gateway@db.example/health --person alice",
        ]
    )
    static let formatOption = TypedOption<String>(Option(
        "format", valueName: "fhir|csv|jsonl", help: "Output format.",
        allowedValues: ExportFormat.allCases.map(\.rawValue), required: true))
    static let typesOption = TypedOption<String>(Option(
        "types", valueName: "T,…",
        help: "Only these types, comma-separated (default: all); bloodPressure or food selects a correlation's members.",
        repeatable: true))
    static let layoutOption = TypedOption<String>(Option(
        "layout", valueName: "long|openscale", help: "CSV layout (csv only).", default: "long", allowedValues: ["long", "openscale"]))
    static let outOption = TypedOption<String>(Option(
        "out", valueName: "FILE", help: "Write to FILE (created 0600, replaced only when complete) instead of stdout."))
    static let signature = Signature {
        Self.formatOption
        Self.typesOption
        TimeRangeOptions.self
        Self.layoutOption
        Self.outOption
        PersonOption.self
        QueryStoreOptions.self
    }

    let format: ExportFormat
    let types: [QuantityType]?
    let from: Date?
    let to: Date?
    let zone: TimeZone
    /// `--tz` as given; the long CSV layout prints times in it (UTC without it).
    let zoneName: String?
    let layout: String
    let outPath: String?
    let storeOptions: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        let formatName = try arguments.required(Self.formatOption)
        guard let format = ExportFormat(rawValue: formatName) else {
            throw UsageError.invalidValue(formatName, argument: "--format", reason: "expected fhir, csv or jsonl")
        }
        self.format = format
        let names = try arguments.values(Self.typesOption)
            .flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { !$0.isEmpty }
        types = names.isEmpty ? nil : try names.flatMap(Self.selectedTypes)
        let range = try TimeRangeOptions(arguments)
        zone = range.zone
        zoneName = range.zoneName
        from = range.from
        to = range.to
        layout = try arguments.value(Self.layoutOption) ?? "long"
        outPath = try arguments.value(Self.outOption)
        if let outPath { try OutputFileTarget.check(outPath) }
        storeOptions = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
        if let from, let to, from >= to { throw UsageError.invalid("--from must be before --to") }
        if layout != "long", format != .csv { throw UsageError.invalid("--layout is for --format csv only") }
    }

    /// A quantity type by name, or a correlation type's member types (`bloodPressure`, `food`).
    static func selectedTypes(_ name: String) throws -> [QuantityType] {
        switch CorrelationType.named(name) {
        case .bloodPressure: [.bloodPressureSystolic, .bloodPressureDiastolic]
        case .food: QuantityType.catalogue.filter(\.isDietary)
        case nil: [try CommonArguments.quantityType(name)]
        }
    }

    func makeWriter() -> any ExportWriter {
        switch format {
        case .fhir: FHIRBundleWriter()
        case .jsonl: JSONLinesWriter()
        case .csv where layout == "openscale": OpenScaleCSVWriter(timeZone: zone)
        case .csv: CSVLongWriter(timeZone: zoneName == nil ? nil : zone)
        }
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeOptions.open(context)
        defer { store.close() }
        let scope = try storeOptions.scope(person, in: store)
        let destination = try outPath.map { try ExportFile(path: $0) }
        var writer = makeWriter()
        var buffer = ""
        let chunkSize = 64 * 1024
        func drain() throws {
            if let destination { try destination.write(buffer) } else { context.stdout.write(buffer) }
            buffer.removeAll(keepingCapacity: true)
        }
        let readSummary: ExportReadSummary
        do {
            writer.writeHeader(to: &buffer)
            readSummary = try storeOptions.answering { try store.forEachRecord(types: types, from: from, to: to, scope: scope) { record in
                writer.write(record, to: &buffer)
                if buffer.utf8.count >= chunkSize {
                    try drain()
                    if destination == nil, context.stdout.isReaderGone { throw ExportStopped.readerGone }
                    if destination == nil, context.stdout.writeError != nil { try context.checkStandardOutput() }
                }
            } }
            writer.writeFooter(to: &buffer)
            try drain()
            try destination?.commit()
        } catch ExportStopped.readerGone {
            return
        } catch let error as ExportReadError {
            destination?.discard()
            throw CommandError.exportRead(error)
        } catch {
            destination?.discard()
            throw error
        }
        // A full disk under stdout fails the export before it claims to have exported anything.
        try context.checkStandardOutput()
        let summary = writer.summary
        context.stderr.writeLine("exported \(summary.written) \(format == .csv ? "rows" : "records") as \(format.rawValue)"
                                 + (outPath.map { " to \($0)" } ?? ""))
        for line in summary.skippedLines { context.stderr.writeLine(line) }
        for (identifier, count) in readSummary.unknownTypes.sorted(by: { $0.key < $1.key }) {
            context.stderr.writeLine("skipped \(count) stored samples of \(identifier), a type this build does not know")
        }
    }

    private enum ExportStopped: Error { case readerGone }
}

/// `--out FILE`: written as `FILE.partial` (0600), renamed over FILE only when the export is complete.
private final class ExportFile {
    let path: String
    let partialPath: String
    private var descriptor: Int32

    init(path: String) throws {
        self.path = path
        partialPath = path + ".partial"
        // The target is checked again here, just before the work: it may have been made since.
        try OutputFileTarget.check(path)
        // O_NONBLOCK: a FIFO planted as the `.partial` must fail here, not block the open.
        descriptor = open(partialPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            throw CommandError.unwritable(path: partialPath, reason: String(cString: strerror(errno)))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            descriptor = -1
            throw CommandError.unwritable(path: partialPath, reason: "\(OutputFileTarget.kindName(status.st_mode)), not a regular file")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    }

    func write(_ text: String) throws {
        do {
            try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: Data(text.utf8))
        } catch {
            throw CommandError.unwritable(path: partialPath, reason: error.localizedDescription)
        }
    }

    func commit() throws {
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw CommandError.unwritable(path: partialPath, reason: reason)
        }
        descriptor = -1
        guard rename(partialPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partialPath)
            throw CommandError.unreplaceable(path: path, reason: reason)
        }
    }

    func discard() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        unlink(partialPath)
    }
}
