import ArgumentParsing
import Foundation

/// The daemon's configuration file (`ingestd run --config FILE`; the system service reads
/// `/etc/ingestd/ingestd.conf`): settings the service would otherwise need on its command line.
///
/// One `KEY = VALUE` per line; `#` starts a comment line; blank lines are skipped. Keys:
/// `adapter` (a pin, `ADDRESS=ID` or `VID:PID=ID`, as `--adapter`) and `adapter-option`
/// (`KEY=VALUE`, as `--adapter-option`), each repeatable. The command line adds to the file and
/// wins where both set the same device or option.
struct DaemonConfigurationFile: Equatable {
    /// The longest file read (a configuration is a few lines).
    static let maximumBytes = 64 * 1024
    /// The keys a line may set.
    static let keys: Set<String> = ["adapter", "adapter-option"]

    /// The `adapter` values, in file order.
    var pins: [String] = []
    /// The `adapter-option` values, in file order.
    var adapterOptions: [String] = []

    init() {}

    /// Parses the text of the file at `path` (named in errors).
    init(text: String, path: String) throws(CommandFailure) {
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw CommandFailure("\(path):\(index + 1): expected KEY = VALUE, got \"\(line)\"", exitCode: .usage)
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard Self.keys.contains(key) else {
                throw CommandFailure("\(path):\(index + 1): unknown key \"\(key)\" (known: \(Self.keys.sorted().joined(separator: ", ")))",
                                     exitCode: .usage)
            }
            guard !value.isEmpty else { throw CommandFailure("\(path):\(index + 1): \(key) has no value", exitCode: .usage) }
            if key == "adapter" { pins.append(value) } else { adapterOptions.append(value) }
        }
    }

    /// Reads and parses the file; a missing or unreadable file is an error naming it.
    init(path: String) throws(CommandFailure) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CommandFailure("--config: cannot read \(path)", exitCode: .noInput)
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: Self.maximumBytes + 1)) ?? Data()
        guard data.count <= Self.maximumBytes else {
            throw CommandFailure("--config: \(path) is longer than \(Self.maximumBytes) bytes", exitCode: .dataError)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure("--config: \(path) is not UTF-8 text", exitCode: .dataError)
        }
        try self.init(text: text, path: path)
    }

    /// The file's adapter options with `commandLine`'s (`--adapter-option`) on top; `path` names
    /// the file in errors (a malformed pair is a usage error).
    func adapterOptions(overriddenBy commandLine: [String: String], path: String?) throws(CommandFailure) -> [String: String] {
        do {
            return try CommonArguments.adapterOptions(adapterOptions).merging(commandLine) { _, given in given }
        } catch {
            throw CommandFailure("\(path ?? "--config"): \(error)", exitCode: .usage)
        }
    }
}
