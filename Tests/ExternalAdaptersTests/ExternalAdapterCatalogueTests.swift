import ExternalAdapters
import Foundation
import Testing

@Suite("ExternalAdapterCatalogue", .offCooperativePool)
struct ExternalAdapterCatalogueTests {
    @Test("Usable and broken plugins are told apart; a built-in adapter's id is refused")
    func load() throws {
        let directory = try PluginDirectory()
        try directory.install("scale.py", as: "py-scale")
        try directory.install("hang.py", as: "hang")
        try directory.install("scale.py", as: "xiaomi-scale")
        try directory.install("scale.py", as: "not-executable", mode: 0o644)
        // Python's cold start took more than 5 s on a loaded CI machine; 12 s leaves room. The hung plugin is described
        // concurrently, so the test takes the limit once.
        let configuration = testConfiguration { $0.describeTimeout = .seconds(12) }
        let catalogue = ExternalAdapterCatalogue.load(directories: [directory.path], reservedIDs: ["xiaomi-scale", "bthome"],
                                                      configuration: configuration)
        #expect(catalogue.plugins.map(\.id) == ["hang", "not-executable", "py-scale", "xiaomi-scale"])
        #expect(catalogue.adapters.map(\.descriptor.id) == ["py-scale"])
        let states = Dictionary(uniqueKeysWithValues: catalogue.plugins.map { ($0.id, $0.state.description) })
        #expect(states["py-scale"] == "ok")
        #expect(states["hang"] == "broken: --describe did not finish within 12 s (killed)")
        #expect(states["xiaomi-scale"] == "broken: id \"xiaomi-scale\" is a built-in adapter's; an external adapter may not write under its source")
        #expect(states["not-executable"]?.hasPrefix("broken: not executable") == true)
        #expect(catalogue.plugins.first { $0.id == "py-scale" }?.descriptor?.name == "Mi Smart Scale (Python)")
    }
}
