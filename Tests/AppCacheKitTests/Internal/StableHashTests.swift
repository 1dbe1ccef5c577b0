import Testing
@testable import AppCacheKit

struct StableHashTests {
    /// File names depend on these values; a change would orphan every hashed archive name.
    @Test func valuesArePinned() {
        #expect(StableHash.hex128("") == "cbf29ce484222325" + "84222325cbf29ce4")
        #expect(StableHash.hex128("a") == "af63dc4c8601ec8c" + "789e3e398d3ff5ff")
    }

    @Test func isThirtyTwoLowercaseHexDigits() {
        for input in ["", "x", String(repeating: "long ", count: 500), "🍜"] {
            let hash = StableHash.hex128(input)
            #expect(hash.count == 32)
            #expect(hash.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        }
    }

    @Test func differsForCloseInputs() {
        let inputs = (0..<2000).map { "key-\($0)" } + ["ab", "ba", "Ab", "aB"]
        #expect(Set(inputs.map(StableHash.hex128)).count == inputs.count)
    }
}
