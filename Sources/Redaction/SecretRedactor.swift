import Foundation
import Synchronization

/// The one redaction layer: every error text ingestd prints or stores (log lines, a sink's last
/// error, dead-letter reasons) passes through `redact`. It replaces the secrets it was told
/// (resolved `@file` and `env:` values, passwords, tokens, the Basic credentials made of them;
/// each also percent-encoded, JSON-escaped and base64-encoded) with `marker`, and the credentials
/// any URL in the text carries (a userinfo password, `password=`, `token=` and similar
/// parameters) without needing to know them. Thread-safe; shared by reference between the code
/// that learns secrets and the code that prints.
public final class SecretRedactor: Sendable {
    /// What a secret is replaced with.
    public static let marker = "[redacted]"
    /// Query and conninfo parameters whose values are credentials (compared case-insensitively).
    public static let credentialParameters = ["password", "passwd", "pass", "pwd", "token", "access_token", "api_key", "apikey",
                                              "secret", "sslpassword", "auth"]
    /// At most this many distinct secret texts are kept (a bound, not a working limit).
    public static let maximumSecrets = 1024
    /// Secrets longer than this are matched by their first `maximumSecretLength` characters.
    public static let maximumSecretLength = 4096

    private let secrets = Mutex<[String]>([])

    public init(secrets: [String] = []) {
        for secret in secrets { remember(secret) }
    }

    /// Adds `secret` (and its encoded forms) to what is redacted; empty strings are ignored.
    public func remember(_ secret: String) {
        guard !secret.isEmpty else { return }
        let text = String(secret.prefix(Self.maximumSecretLength))
        var forms = [text, Data(text.utf8).base64EncodedString()]
        if let percent = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { forms.append(percent) }
        forms += Self.jsonEscapedForms(text)
        secrets.withLock { list in
            for form in forms where !list.contains(form) && list.count < Self.maximumSecrets {
                list.append(form)
            }
            // Longest first, so that a secret containing another one is replaced whole.
            list.sort { $0.count > $1.count }
        }
    }

    /// How many secret forms are remembered.
    public var rememberedCount: Int { secrets.withLock { $0.count } }

    /// `text` with every remembered secret and every URL credential replaced by `marker`.
    public func redact(_ text: String) -> String {
        let known = secrets.withLock { $0 }
        var result = text
        for secret in known where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Self.marker)
        }
        return Self.redactingCredentials(result)
    }

    /// `text` with the credentials URLs and conninfo strings in it carry replaced by `marker`:
    /// the password of `scheme://user:password@host`, and the value of every
    /// `credentialParameters` name followed by `=` (up to `&`, whitespace, a quote or the end).
    public static func redactingCredentials(_ text: String) -> String {
        let characters = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        output.reserveCapacity(characters.count)
        var index = 0
        let lowered = characters.map { Character($0).lowercased() }
        while index < characters.count {
            // userinfo: "://" then up to '@' before any '/', whitespace: user[:password]@
            if characters[index] == ":", index + 2 < characters.count, characters[index + 1] == "/", characters[index + 2] == "/" {
                output.append(contentsOf: "://".unicodeScalars)
                index += 3
                var end = index
                while end < characters.count, !Self.endsAuthority(characters[end]) { end += 1 }
                if let at = characters[index..<end].lastIndex(of: "@"),
                   let colon = characters[index..<at].firstIndex(of: ":"), colon + 1 < at {
                    output.append(contentsOf: characters[index...colon])
                    output.append(contentsOf: marker.unicodeScalars)
                    index = at
                }
                continue
            }
            // name=value, with name a credential parameter at a word start
            if characters[index] == "=", let name = parameterName(before: index, in: lowered),
               credentialParameters.contains(name) {
                output.append("=")
                index += 1
                var end = index
                while end < characters.count, !endsValue(characters[end]) { end += 1 }
                if end > index { output.append(contentsOf: marker.unicodeScalars) }
                index = end
                continue
            }
            output.append(characters[index])
            index += 1
        }
        return String(output)
    }

    private static func endsAuthority(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "/" || scalar == "?" || scalar == "#" || scalar == "\"" || scalar == "'" || scalar == "<" || scalar == ">"
            || scalar.properties.isWhitespace
    }

    private static func endsValue(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "&" || scalar == "\"" || scalar == "'" || scalar == ";" || scalar == "," || scalar == ")" || scalar == "<"
            || scalar.properties.isWhitespace
    }

    /// The lower-cased word (letters, digits, `_`) just before `index`, if it starts the text or
    /// follows a separator.
    private static func parameterName(before index: Int, in lowered: [String]) -> String? {
        var start = index
        while start > 0, let scalar = lowered[start - 1].unicodeScalars.first, lowered[start - 1].unicodeScalars.count == 1,
              scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" {
            start -= 1
            if index - start > 32 { return nil }
        }
        guard start < index else { return nil }
        return lowered[start..<index].joined()
    }

    /// `text` as inside a JSON string, with `/` escaped and not (Foundation's encoder).
    private static func jsonEscapedForms(_ text: String) -> [String] {
        [JSONEncoder.OutputFormatting(), .withoutEscapingSlashes].compactMap { formatting in
            let encoder = JSONEncoder()
            encoder.outputFormatting = formatting
            guard let data = try? encoder.encode(text), let quoted = String(data: data, encoding: .utf8), quoted.count >= 2 else { return nil }
            return String(quoted.dropFirst().dropLast())
        }
    }
}
