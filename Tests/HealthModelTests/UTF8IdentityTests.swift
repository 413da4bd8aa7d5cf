import Foundation
import Testing

@Suite struct UTF8IdentityTests {
    @Test func sameBytesAreSameAndEquivalentSpellingsAreNot() {
        let long = String(repeating: "Jana\u{2019}s Apple Watch ", count: 3)
        let copy = String(decoding: Array(long.utf8), as: UTF8.self)  // other storage, same bytes
        #expect(long.hasSameUTF8(as: long))
        #expect(long.hasSameUTF8(as: copy))
        #expect("+0200".hasSameUTF8(as: "+0200"))  // small strings (held inline)
        #expect("".hasSameUTF8(as: ""))
        #expect(!"".hasSameUTF8(as: "a"))
        #expect(!"+0200".hasSameUTF8(as: "+0100"))
        #expect(!long.hasSameUTF8(as: long + "!"))
        // Canonically equivalent (so `==`), but not the same bytes: precomposed é against e + U+0301,
        // and two combining marks in either order (same length in bytes).
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(!"caf\u{E9}".hasSameUTF8(as: "cafe\u{301}"))
        #expect("a\u{301}\u{327}" == "a\u{327}\u{301}")
        #expect(!"a\u{301}\u{327}".hasSameUTF8(as: "a\u{327}\u{301}"))
    }

    @Test func stringsAreToldApartByTheirBytesWhateverTheirStorage() {
        #expect("Jana’s Apple\u{A0}Watch".hasSameUTF8(as: "Jana’s Apple\u{A0}Watch"))
        #expect(!"\u{E9}".hasSameUTF8(as: "e\u{301}"))
        #expect("\u{E9}" == "e\u{301}")
        #expect(!"ab".hasSameUTF8(as: "abc"))
        #expect("".hasSameUTF8(as: ""))
        let long = String(repeating: "x", count: 40)
        #expect(long.hasSameUTF8(as: String(repeating: "x", count: 40)))
        #expect(!long.hasSameUTF8(as: String(repeating: "x", count: 39) + "y"))
    }

    @Test func optionalStringsAreTheSameWhenBothAreNilOrHoldTheSameBytes() {
        let none: String? = nil
        #expect(none.hasSameUTF8(as: nil))
        #expect(!none.hasSameUTF8(as: ""))
        #expect(!Optional("").hasSameUTF8(as: nil))
        #expect(Optional("+0200").hasSameUTF8(as: "+0200"))
        #expect(!Optional("caf\u{E9}").hasSameUTF8(as: "cafe\u{301}"))
    }
}
