import Foundation
import Testing

/// The repository paths README.md and Plugins/README.md name (in backticks, starting at a
/// top-level folder of the repository) exist, so "where things are" stays true as files move.
@Suite struct DocumentationPathsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let topLevel = ["Sources/", "Tests/", "Plugins/", "scripts/", "udev/", "Fuzz/", ".ci/"]

    /// The backticked paths of a document: repository-relative, without placeholders (`<id>`) or globs.
    static func paths(in document: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        return text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
            .filter { path in topLevel.contains { path.hasPrefix($0) } }
            .filter { !$0.contains("<") && !$0.contains("*") && !$0.contains(" ") }
    }

    @Test(arguments: ["README.md", "Plugins/README.md"])
    func everyNamedPathExists(_ document: String) throws {
        let named = try Self.paths(in: document)
        #expect(named.count >= 10, "\(document) names \(named.count) paths")
        let missing = named.filter { !FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).path) }
        #expect(missing.isEmpty, "\(document) names paths that do not exist: \(missing)")
    }
}
