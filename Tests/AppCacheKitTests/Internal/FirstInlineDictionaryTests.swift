import MenuModel
import Testing
@testable import AppCacheKit

struct FirstInlineDictionaryTests {
    /// Random settings, removals and changes in place agree with a `Dictionary` at every step,
    /// whichever key holds the inline place.
    @Test(arguments: [1, 2, 3, 5, 8])
    func agreesWithADictionary(keyCount: Int) {
        var generator = SeededRandom(seed: UInt64(keyCount))
        var table = FirstInlineDictionary<Int, Int>()
        var model: [Int: Int] = [:]
        for step in 0..<2_000 {
            let key = Int.random(in: 0..<keyCount, using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0:
                table[key] = step
                model[key] = step
            case 1:
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key))
            case 2:
                table[key] = nil
                model[key] = nil
            case 3:
                table[key]? += 1
                model[key]? += 1
            default:
                #expect(table[key] == model[key])
            }
            for probe in 0..<keyCount { #expect(table[probe] == model[probe], "key \(probe) after step \(step)") }
            #expect(table.values.sorted() == model.values.sorted())
        }
        table.removeAll()
        for probe in 0..<keyCount { #expect(table[probe] == nil) }
    }

    /// A value changed through the subscript is changed where it is stored, and one removed is
    /// moved out, the table keeping no copy: the pack table changes its index in place this way.
    @Test(arguments: [["a"], ["a", "b"], ["a", "b", "c"]])
    func changesValuesInPlaceAndMovesThemOut(keys: [String]) {
        var table = FirstInlineDictionary<String, [Int]>()
        for key in keys {
            var array = [1]
            array.reserveCapacity(16)
            table[key] = array
        }
        for key in keys {
            let before = table[key]!.withUnsafeBufferPointer { $0.baseAddress }
            // A copy taken on the way would make the array shared, and the append copy it.
            table[key]?.append(2)
            #expect(table[key]!.withUnsafeBufferPointer { $0.baseAddress } == before, "\(key) changed in place")
            #expect(table[key] == [1, 2])
        }
        var boxes = FirstInlineDictionary<String, Box>()
        for key in keys { boxes[key] = Box() }
        for key in keys {
            var taken = boxes.removeValue(forKey: key)!
            #expect(isKnownUniquelyReferenced(&taken), "the table keeps no copy of \(key)")
            #expect(boxes[key] == nil)
        }
    }

    private final class Box {}
}
