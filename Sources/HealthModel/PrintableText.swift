import Foundation

/// Names from outside (imported source names, devices, people, sinks) as a terminal may show
/// them: the one escaping used wherever ingestd prints a name, and the shell quoting of the
/// commands it prints for copying.
///
/// A character is escaped when a terminal would act on it or not show it: control characters
/// (ESC, newline, DEL, C1 controls such as U+009B), format characters (bidirectional overrides,
/// zero-width spaces and joiners, the BOM), line and paragraph separators, and every space other
/// than U+0020 (a no-break space in `Jana's Apple Watch` is shown as `\u00A0`). The escapes are
/// those of bash's `$'…'` (`\e`, `\n`, `\t`, `\r`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`), so an escaped
/// name reads the same as inside the printed command.
public enum PrintableText {
    /// Whether `scalar` is escaped when printed.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        case .spaceSeparator: scalar != " "
        default: false
        }
    }

    /// `text` with every character that `needsEscape` names written as its `$'…'` escape;
    /// `text` itself when there is none (the common case).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) { result += escape(scalar) } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    /// `text` with its control characters (general category Cc: ESC, newline, DEL, C1) written
    /// as their escapes and everything else kept: how a name from an import becomes a source id,
    /// which is printable text.
    public static func escapingControlCharacters(_ text: String) -> String {
        guard containsControlCharacter(text) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control { result += escape(scalar) } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    /// Whether `text` holds a control character (Cc is exactly U+0000...U+001F and
    /// U+007F...U+009F, a set Unicode never changes), read from its UTF-8 bytes: an import asks
    /// this of every record's source name, where the scalar properties cost 8 % of its reading.
    static func containsControlCharacter(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var previous: UInt8 = 0
            for byte in bytes {
                // C1 controls are 0xC2 0x80...0x9F in UTF-8.
                if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { return true }
                previous = byte
            }
            return false
        }
    }

    /// `\e`, `\n`, `\x7F`, `\u00A0`, `\U000E0001`.
    static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\u{1B}": return "\\e"
        default:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            if scalar.value < 0x80 { return "\\x" + String(repeating: "0", count: 2 - hex.count) + hex }
            if scalar.value <= 0xFFFF { return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex }
            return "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
        }
    }

    /// `word` as one shell word that bash, zsh and ksh read back as exactly `word`: itself when
    /// made only of safe characters, else single-quoted, or `$'…'` with the escapes above when it
    /// holds a character `needsEscape` names (raw, it would act on the terminal or vanish).
    public static func shellQuoted(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII ? (scalar.properties.isAlphabetic || scalar.properties.numericType != nil || "-_.:/@+,%=".unicodeScalars.contains(scalar))
                : !needsEscape(scalar) && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil)
        }
        if safe && !word.isEmpty && !word.hasPrefix("-") { return word }
        guard word.unicodeScalars.contains(where: needsEscape) else {
            return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        var quoted = "$'"
        for scalar in word.unicodeScalars {
            switch scalar {
            case "'": quoted += "\\'"
            case "\\": quoted += "\\\\"
            default: if needsEscape(scalar) { quoted += escape(scalar) } else { quoted.unicodeScalars.append(scalar) }
            }
        }
        return quoted + "'"
    }

    /// At most `shown` of `names` (escaped, in the order given) and how many there are:
    /// `Ann, Bob, Cem and 9,998 more`; every name when there are no more than `shown`.
    public static func abbreviatedList(_ names: [String], shown: Int = 5) -> String {
        let listed = names.prefix(shown).map(escaped).joined(separator: ", ")
        let rest = names.count - min(names.count, shown)
        return rest == 0 ? listed : "\(listed) and \(rest) more"
    }

    // MARK: Look-alike names

    /// Characters drawn like others (a small part of Unicode's confusables, UTS #39): Cyrillic
    /// and Greek letters like Latin ones, typographic quotes and dashes, digits like letters.
    static let confusables: [Unicode.Scalar: String] = {
        let pairs: [(String, String)] = [
            ("а", "a"), ("в", "b"), ("е", "e"), ("ё", "e"), ("к", "k"), ("м", "m"), ("н", "h"), ("о", "o"), ("р", "p"),
            ("с", "c"), ("т", "t"), ("у", "y"), ("х", "x"), ("і", "i"), ("ї", "i"), ("ј", "j"), ("ѕ", "s"), ("ԁ", "d"),
            ("ɡ", "g"), ("α", "a"), ("β", "b"), ("ε", "e"), ("ι", "i"), ("κ", "k"), ("ν", "v"), ("ο", "o"), ("ρ", "p"),
            ("τ", "t"), ("υ", "u"), ("χ", "x"), ("ı", "i"),
            ("\u{2018}", "'"), ("\u{2019}", "'"), ("\u{201A}", "'"), ("\u{201B}", "'"), ("\u{2032}", "'"),
            ("\u{02BC}", "'"), ("\u{00B4}", "'"), ("`", "'"),
            ("\u{201C}", "\""), ("\u{201D}", "\""), ("\u{201E}", "\""), ("\u{2033}", "\""),
            ("\u{2010}", "-"), ("\u{2011}", "-"), ("\u{2012}", "-"), ("\u{2013}", "-"), ("\u{2014}", "-"),
            ("\u{2212}", "-"), ("\u{FE63}", "-"),
            ("0", "o"), ("1", "l"), ("|", "l"),
        ]
        var table: [Unicode.Scalar: String] = [:]
        for (from, to) in pairs { if let scalar = from.unicodeScalars.first { table[scalar] = to } }
        return table
    }()

    /// What `text` looks like on a screen, for finding names that differ only in what a reader
    /// cannot see: compatibility forms folded (a no-break space is a space, fullwidth letters
    /// are letters), accents, invisible and format characters dropped, case folded (`I` as `l`),
    /// look-alike letters, quotes and dashes mapped, spaces collapsed.
    public static func skeleton(_ text: String) -> String {
        var folded = ""
        for scalar in text.decomposedStringWithCompatibilityMapping.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .spacingMark, .format, .control: continue
            case .spaceSeparator, .lineSeparator, .paragraphSeparator: folded += " "
            default:
                if scalar == "I" { folded += "l"; continue }
                let lower = String(scalar).lowercased()
                if let first = lower.unicodeScalars.first, lower.unicodeScalars.count == 1, let mapped = confusables[first] {
                    folded += mapped
                } else {
                    folded += lower
                }
            }
        }
        return folded.split(separator: " ").joined(separator: " ")
    }

    /// The names among `names` that look like `name` (the same skeleton) without being it.
    public static func lookAlikes(of name: String, among names: [String]) -> [String] {
        let target = skeleton(name)
        return names.filter { $0 != name && skeleton($0) == target }
    }

    /// Groups of two or more of `names` that look alike, each sorted, in the order of their first name.
    public static func lookAlikeGroups(_ names: [String]) -> [[String]] {
        var bySkeleton: [String: [String]] = [:]
        var order: [String] = []
        for name in names {
            let key = skeleton(name)
            if bySkeleton[key] == nil { order.append(key) }
            bySkeleton[key, default: []].append(name)
        }
        return order.compactMap { key in
            let group = Set(bySkeleton[key] ?? [])
            return group.count > 1 ? group.sorted() : nil
        }
    }

    /// `name` escaped and in double quotes, for messages: `"Jana's\u00A0Apple Watch"`.
    public static func quoted(_ name: String) -> String {
        "\"" + escaped(name) + "\""
    }
}
