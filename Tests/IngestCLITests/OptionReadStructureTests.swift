import Foundation
import Testing
@testable import IngestCLI

/// Issue 26 item 4: no option is read by a string key. Every option, flag and positional of the
/// command line is declared once as a static typed handle (`TypedOption`, `TypedFlag`,
/// `TypedFlagGroup`, `TypedPositional`, `TypedPositionals`) and read through it, so a renamed
/// option cannot leave a read behind that only fails when the command runs.
@Suite struct OptionReadStructureTests {
    /// A read of parsed values whose key is a string literal: `arguments.value("types")`,
    /// `values.flag("json")`, `parsed.count("batch-size", in: …)`.
    static let stringKeyedRead = #"\.(value|values|required|flag|count|seconds|isPresent|rawValues|suppliedOrigin|declaresOption|declares|choice|double|integer)\(\s*#?""#

    /// The lines of `files` that read an argument by a string key, as `path:line: text`.
    static func stringKeyedReads(in files: [(path: String, text: String)]) throws -> [String] {
        let pattern = try Regex(stringKeyedRead)
        var found: [String] = []
        for (path, text) in files {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(pattern) {
                found.append("\(path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    @Test func theCommandLineReadsNoArgumentByAStringKey() throws {
        let files = try StoreBoundaryTests.swiftFiles(under: "IngestCLI")
        #expect(files.count > 50)
        let reads = try Self.stringKeyedReads(in: files)
        #expect(reads.isEmpty, "read through a typed handle instead (Sources/ArgumentParsing/TypedOption.swift):\n\(reads.joined(separator: "\n"))")
    }

    @Test func theScanFindsAStringKeyedReadAndNamesItsLine() throws {
        let text = """
            init(_ arguments: ParsedValues) throws {
                name = try arguments.required(Self.nameArgument)
                limit = try arguments.count("batch-size", in: 1...10)
                json = values.flag( "json")
                seconds = .seconds(30)
            }
            """
        let reads = try Self.stringKeyedReads(in: [("IngestCLI/Commands/Example.swift", text)])
        #expect(reads == [
            #"IngestCLI/Commands/Example.swift:3: limit = try arguments.count("batch-size", in: 1...10)"#,
            #"IngestCLI/Commands/Example.swift:4: json = values.flag( "json")"#,
        ])
    }
}

extension OptionReadStructureTests {
    /// A configuration key supplies the option of its own name, declared by the command line's handle.
    @Test func eachConfigurationKeyNamesTheOptionOfItsName() {
        for key in ConfigurationKey.allCases {
            #expect(key.optionName == key.rawValue, "\(key)")
        }
    }
}
