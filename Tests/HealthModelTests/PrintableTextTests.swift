@testable import HealthModel
import Testing

/// Issue 23 finding 19: one escaping of names for terminals, shell quoting of printed
/// commands, look-alike detection.
@Suite struct PrintableTextTests {
    @Test func controlFormatAndOddSpaceCharactersAreEscaped() {
        #expect(PrintableText.escaped("Jana's Apple Watch") == "Jana's Apple Watch")
        #expect(PrintableText.escaped("Evil\u{1B}[31mWatch\nline2") == "Evil\\e[31mWatch\\nline2")
        #expect(PrintableText.escaped("a\tb\rc\u{7F}d\u{9B}e") == "a\\tb\\rc\\x7Fd\\u009Be")
        #expect(PrintableText.escaped("Jana's\u{A0}Apple Watch") == "Jana's\\u00A0Apple Watch")
        #expect(PrintableText.escaped("abc\u{202E}fed\u{200B}") == "abc\\u202Efed\\u200B")
        #expect(PrintableText.escaped("Zoë 🏃") == "Zoë 🏃")
    }

    @Test func importedNamesKeepOnlyTheirControlCharactersEscaped() {
        #expect(PrintableText.escapingControlCharacters("Evil\u{1B}[31mWatch\nline2") == #"Evil\e[31mWatch\nline2"#)
        #expect(PrintableText.escapingControlCharacters("Jana's\u{A0}Watch") == "Jana's\u{A0}Watch")
    }

    @Test func shellQuotingGivesBackTheExactWord() {
        #expect(PrintableText.shellQuoted("xiaomi-scale") == "xiaomi-scale")
        #expect(PrintableText.shellQuoted("Jana\u{2019}s iPhone") == "'Jana\u{2019}s iPhone'")
        #expect(PrintableText.shellQuoted("it's") == #"'it'\''s'"#)
        #expect(PrintableText.shellQuoted("--all") == "'--all'")
        #expect(PrintableText.shellQuoted("") == "''")
        #expect(PrintableText.shellQuoted("Evil\u{1B}[31m'x'\\\n") == #"$'Evil\e[31m\'x\'\\\n'"#)
        #expect(PrintableText.shellQuoted("$(reboot)") == "'$(reboot)'")
    }

    @Test func lookAlikeNamesShareASkeleton() {
        let plain = "Jana's Apple Watch"
        #expect(PrintableText.lookAlikes(of: plain, among: ["Jana's\u{A0}Apple Watch", "Jana\u{2019}s Apple Watch",
                                                            "J\u{430}na's Apple Watch", "Jana's Apple\u{200B} Watch", "Jana's iPhone", plain])
                == ["Jana's\u{A0}Apple Watch", "Jana\u{2019}s Apple Watch", "J\u{430}na's Apple Watch", "Jana's Apple\u{200B} Watch"])
        #expect(PrintableText.lookAlikeGroups(["pod", "p\u{43E}d", "scale"]) == [["pod", "p\u{43E}d"]])
    }

    @Test func aLongListShowsAFewNamesAndTheCount() {
        let names = (1...10_001).map { "person\($0)" }
        #expect(PrintableText.abbreviatedList(names) == "person1, person2, person3, person4, person5 and 9996 more")
        #expect(PrintableText.abbreviatedList(["me", "you"]) == "me, you")
    }

    /// The byte test agrees with Unicode's general category Cc for every scalar, alone and
    /// between other text.
    @Test func controlCharactersAreFoundFromTheBytesAsUnicodeClassifiesThem() {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let isControl = scalar.properties.generalCategory == .control
            let text = "a\u{C2}" + String(Character(scalar)) + "\u{E9}"
            guard PrintableText.containsControlCharacter(text) == isControl else {
                Issue.record("U+\(String(value, radix: 16)): expected \(isControl)")
                return
            }
        }
        #expect(PrintableText.escapingControlCharacters("Watch\u{85}\u{1B}") == "Watch\\u0085\\e")
    }
}
