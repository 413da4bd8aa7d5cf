import ArgumentParsing
import Foundation
import Testing
@testable import IngestCLI

/// The shared options are declared once (`Sources/IngestCLI/Options/`); every command that uses a
/// group shows the same help and refuses a bad value with the same error.
@Suite struct SharedOptionTests {
    @Test func aControllerIndexOutOfRangeIsRefusedByEveryCommandThatTakesOne() async throws {
        let scenario = try Scenario()
        for arguments in [["run", "--hci", "64"], ["capture", "--out", "x", "--hci", "99"]] {
            let result = await scenario.run(arguments, withStore: false)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.first == "error: invalid value '\(arguments.last ?? "")' for --hci: not a controller index",
                    "\(result.stderr)")
        }
    }

    /// `StoreLocation` is the one decision about `--store`: a value with a URL scheme is a fleet's
    /// database (postgresql, postgres, any case) or refused, never a file; anything else is a path.
    @Test func aStoreValueWithAURLSchemeIsNeverAFilePath() throws {
        #expect(try StoreLocation(nil) == .file(nil))
        for path in ["health.sqlite", "/var/lib/ingestd/health.sqlite", "./postgresql://x", "dir/a://b", "postgresql:", "1x://y",
                     "my store:/x"] {
            #expect(try StoreLocation(path) == .file(path), "\(path)")
        }
        for url in ["postgresql://a@127.0.0.1:1/c", "postgres://h/db", "PostgreSQL://h/db", "postgresql:///db?host=/run/postgresql"] {
            #expect(try StoreLocation(url) == .fleet(url: url), "\(url)")
        }
        for other in ["file:///tmp/x.sqlite", "sqlite://x", "https://h/x", "s3+v2.a-b://bucket/x"] {
            #expect(throws: UsageError.self, "\(other)") { try StoreLocation(other) }
        }
        #expect(StoreLocation.scheme(of: "S3+v2.A-b://bucket") == "s3+v2.a-b")
        // A password in a refused URL is not repeated.
        #expect(throws: UsageError.invalidValue("mysql://u:***@h/db", argument: "--store",
                                                reason: "a 'mysql://' URL is not a store: give a store file's path or a fleet's postgresql://… URL")) {
            try StoreLocation("mysql://u:hunter2@h/db")
        }
    }

    @Test func badValuesOfTheSharedGroupsNameTheOptionAndTheValue() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("records.jsonl", [])
        for (arguments, message) in [
            (["samples", "stepCount", "--tz", "Mars/Olympus"], "error: invalid value 'Mars/Olympus' for --tz: not a known IANA time zone"),
            (["stats", "stepCount", "--sum", "--from", "yesterday"],
             "error: invalid value 'yesterday' for --from: expected an ISO 8601 date-time with offset or YYYY-MM-DD"),
            (["replay", file, "--pending-days", "0"], "error: invalid value '0' for --pending-days: must be 1...36500"),
            (["run", "--pending-max-bytes", "0"], "error: invalid value '0' for --pending-max-bytes: must be positive"),
            (["decode", file, "--usb", "0590"], "error: invalid value '0590' for --usb: expected VID:PID in hex, e.g. 0590:0028"),
            (["replay", file, "--adapter-option", "=x"], "error: invalid value '=x' for --adapter-option: expected KEY=VALUE"),
        ] {
            let result = await scenario.run(arguments, withStore: false)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.first == message, "\(arguments): \(result.stderr)")
        }
    }

    @Test func aGroupDeclaredWithAnotherHelpTextKeepsThatCommandsWording() async throws {
        let scenario = try Scenario()
        for (command, help) in [
            (["decode"], "Use this adapter for every device ('ingestd adapters' lists them)."),
            (["replay"], "For captures: use this adapter for every device."),
            (["types"], "One JSON object per type."),
            (["samples"], "One JSON object per line."),
            (["capture"], "Record this USB device (hex ids) instead of Bluetooth LE."),
            (["decode"], "For usbmon captures without descriptors: the device's ids (hex)."),
        ] {
            let result = await scenario.run(command + ["--help"], withStore: false)
            #expect(result.status == 0, "\(command)")
            // Help wraps long lines; compare with the whitespace collapsed.
            let text = result.stdout.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains(help), "\(command): \(result.stdout)")
        }
    }
}
