import ArgumentParsing
import Foundation
import WebDashboard

/// `--token @FILE` of `serve` and `run --http`: the dashboard's access token, read from a file so
/// that it never shows in the process list; required for any address but loopback.
struct DashboardTokenOption: OptionGroup {
    static let tokenOption = TypedOption<String>(Option(
        "token", valueName: "@FILE", help: "A file holding the access token (needed to listen on anything but 127.0.0.1/::1)."))

    static var arguments: [ArgumentElement] { [tokenOption.element] }

    let token: String?

    init(_ values: ParsedValues) throws {
        guard let text = try values.value(Self.tokenOption) else {
            token = nil
            return
        }
        guard text.hasPrefix("@"), text.count > 1 else {
            throw UsageError.invalidValue("…", argument: "--token",
                                          reason: "give the token as @FILE (a file holding it), so that it is not in the process list")
        }
        let path = String(text.dropFirst())
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError.unreadable(path: path, reason: "cannot read the token file")
        }
        let value = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard value.count >= 16, !value.contains(where: { $0.isWhitespace }) else {
            throw UsageError.invalidValue("@" + path, argument: "--token",
                                          reason: "the token must be at least 16 characters without spaces (e.g. 'openssl rand -hex 24 > FILE')")
        }
        token = value
    }

    /// The address parsed and checked against the token: anything but loopback needs one.
    static func address(_ text: String, argument: String, token: String?) throws -> ListenAddress {
        let address: ListenAddress
        do {
            address = try ListenAddress(text)
        } catch {
            throw UsageError.invalidValue(text, argument: argument, reason: error.description)
        }
        if !address.isLoopback, token == nil {
            throw UsageError.invalidValue(text, argument: argument,
                                          reason: "listening on \(address.host) lets other machines in: give --token @FILE, or listen on 127.0.0.1")
        }
        return address
    }
}
