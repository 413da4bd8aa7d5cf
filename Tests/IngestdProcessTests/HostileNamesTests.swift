import Foundation
import Testing
import TestSupport

/// Issue 23 finding 19: source names with ESC sequences and newlines, a source named `--all`
/// and look-alike names, from an Apple Health export, as the CLI prints them and as the printed
/// grant commands work when pasted into a shell.
@Suite(.serialized, .offCooperativePool) struct HostileNamesTests {
    let directory: URL
    /// The export's `Evil&#x1B;[31mWatch&#10;line2` as a source id: its control characters as
    /// their escapes (source ids are printable text).
    static let evil = #"Evil\e[31mWatch\nline2"#
    static let dashes = "--all"
    static let plain = "Jana's Apple Watch"
    static let noBreak = "Jana's\u{A0}Apple Watch"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
    }

    private var store: String { directory.appendingPathComponent("health.sqlite").path }

    private func ingestd(_ arguments: [String]) throws -> IngestdProcess.Output {
        try IngestdProcess.runBlocking(arguments + ["--store", store])
    }

    /// An export.xml with one step record per source (attribute values as XML writes them).
    private func importExport() throws -> IngestdProcess.Output {
        let sources = ["Evil&#x1B;[31mWatch&#10;line2", "--all", "Jana&apos;s Apple Watch", "Jana&apos;s&#xA0;Apple Watch"]
        let records = sources.enumerated().map { index, source in
            #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="\#(source)" unit="count" "#
                + #"creationDate="2026-11-01 09:0\#(index):00 +0000" startDate="2026-11-01 08:0\#(index):00 +0000" "#
                + #"endDate="2026-11-01 08:0\#(index):30 +0000" value="\#(index + 10)"/>"#
        }
        let document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n"
            + records.joined(separator: "\n") + "\n</HealthData>\n"
        let path = directory.appendingPathComponent("export.xml").path
        try document.write(toFile: path, atomically: true, encoding: .utf8)
        return try ingestd(["import", path])
    }

    /// Runs a printed `ingestd auth VERB …` command line through bash, as a user pasting it
    /// would, with `--store STORE` added after the verb.
    private func paste(_ commandLine: String) throws -> IngestdProcess.Output {
        let words = commandLine.split(separator: " ", maxSplits: 3)
        try #require(words.count == 4 && words[0] == "ingestd" && words[1] == "auth", "\(commandLine)")
        let script = "'\(try IngestdProcess.path())' auth \(words[2]) --store '\(store)' \(words[3])"
        return try ChildProcess.run("/bin/bash", ["-c", script], limit: 60, name: "bash")
    }

    private func pendingGrants() throws -> [String: String] {
        var grants: [String: String] = [:]
        for line in try ingestd(["auth", "pending", "--json"]).lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            grants[try #require(object["source"] as? String)] = try #require(object["grant"] as? String)
        }
        return grants
    }

    private func storedSources() throws -> [String] {
        try ingestd(["samples", "stepCount", "--json"]).lines.compactMap { line in
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["source"] as? String
        }
    }

    @Test func namesArePrintedEscapedEverywhere() throws {
        let imported = try importExport()
        #expect(imported.status == 0, "\(imported.stderr)")
        let outputs = [("import", imported.stdout + imported.stderr)]
            + [["auth", "pending"], ["status"], ["sources"], ["auth", "list"]].map { arguments -> (String, String) in
                let result = try? ingestd(arguments)
                return (arguments.joined(separator: " "), (result?.stdout ?? "") + (result?.stderr ?? ""))
            }
        for (name, text) in outputs {
            #expect(!text.contains("\u{1B}"), "\(name) printed a raw ESC: \(text)")
            #expect(!text.contains("\u{A0}"), "\(name) printed a raw no-break space: \(text)")
            #expect(!text.split(separator: "\n").contains { $0.hasPrefix("line2") }, "\(name) broke a line inside a name: \(text)")
        }
        #expect(imported.stderr.contains(#"Evil\e[31mWatch\nline2"#), "\(imported.stderr)")
        let pending = try ingestd(["auth", "pending"]).stdout
        #expect(pending.contains(#"ingestd auth grant 'Evil\e[31mWatch\nline2' stepCount"#), "\(pending)")
        #expect(pending.contains(#"ingestd auth grant $'Jana\'s\u00A0Apple Watch' stepCount"#), "\(pending)")
        #expect(pending.contains(#"Jana's\u00A0Apple Watch"#), "\(pending)")
        let sources = try ingestd(["sources"])
        #expect(sources.stderr.contains(#"warning: sources "Jana's Apple Watch" and "Jana's\u00A0Apple Watch" look alike"#), "\(sources.stderr)")
    }

    @Test func printedGrantCommandsGrantExactlyTheirSourceWhenPasted() throws {
        #expect(try importExport().status == 0)
        let grants = try pendingGrants()
        #expect(Set(grants.keys) == [Self.evil, Self.dashes, Self.plain, Self.noBreak])
        // The source called --all: its command must not grant some other source every type.
        let dashes = try paste(try #require(grants[Self.dashes]))
        #expect(dashes.status == 0, "\(grants[Self.dashes] ?? ""): \(dashes.stderr)")
        #expect(try storedSources() == [Self.dashes])
        let list = try ingestd(["auth", "list", "--json"]).lines
        #expect(list.count == 1 && list[0].contains(#""source":"--all""#) && list[0].contains("StepCount"), "\(list)")
        // The ESC/newline source and the one with a no-break space: accepted as printed, their held samples come in.
        let evil = try paste(try #require(grants[Self.evil]))
        #expect(evil.status == 0, "\(grants[Self.evil] ?? ""): \(evil.stderr)")
        #expect(!evil.stderr.contains("\u{1B}"))
        let noBreak = try paste(try #require(grants[Self.noBreak]))
        #expect(noBreak.status == 0, "\(grants[Self.noBreak] ?? ""): \(noBreak.stderr)")
        #expect(noBreak.stderr.contains(#"looks like "Jana's Apple Watch""#), "\(noBreak.stderr)")
        #expect(Set(try storedSources()) == [Self.dashes, Self.evil, Self.noBreak])
        #expect(Set(try pendingGrants().keys) == [Self.plain])
    }

    @Test func grantsToLookAlikeAndUnseenSourcesWarn() throws {
        #expect(try importExport().status == 0)
        let alike = try ingestd(["auth", "grant", Self.plain, "stepCount"])
        #expect(alike.status == 0, "\(alike.stderr)")
        #expect(alike.stderr.contains(#"warning: source "Jana's Apple Watch" looks like "Jana's\u00A0Apple Watch" but is a different source"#),
                "\(alike.stderr)")
        let unseen = try ingestd(["auth", "grant", "Jana's Apple Wach", "stepCount"])
        #expect(unseen.status == 0, "\(unseen.stderr)")
        #expect(unseen.stderr.contains(#"warning: no sample from source "Jana's Apple Wach" has been seen yet"#), "\(unseen.stderr)")
        #expect(unseen.stderr.contains(#"(seen sources closest to it: "Jana's Apple Watch", "Jana's\u00A0Apple Watch")"#), "\(unseen.stderr)")
        // A control character in a source the store never met is still a usage error.
        let typo = try ingestd(["auth", "grant", "a\u{1B}b", "stepCount"])
        #expect(typo.status == 64, "\(typo.stderr)")
    }
}
