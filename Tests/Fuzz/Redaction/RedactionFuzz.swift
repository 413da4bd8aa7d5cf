import FuzzSupport
import Redaction

/// libFuzzer target for the redaction layer (`SecretRedactor`). The input is split at its first
/// NUL byte into a secret and a text; the text is embedded around the secret in several ways
/// (raw, inside a URL's userinfo and query, in an echoed header). Whatever the bytes, the secret
/// never survives redaction, and redacting twice changes nothing more.
func fuzzRedaction(_ bytes: [UInt8]) {
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let secret = String(decoding: bytes[..<split], as: UTF8.self)
    let text = String(decoding: bytes[min(split + 1, bytes.count)...], as: UTF8.self)
    _ = SecretRedactor.redactingCredentials(text)
    // A secret made only of characters the marker, the templates or the surrounding text hold
    // could be re-formed by them; the property is checked for secrets with a character of their own.
    let surroundings = SecretRedactor.marker + text + "Authorization: Bearer\r\n{\"echo\":} "
    guard secret.unicodeScalars.count >= 3,
          !secret.unicodeScalars.allSatisfy({ surroundings.unicodeScalars.contains($0) }) else { return }
    let redactor = SecretRedactor(secrets: [secret])
    let embedded = [
        text + secret + text,
        "Authorization: Bearer \(secret)\r\n\(text)",
        "{\"echo\":\"\(secret)\"} \(text)",
    ]
    for sample in embedded {
        let once = redactor.redact(sample)
        precondition(!once.contains(secret), "the secret survived redaction of \(sample.debugDescription): \(once.debugDescription)")
        let twice = redactor.redact(once)
        precondition(twice == once, "redacting again changed \(once.debugDescription) into \(twice.debugDescription)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzRedaction)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzRedaction) }
}
#endif
