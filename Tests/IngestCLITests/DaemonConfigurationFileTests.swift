import ArgumentParsing
import Testing
@testable import IngestCLI

/// The daemon's configuration file (`ingestd run --config FILE`): pins and adapter options.
@Suite struct DaemonConfigurationFileTests {
    @Test func pinsAndOptionsAreReadInOrderAndCommentsSkipped() throws {
        let file = try DaemonConfigurationFile(text: """
            # pins for the bathroom
            adapter = F9:E5:10:60:E8:60=dsd6-band

              adapter=0590:0028=omron-hj720it
            adapter-option = yunmai-height-cm=181
            """, path: "/etc/ingestd/ingestd.conf")
        #expect(file.pins == ["F9:E5:10:60:E8:60=dsd6-band", "0590:0028=omron-hj720it"])
        #expect(file.adapterOptions == ["yunmai-height-cm=181"])
    }

    @Test func aBadLineNamesTheFileAndTheLine() {
        #expect(throws: CommandFailure("x.conf:2: unknown key \"adaptor\" (known: adapter, adapter-option)", exitCode: .usage)) {
            try DaemonConfigurationFile(text: "# first\nadaptor = AA:BB:CC:DD:EE:FF=gatt-health", path: "x.conf")
        }
        #expect(throws: CommandFailure("x.conf:1: expected KEY = VALUE, got \"adapter\"", exitCode: .usage)) {
            try DaemonConfigurationFile(text: "adapter", path: "x.conf")
        }
        #expect(throws: CommandFailure("x.conf:1: adapter has no value", exitCode: .usage)) {
            try DaemonConfigurationFile(text: "adapter =  ", path: "x.conf")
        }
    }

    /// Through `ingestd run`: a pin in the file to an adapter that does not exist is refused as
    /// one on the command line is; a bad pin names the file; a missing file exits 66; the file's pins
    /// and the command line's are checked together. (A run that starts the daemon is not made here.)
    @Test func theDaemonTakesItsPinsFromTheFile() async throws {
        let scenario = try Scenario()
        let unknown = try scenario.write("unknown.conf", ["adapter = F9:E5:10:60:E8:60=no-such-adapter"])
        let refused = await scenario.run(["run", "--config", unknown, "--no-usb", "--no-ble", "--once", "--listen", "0.1"])
        #expect(refused.status == 64)
        #expect(refused.stderr.first == "error: --adapter: no adapter \"no-such-adapter\" (ingestd adapters lists them)",
                "\(refused.stderr)")

        let malformed = try scenario.write("malformed.conf", ["adapter = F9:E5:10:60:E8=dsd6-band"])
        let bad = await scenario.run(["run", "--config", malformed, "--no-usb", "--no-ble", "--once", "--listen", "0.1"])
        #expect(bad.status == 64)
        #expect(bad.stderr.first?.hasPrefix("error: \(malformed): adapter: ") == true, "\(bad.stderr)")

        let missing = await scenario.run(["run", "--config", scenario.directory.appendingPathComponent("absent.conf").path, "--no-usb", "--no-ble",
                                          "--once", "--listen", "0.1"])
        #expect(missing.status == 66)

        // A good file with a command-line pin to an unknown adapter: the two lists are one, the
        // command line's error is the one reported.
        let good = try scenario.write("good.conf", ["adapter = F9:E5:10:60:E8:60=dsd6-band", "adapter-option = yunmai-age=41"])
        let merged = await scenario.run(["run", "--config", good, "--adapter", "0590:0028=nope", "--no-usb", "--no-ble",
                                         "--once", "--listen", "0.1"])
        #expect(merged.status == 64)
        #expect(merged.stderr.first == "error: --adapter: no adapter \"nope\" (ingestd adapters lists them)", "\(merged.stderr)")
    }
}
