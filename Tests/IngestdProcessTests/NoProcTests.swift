import Foundation
import Testing
import TestSupport

/// Without /proc (a chroot, a minimal container) Swift's `CommandLine` is empty on Linux: `ingestd
/// --version` then ran the default command, the daemon (issue 30). The command line now comes from
/// argv as the C library passed it, and an unreadable command line never starts the daemon.
@Suite(.offCooperativePool) struct NoProcTests {
    @Test func versionWithoutProcPrintsTheVersionAndExits() throws {
        let ingestd = try IngestdProcess.path()
        let expected = try IngestdProcess.runBlocking(["--version"])
        try #require(expected.status == 0 && !expected.stdout.isEmpty, "\(expected.stderr)")
        // A user and mount namespace (no privileges needed) with an empty tmpfs over /proc.
        let result = try ChildProcess.run(
            "/usr/bin/unshare", ["-rm", "sh", "-c", "mount -t tmpfs none /proc && test ! -e /proc/self && exec \"$0\" --version", ingestd],
            limit: 30, name: "unshare")
        #expect(!result.timedOut, "the daemon started: \(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == expected.stdout, "\(result.stdout)")
        #expect(!result.stderr.contains("started"), "\(result.stderr)")
    }
}
