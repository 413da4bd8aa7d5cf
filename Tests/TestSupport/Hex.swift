/// Bytes from a hex literal of a test, e.g. `"04 0e 04 01 0b 20 00"` or `"040e04"`: whitespace is
/// ignored, the rest is read two digits per byte.
///
/// A malformed literal (an odd number of digits, a character that is not a hex digit) is a bug of
/// the test, not input: it stops the test run with the literal and the offending pair named.
public func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.unicodeScalars.filter { !$0.properties.isWhitespace })
    guard digits.count % 2 == 0 else {
        fatalError("hex literal \"\(text)\" has an odd number of digits (\(digits.count))")
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        let pair = String(String.UnicodeScalarView(digits[index..<index + 2]))
        guard let byte = UInt8(pair, radix: 16) else {
            fatalError("hex literal \"\(text)\" has \"\(pair)\" at digit \(index), not a hex byte")
        }
        bytes.append(byte)
        index += 2
    }
    return bytes
}
