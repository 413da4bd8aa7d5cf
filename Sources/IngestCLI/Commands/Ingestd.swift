import ArgumentParsing
import IngestRuntime
/// The root of the `ingestd` command tree.
public struct Ingestd: Command {
    public static let version = IngestdRelease.version

    public static let configuration = CommandConfiguration(
        name: "ingestd",
        abstract: "Turn wearables and home medical devices into clean, HealthKit-shaped health data.",
        discussion: """
            Samples from devices and captured logs pass a pipeline that normalizes units, validates \
            ranges, authorizes per (source, type) and deduplicates, into a local SQLite store. Query \
            them with samples, stats, today and changes. A new source's samples wait for your decision: \
            see 'ingestd auth pending', then 'ingestd auth grant' or 'ingestd auth deny'.
            """,
        version: version,
        subcommands: [
            RunCommand.self, ReplayCommand.self, ImportCommand.self, DecodeCommand.self, CaptureCommand.self, SamplesCommand.self, StatsCommand.self, TodayCommand.self, BodyCommand.self,
            ChangesCommand.self, WatchCommand.self,
            ExportCommand.self, ServeCommand.self, ReportCommand.self,
            AuthCommand.self, PriorityCommand.self, SourcesCommand.self, StatusCommand.self, ProfileCommand.self,
            PeopleCommand.self, UnassignedCommand.self, AssignCommand.self, KeysCommand.self,
            AdaptersCommand.self, DevicesCommand.self, ScanCommand.self, DoctorCommand.self, UnitsCommand.self, TypesCommand.self,
            UdevRulesCommand.self, SinksCommand.self, CompletionsCommand.self, ConfigCommand.self,
        ],
        defaultSubcommand: RunCommand.self,
        examples: [
            "ingestd run --config /etc/ingestd/ingestd.conf",
            "ingestd today --person anna",
            "ingestd samples HeartRate --newest 5",
            "ingestd help --man",
        ]
    )

    public init(_ arguments: ParsedValues) throws {}
}
