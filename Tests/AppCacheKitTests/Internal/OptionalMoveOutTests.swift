import Testing
@testable import AppCacheKit

struct OptionalMoveOutTests {
    private final class Box {}

    /// The value comes out as the only reference, leaving `nil` behind: what lets the memory
    /// layer number a new entry without copying its details.
    @Test func movesTheValueOutWithoutACopy() {
        var held: Box? = Box()
        var moved = held.moveOut()
        #expect(held == nil)
        #expect(moved != nil && isKnownUniquelyReferenced(&moved!))
        #expect(held.moveOut() == nil)
    }
}
