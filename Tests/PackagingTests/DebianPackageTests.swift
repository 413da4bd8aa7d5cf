import Foundation
import Testing
import TestSupport

/// The Debian package end to end: `scripts/package-deb` builds it (release, static Swift runtime
/// and Foundation, Debian libraries only, lintian without errors) and `scripts/package-deb-check`
/// installs, upgrades, removes and purges it in a fresh Debian 12 root (debootstrap, cached under
/// .build/debian-root). Needs root and debootstrap (scripts/bootstrap-tests); the first run builds
/// the release binary in .build/deb and makes the root, later runs reuse both.
@Suite(.offCooperativePool) struct DebianPackageTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var unavailable: String? {
        if getuid() != 0 { return "not root (debootstrap and chroot need it)" }
        for tool in ["/usr/sbin/debootstrap", "/usr/bin/lintian", "/usr/bin/dpkg-shlibdeps"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is not installed (scripts/bootstrap-tests installs it)"
        }
        return nil
    }

    @Test(.timeLimit(.minutes(60))) func buildsLintsAndLivesThroughInstallUpgradeRemoveAndPurge() throws {
        if let reason = Self.unavailable {
            print("skipped: the Debian package test: \(reason)")
            return
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("deb-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: out) }
        let build = try ChildProcess.run(Self.repository.appendingPathComponent("scripts/package-deb").path,
                                         ["--out", out.path], limit: 45 * 60, name: "scripts/package-deb")
        try #require(build.status == 0, "scripts/package-deb failed:\n\(build.stderr.suffix(4000))")
        let deb = try #require(build.lines.last, "no package path printed")
        #expect(URL(fileURLWithPath: deb).lastPathComponent.hasPrefix("ingestd_"))
        #expect(build.stderr.contains("Recommends: libcurl4, libpq5, libmosquitto1"), "\(build.stderr.suffix(2000))")
        let depends = build.stderr.split(separator: "\n").first { $0.hasPrefix("package-deb: Depends: ") } ?? ""
        for library in ["libcurl", "libpq", "libmosquitto", "libswift"] {
            #expect(!depends.contains(library), "\(depends)")
        }
        let check = try ChildProcess.run(Self.repository.appendingPathComponent("scripts/package-deb-check").path,
                                         [deb], limit: 30 * 60, name: "scripts/package-deb-check")
        #expect(check.status == 0, "scripts/package-deb-check failed:\n\(check.stderr.suffix(4000))")
        #expect(check.stderr.contains("package-deb-check: passed"), "\(check.stderr.suffix(2000))")
    }
}
