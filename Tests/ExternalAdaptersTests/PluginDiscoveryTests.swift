import ExternalAdapters
import Foundation
import Testing

@Suite("PluginDiscovery")
struct PluginDiscoveryTests {
    @Test("Executables named ingestd-adapter-<id> are found in name order; other files are ignored")
    func finds() throws {
        let directory = try PluginDirectory()
        try directory.install("scale.py", as: "zeta")
        try directory.install("scale.py", as: "alpha")
        try directory.write("README", "not a plugin", mode: 0o644)
        try directory.write("alpha-helper", "#!/bin/sh\n", mode: 0o755)
        let candidates = PluginDiscovery.scan(directories: [directory.path])
        #expect(candidates.map(\.id) == ["alpha", "zeta"])
        #expect(candidates.allSatisfy { $0.problem == nil })
        #expect(candidates.first?.path == directory.path + "/ingestd-adapter-alpha")
    }

    @Test("Unusable files are listed with the reason")
    func problems() throws {
        let directory = try PluginDirectory()
        try directory.install("scale.py", as: "not-executable", mode: 0o644)
        try directory.install("scale.py", as: "group-writable", mode: 0o775)
        try directory.install("scale.py", as: "Bad_Name.py")
        try FileManager.default.createDirectory(atPath: directory.path + "/ingestd-adapter-folder", withIntermediateDirectories: false)
        let byID = Dictionary(uniqueKeysWithValues: PluginDiscovery.scan(directories: [directory.path]).map { ($0.id, $0.problem ?? "") })
        #expect(byID["not-executable"]?.hasPrefix("not executable") == true)
        #expect(byID["group-writable"]?.hasPrefix("writable by group or others") == true)
        #expect(byID["Bad_Name.py"]?.hasPrefix("the file name must be ingestd-adapter-<id> with a kebab-case id") == true)
        #expect(byID["folder"] == "not a regular file")
    }

    @Test("An id found again in a later directory is shadowed by the first; missing directories are skipped")
    func shadowing() throws {
        let first = try PluginDirectory()
        let second = try PluginDirectory()
        let kept = try first.install("scale.py", as: "acme")
        try second.install("scale.py", as: "acme")
        try second.install("scale.py", as: "other")
        let candidates = PluginDiscovery.scan(directories: ["/nonexistent/ingestd", first.path, second.path])
        #expect(candidates.map(\.id) == ["acme", "acme", "other"])
        #expect(candidates.map(\.problem) == [nil, "shadowed by \(kept)", nil])
    }

    @Test("A directory anyone may write to is not trusted")
    func worldWritableDirectory() throws {
        let directory = try PluginDirectory()
        try directory.install("scale.py", as: "acme")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let candidates = PluginDiscovery.scan(directories: [directory.path])
        #expect(candidates.first?.problem == "its directory \(directory.path) is writable by others")
    }

    @Test("Default directories: the user's, then the system's")
    func defaults() {
        #expect(ExternalAdapterDirectories.defaults(environment: ["HOME": "/home/ada"])
                == ["/home/ada/.local/lib/ingestd/adapters", "/usr/lib/ingestd/adapters"])
        #expect(ExternalAdapterDirectories.defaults(environment: [:]) == ["/usr/lib/ingestd/adapters"])
        #expect(ExternalAdapterDirectories.resolve(["/opt/p"], environment: ["HOME": "/home/ada"]) == ["/opt/p"])
    }
}
