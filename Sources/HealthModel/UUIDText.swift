import Foundation

/// A uuid's 8-4-4-4-12 hex text written from its 16 bytes, without Foundation's formatting: upper
/// case as `UUID.uuidString` spells it (the JSON lines, the CSV export), or lower case as the change
/// feed's deletions and the command tables print it.
public enum UUIDText {
    /// Which hex digits to write.
    public enum LetterCase: Sendable {
        case upper, lower
    }

    /// The text of `uuid`.
    public static func string(_ uuid: UUID, _ letterCase: LetterCase = .upper) -> String {
        var text = ""
        append(uuid, letterCase, to: &text)
        return text
    }

    /// Appends the text of `uuid` to `text`.
    public static func append(_ uuid: UUID, _ letterCase: LetterCase = .upper, to text: inout String) {
        text += withText(uuid, letterCase) { String(decoding: $0, as: UTF8.self) }
    }

    /// Appends the text of `uuid` to `bytes` (UTF-8).
    public static func append(_ uuid: UUID, _ letterCase: LetterCase = .upper, to bytes: inout [UInt8]) {
        withText(uuid, letterCase) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the 36 bytes of the uuid's text.
    private static func withText<Result>(_ uuid: UUID, _ letterCase: LetterCase,
                                         _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let hexDigits: StaticString = letterCase == .upper ? "0123456789ABCDEF" : "0123456789abcdef"
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer -> Result in
            withUnsafeBytes(of: uuid.uuid) { bytes in
                var count = 0
                for (position, byte) in bytes.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        buffer[count] = UInt8(ascii: "-")
                        count += 1
                    }
                    buffer[count] = hexDigits.utf8Start[Int(byte >> 4)]
                    buffer[count + 1] = hexDigits.utf8Start[Int(byte & 0x0F)]
                    count += 2
                }
            }
            return body(UnsafeBufferPointer(buffer))
        }
    }
}
