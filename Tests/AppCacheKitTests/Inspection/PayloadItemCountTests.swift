import Foundation
import Testing
@testable import AppCacheKit

/// Item counts told from a payload's framing, for both codecs, and nothing told from damage.
struct PayloadItemCountTests {
    func count(_ codec: PayloadCodec, _ payload: Data) -> Int? {
        payload.withUnsafeBytes { PayloadItemCount.count(codec: codec.headerValue, payload: $0) }
    }

    @Test(arguments: [0, 1, 7, 300])
    func countsWhatBothCodecsWrote(_ items: Int) throws {
        let notes = (0..<items).map { Note.make($0) }
        #expect(count(.binary, try PayloadCodec.binary.encodeItems(notes)) == items)
        #expect(count(.json, try PayloadCodec.json.encodeItems(notes)) == items)
    }

    @Test func jsonStringsAndNestingDoNotCount() throws {
        let tricky = ["a,b", "[", "]", "{\"x\": [1, 2]}", "\\", "\\\"", "end\\\\"]
        #expect(count(.json, try JSONEncoder().encode(tricky)) == tricky.count)
        #expect(count(.json, Data(" [ [1, 2], {\"a\": [3]}, \"x\" ]\n".utf8)) == 3)
        #expect(count(.json, Data("[]".utf8)) == 0)
    }

    @Test func damageIsUnknownRatherThanAGuess() throws {
        #expect(count(.json, Data("[1, 2".utf8)) == nil, "cut short")
        #expect(count(.json, Data("[1,]".utf8)) == nil)
        #expect(count(.json, Data("[1] 2".utf8)) == nil, "something after the array")
        #expect(count(.json, Data("{\"a\": 1}".utf8)) == nil, "not an array")
        #expect(count(.json, Data()) == nil)

        let binary = try PayloadCodec.binary.encodeItems([Plain(value: 1), Plain(value: 2)])
        #expect(count(.binary, binary) == 2)
        // A count claiming more elements than the array's bytes.
        var inflated = binary
        inflated.replaceSubrange(5..<9, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(count(.binary, inflated) == nil)
        // A key table offset that is not where the array ends.
        var moved = binary
        moved[moved.count - 4] ^= 0x01
        #expect(count(.binary, moved) == nil)
        #expect(count(.binary, binary.prefix(10)) == nil, "cut short")
        #expect(count(.binary, Data(repeating: 0xFF, count: 64)) == nil)
        #expect(binary.withUnsafeBytes { PayloadItemCount.count(codec: 99, payload: $0) } == nil, "an unknown codec")
    }
}
