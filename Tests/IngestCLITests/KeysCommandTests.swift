import Foundation
import Testing

/// `ingestd keys` and `replay --key` in-process on a temporary store, with the S400's published
/// frames and bindkey (xiaomi-ble tests/test_parser.py): the key is kept in the 0600 store and
/// never appears in any output.
@Suite struct KeysCommandTests {
    static let address = "8C:D0:B2:F6:BE:EF"
    static let key = "0728974d657a4b60964c1b1677f35f7c"
    static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AdapterTests/Captures/xiaomi-mibeacon/s400.btsnoop").path

    func everything(_ results: [Scenario.Result]) -> String {
        results.flatMap { $0.stdout + $0.stderr }.joined(separator: "\n").lowercased()
    }

    @Test func storedKeysDecryptReplayedFramesAndAreListedWithoutTheKey() async throws {
        let scenario = try Scenario()
        let keyFile = try scenario.write("s400.key", [Self.key])
        var results: [Scenario.Result] = []
        let added = await scenario.run(["keys", "add", Self.address.lowercased(), "@" + keyFile])
        results.append(added)
        #expect(added.status == 0, "\(added.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: scenario.store)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let before = await scenario.run(["keys", "list"])
        results.append(before)
        #expect(before.stdout.contains { $0.hasPrefix(Self.address) && $0.contains("nothing read from it yet") }, "\(before.stdout)")

        results.append(await scenario.run(["auth", "grant", "xiaomi-mibeacon", "--all"]))
        let replayed = await scenario.run(["replay", Self.capture, "--tz", "Europe/Berlin"])
        results.append(replayed)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let masses = await scenario.run(["samples", "bodyMass", "--json"])
        #expect(masses.stdout.count == 1 && masses.stdout.first?.contains("\"value\":69.9") == true, "\(masses.stdout)")
        let rates = await scenario.run(["samples", "heartRate", "--json"])
        #expect(rates.stdout.count == 1, "\(rates.stdout)")

        let listed = await scenario.run(["keys", "list", "--json"])
        results.append(listed)
        #expect(listed.stdout.count == 1)
        #expect(listed.stdout.first?.hasPrefix("{\"address\":\"\(Self.address)\",\"addedAt\":\"") == true, "\(listed.stdout)")
        #expect(listed.stdout.first?.hasSuffix(",\"adapters\":[\"xiaomi-mibeacon\"]}") == true, "\(listed.stdout)")

        let removed = await scenario.run(["keys", "remove", Self.address])
        results.append(removed)
        #expect(removed.status == 0)
        let again = await scenario.run(["keys", "remove", Self.address])
        results.append(again)
        #expect(again.status == 65)
        #expect(again.stderr.first == "error: no key stored for \(Self.address) ('ingestd keys list' lists them)", "\(again.stderr)")
        #expect(!everything(results).contains(Self.key), "a key was printed")
    }

    /// `decode` opens no store, but uses the default store's keys when there is one.
    @Test func decodeUsesTheDefaultStoresKeys() async throws {
        let scenario = try Scenario()
        let without = await scenario.run(["decode", Self.capture, "--json"], withStore: false)
        #expect(without.status == 0 && without.stdout.isEmpty, "\(without.stdout)")
        let added = await scenario.run(["keys", "add", Self.address, Self.key], withStore: false)
        #expect(added.status == 0, "\(added.stderr)")
        let with = await scenario.run(["decode", Self.capture, "--json"], withStore: false)
        #expect(with.status == 0, "\(with.stderr)")
        #expect(with.stdout.count == 2 && with.stdout.first?.contains("\"value\":69.9") == true, "\(with.stdout)")
        #expect(!everything([without, added, with]).contains(Self.key))
    }

    @Test func badKeysAreRefusedWithoutEchoingThem() async throws {
        let scenario = try Scenario()
        let file = try scenario.write("records.jsonl", [])
        let short = String(Self.key.prefix(24))
        for (arguments, message) in [
            (["keys", "add", Self.address, short],
             "error: invalid value '\(Self.address)=…' for KEY: the key has 12 bytes (24 hexadecimal digits); expected 16 bytes (32 digits) (a 12-byte key is a MiBeacon v2/v3 legacy key, which ingestd does not take)"),
            (["keys", "add", "8C:D0:B2", Self.key], "error: invalid value '8C:D0:B2' for ADDRESS: not a Bluetooth address AA:BB:CC:DD:EE:FF"),
            (["replay", file, "--key", "\(Self.address)=\(Self.key.dropLast())g"],
             "error: invalid value '\(Self.address)=…' for --key: character 32 of the key is not a hexadecimal digit (expected 32 of them)"),
            (["decode", file, "--key", Self.key], "error: invalid value '…' for --key: expected ADDRESS=HEX or ADDRESS=@PATH"),
        ] {
            let result = await scenario.run(arguments, withStore: arguments.first != "decode")
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.first == message, "\(arguments): \(result.stderr)")
            #expect(!everything([result]).contains(short), "\(arguments): the key was echoed")
        }
    }
}
