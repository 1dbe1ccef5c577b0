import Testing
import MenuModel
@testable import AppCacheKit

struct UTF8TextTests {
    static let valid: [String] = ["", "MenuItems", "Grüße", "東京", "🍜 ramen", "e\u{301}", "\u{10FFFF}", "\u{FFFD}", "nul\u{0}"]

    static let invalid: [[UInt8]] = [
        [0x80],                   // a lone continuation byte
        [0xC3],                   // a sequence cut short
        [0xE6, 0x9D],             // a three-byte sequence cut short
        [0xC0, 0xAF],             // an overlong "/"
        [0xE0, 0x80, 0xAF],       // an overlong "/" in three bytes
        [0xED, 0xA0, 0x80],       // a UTF-16 surrogate
        [0xF4, 0x90, 0x80, 0x80], // past U+10FFFF
        [0xFF],                   // never in UTF-8
        [0xF5, 0x80, 0x80, 0x80], // a lead byte past U+10FFFF
        Array("ok".utf8) + [0xC3] + Array("ok".utf8),
        Array("eight ok".utf8) + [0xE2, 0x82] + Array("more than eight".utf8),  // after a word-sized ASCII run
    ]

    @Test(arguments: valid)
    func validTextComesBackAsItWas(_ text: String) {
        #expect(UTF8Text.string(validating: Array(text.utf8)) == text)
        #expect(UTF8Text.string(validating: Array((text + " and some ASCII after it").utf8)) == text + " and some ASCII after it")
    }

    @Test(arguments: invalid)
    func invalidBytesAreRefused(_ bytes: [UInt8]) {
        #expect(UTF8Text.string(validating: bytes) == nil)
    }

    /// The validator agrees with the standard library's on random bytes (mostly invalid), on
    /// random valid text, and on valid text with one byte changed, long enough to take the
    /// word-sized ASCII path.
    @Test func theValidatorAgreesWithTheStandardLibrary() {
        var random = SeededRandom(seed: 7)
        for round in 0..<30_000 {
            let count = Int.random(in: 0...24, using: &random)
            let bytes: [UInt8]
            if round.isMultiple(of: 2) {
                bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
            } else {
                let scalars = (0..<count).compactMap { _ in Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &random)) }
                var valid = Array(String(String.UnicodeScalarView(scalars)).utf8)
                if round % 4 == 1, !valid.isEmpty {
                    valid[Int.random(in: 0..<valid.count, using: &random)] = UInt8.random(in: .min ... .max, using: &random)
                }
                bytes = valid
            }
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                #expect(UTF8Text.string(validating: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
            } else {
                #expect(UTF8Text.string(validating: bytes).map { Array($0.utf8) == bytes } ?? true, "\(bytes)")
            }
        }
    }
}
