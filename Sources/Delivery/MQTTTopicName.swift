import Foundation

/// How names (a gateway id, a person, a topic prefix's levels) become MQTT topic levels and Home
/// Assistant ids that never carry MQTT's special characters, spaces or non-ASCII text, and never
/// let two different names share a topic:
/// - a simple name, 1 to 64 of ASCII letters, digits, `_` and `-`, is used unchanged (the topics
///   and Home Assistant entities of such names are what they always were);
/// - any other name becomes its first 40 characters with every character outside that set
///   replaced by `_`, then `-` and 8 hex digits of the FNV-1a 32-bit hash of the whole name's
///   UTF-8 bytes: `Zoë` → `Zo_-c2a2bddc`, `a/b` → `a_b-…`, `x y` → `x_y-…`.
/// Two different non-simple names share a level only if their hashes collide, and a simple name
/// equals an encoded one only if it is written that way on purpose; `people add` refuses a name
/// whose level another person already has (`problem(withPerson:among:)`), so within one store
/// no two people share one.
public enum MQTTTopicName {
    /// The longest name used unchanged.
    public static let maximumSimpleLength = 64
    /// How many characters of a non-simple name are kept before its hash.
    public static let keptLength = 40
    /// The longest `--prefix` or `--discovery-prefix` accepted (bytes of UTF-8).
    public static let maximumPrefixLength = 256

    /// Whether `name` is used unchanged as a level.
    public static func isSimple(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumSimpleLength && name.utf8.allSatisfy(isSafe)
    }

    private static func isSafe(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
    }

    /// `name` as one topic level (and id part): see the type's rules. The empty name stays the
    /// empty level (unassigned samples: `<prefix>//<type>`, as always).
    public static func level(_ name: String) -> String {
        if name.isEmpty || isSimple(name) { return name }
        var kept = ""
        for scalar in name.unicodeScalars.prefix(keptLength) {
            kept.unicodeScalars.append(scalar.isASCII && isSafe(UInt8(scalar.value)) ? scalar : "_")
        }
        return kept + "-" + hash(name)
    }

    /// The FNV-1a 32-bit hash of `name`'s UTF-8 bytes, as 8 lower-case hex digits.
    public static func hash(_ name: String) -> String {
        var value: UInt32 = 0x811C_9DC5
        for byte in name.utf8 {
            value ^= UInt32(byte)
            value = value &* 0x0100_0193
        }
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// A topic prefix with each non-empty level made a level by `level` (`home/health` stays).
    public static func prefix(_ text: String) -> String {
        text.split(separator: "/", omittingEmptySubsequences: false)
            .map { level(String($0)) }
            .joined(separator: "/")
    }

    /// Why `text` cannot be a `--prefix` / `--discovery-prefix`, or nil: non-empty, at most
    /// `maximumPrefixLength` bytes, no wildcard (`+`, `#`), no control characters, no leading `$`.
    public static func problem(withPrefix text: String) -> String? {
        if text.isEmpty { return "a topic prefix must not be empty" }
        if text.utf8.count > maximumPrefixLength { return "a topic prefix has at most \(maximumPrefixLength) bytes" }
        if text.contains("+") || text.contains("#") { return "MQTT wildcards (+, #) are not allowed in a topic prefix" }
        if text.hasPrefix("$") { return "topics starting with $ are the broker's" }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a topic prefix must not contain control characters"
        }
        return nil
    }

    /// Why `id` cannot be a gateway id, or nil: 1 to 64 characters, none of `/`, `+`, `#`, no
    /// control characters. (Any other text is allowed and encoded by `level`.)
    public static func problem(withGatewayID id: String) -> String? {
        if id.isEmpty { return "a gateway id must not be empty" }
        if id.count > maximumSimpleLength { return "a gateway id has at most \(maximumSimpleLength) characters" }
        if id.contains("/") || id.contains("+") || id.contains("#") { return "a gateway id must not contain /, + or #" }
        if id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a gateway id must not contain control characters"
        }
        return nil
    }

    /// Why a new person named `name` would share MQTT topics and Home Assistant entities with one
    /// of `others`, or nil.
    public static func problem(withPerson name: String, among others: [String]) -> String? {
        let mine = level(name)
        guard let other = others.first(where: { $0 != name && level($0) == mine }) else { return nil }
        return "its MQTT topic level '\(mine)' is the one of '\(other)' (pick another name)"
    }
}
