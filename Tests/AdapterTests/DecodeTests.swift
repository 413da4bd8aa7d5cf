import Foundation
import TestSupport
import Testing

/// The built `ingestd` binary, run as a user would: `ingestd decode FILE --json --tz Europe/Berlin`.
@Suite struct DecodeTests {
    /// One capture per adapter (BLE and USB, with the capture's adapter options), plus a malformed one.
    @Test(arguments: ["gatt-health/thermometer", "gatt-health/blood-pressure-fragmented",
                      "xiaomi-scale/mi-scale-v1", "bthome/bthome-mass", "ant-plus/scale", "temper/temper2"])
    func binaryPrintsTheExpectedRecords(_ name: String) throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == name })
        let output = try IngestdProcess.runBlocking(["decode", fixture.path, "--json", "--tz", Captures.zoneName]
                                                    + fixture.adapterOptionArguments())
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        try expectSameRecords(lines, try fixture.expectedRecords(), name)
        #expect(output.stderr.contains("→ adapter \(fixture.folder)"), "\(output.stderr)")
    }

    /// Every held-back capture with expected records (every profile, both fragmentations) in
    /// one `ingestd decode FILE... --json` run: the output is each file's records in turn.
    @Test func binaryDecodesEveryProfileToThePublishedValues() throws {
        let fixtures = Captures.withExpectedRecords.filter { !$0.isUSB }
        #expect(fixtures.count >= 20)
        let output = try IngestdProcess.runBlocking(["decode"] + fixtures.map(\.path) + ["--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        let expected = try fixtures.flatMap { try $0.expectedRecords() }
        try expectSameRecords(output.stdout.split(separator: "\n").map(String.init), expected, "all captures")
    }

    @Test func binaryReportsRejectionsAndStillSucceeds() throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "gatt-health/bad-weight-scale" })
        let output = try IngestdProcess.runBlocking(["decode", fixture.path, "--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("frames rejected, gatt-health: short-frame: 2"), "\(output.stderr)")
        #expect(output.stderr.contains("frames rejected, gatt-health: reserved-flags: 1"), "\(output.stderr)")
    }

    @Test func binaryDecodesAnUnsupportedDeviceToNothing() throws {
        let path = Captures.directory.appendingPathComponent("unsupported/dsd6_btsnoop_hci.log").path
        let output = try IngestdProcess.runBlocking(["decode", path, "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("571 records, 12 advertisements, 1 connections, 28 notifications"),
                "\(output.stderr)")
    }
}
