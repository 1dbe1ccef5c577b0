import Testing
@testable import AppCacheKit

struct ErasedItemsTests {
    private final class Tracked: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func givesBackTheItemsItWasGiven() {
        let strings = ErasedItems(["a", "b", String(repeating: "long ", count: 20)])
        #expect(strings.items(as: String.self) == ["a", "b", String(repeating: "long ", count: 20)])
        let empty = ErasedItems([Int]())
        #expect(empty.items(as: Int.self).isEmpty)
    }

    /// Copies and the last release go to the array's own storage: elements live exactly as long
    /// as some copy does, never shorter (a crash) or longer (a leak).
    @Test func keepsItsElementsAliveExactlyAsLongAsItIsHeld() {
        weak var watched: Tracked?
        var held: ErasedItems?
        do {
            let element = Tracked(42)
            watched = element
            held = ErasedItems([element, Tracked(43)])
        }
        #expect(watched != nil)
        var copy = held
        held = nil
        #expect(copy?.items(as: Tracked.self).map(\.value) == [42, 43])
        copy = nil
        #expect(watched == nil)
    }
}
