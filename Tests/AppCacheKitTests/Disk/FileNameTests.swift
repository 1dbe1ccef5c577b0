import Foundation
import Testing
@testable import AppCacheKit

struct FileNameTests {
    static let awkward: [String] = [
        "", ".", "..", "../../etc/passwd", "a/b", "a\\b", "nul\u{0}byte", "with space", " lead", "trail ",
        "🍜 ramen", "Alice", "alice", "ALICE", "aLiCe", "%41lice", "a+b", "a~b", ".hidden", "-dash", "_under",
        "Ünïcödé", "e\u{301}", "\u{e9}", String(repeating: "x", count: 1000), String(repeating: "🍣", count: 1000),
        "CON", "aux.txt", "a:b", "tab\there", "new\nline",
    ]

    @Test(arguments: awkward)
    func roundTrips(_ string: String) {
        let encoded = FileName.encode(string)
        #expect(FileName.decode(encoded) == string)
    }

    /// Swift's `==` treats canonically equivalent strings as one; so do file names.
    @Test func canonicallyEquivalentStringsShareAName() {
        #expect(FileName.encode("e\u{301}") == FileName.encode("\u{e9}"))
        #expect(FileName.encode("e\u{301}") == "%c3%a9")
        #expect(FileName.decode(FileName.encode("e\u{301}")) == "e\u{301}")
    }

    @Test(arguments: awkward)
    func encodedNamesStayInsideTheirDirectory(_ string: String) {
        let encoded = FileName.encode(string)
        #expect(!encoded.contains("/"))
        #expect(!encoded.contains("\0"))
        #expect(!encoded.hasPrefix("."))
        #expect(encoded.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "~") })
    }

    @Test func noTwoNamesCollideEvenIgnoringCase() {
        let distinct = Set(Self.awkward)  // "é" in its two spellings is one string to Swift
        let encoded = distinct.map { FileName.encode($0).lowercased() }
        #expect(Set(encoded).count == distinct.count)
        #expect(FileName.encode("Alice") == "%41lice")
    }

    @Test func decodeRejectsWhatEncodeNeverProduces() {
        for bad in ["%4", "%zz", "A", "a/b", "%61", ".x", "%2", "a b", "%ff"] {
            #expect(FileName.decode(bad) == nil, "\(bad)")
        }
        #expect(FileName.decode("%2ex") == ".x")
    }

    @Test func shortNamesStayPlain() {
        #expect(FileName.bounded(stem: "menuitems", suffix: ".archive") == "menuitems.archive")
    }

    @Test func longNamesAreBoundedHashedAndDistinct() {
        let first = FileName.bounded(stem: FileName.encode(String(repeating: "🍣", count: 1000)) + "1", suffix: ".archive")
        let second = FileName.bounded(stem: FileName.encode(String(repeating: "🍣", count: 1000)) + "2", suffix: ".archive")
        #expect(first != second)
        for name in [first, second] {
            #expect(name.utf8.count <= FileName.maximumLength)
            #expect(name.contains("~"))
            #expect(name.hasSuffix(".archive"))
        }
        // The readable prefix never ends inside an escape.
        let prefix = first.split(separator: "~")[0]
        #expect(FileName.decode(prefix) != nil)
    }
}
