import Testing
import MenuModel
@testable import AppCacheKit

struct LRUDictionaryTests {
    private func keysFromMostRecent(_ lru: LRUDictionary<String, Int>) -> [String] {
        lru.elementsFromMostRecent.map(\.key)
    }

    @Test func insertionOrderIsRecencyOrder() {
        var lru = LRUDictionary<String, Int>()
        lru.updateValue(1, forKey: "a")
        lru.updateValue(2, forKey: "b")
        lru.updateValue(3, forKey: "c")
        lru._checkInvariants()
        #expect(keysFromMostRecent(lru) == ["c", "b", "a"])
        #expect(lru.leastRecentlyUsed?.key == "a")
        #expect(lru.count == 3)
    }

    @Test func readingMakesAKeyTheMostRecent() {
        var lru = LRUDictionary<String, Int>()
        for (index, key) in ["a", "b", "c"].enumerated() { lru.updateValue(index, forKey: key) }
        #expect(lru.value(forKey: "a") == 0)
        #expect(keysFromMostRecent(lru) == ["a", "c", "b"])
        #expect(lru.value(forKey: "missing") == nil)
        lru._checkInvariants()
    }

    @Test func peekingAndModifyingLeaveTheOrderAlone() {
        var lru = LRUDictionary<String, Int>()
        for (index, key) in ["a", "b", "c"].enumerated() { lru.updateValue(index, forKey: key) }
        #expect(lru.peekValue(forKey: "a") == 0)
        #expect(lru.modifyValue(forKey: "b") { value -> Int in value += 10; return value } == 11)
        #expect(lru.modifyValue(forKey: "zz") { _ in 1 } == nil)
        #expect(keysFromMostRecent(lru) == ["c", "b", "a"])
        #expect(lru.peekValue(forKey: "b") == 11)
        lru._checkInvariants()
    }

    @Test func updatingReplacesAndRefreshes() {
        var lru = LRUDictionary<String, Int>()
        lru.updateValue(1, forKey: "a")
        lru.updateValue(2, forKey: "b")
        #expect(lru.updateValue(3, forKey: "a") == 1)
        #expect(keysFromMostRecent(lru) == ["a", "b"])
        #expect(lru.count == 2)
        lru._checkInvariants()
    }

    @Test func removingFromEveryPosition() {
        for removed in ["a", "b", "c"] {
            var lru = LRUDictionary<String, Int>()
            for (index, key) in ["a", "b", "c"].enumerated() { lru.updateValue(index, forKey: key) }
            #expect(lru.removeValue(forKey: removed) != nil)
            lru._checkInvariants()
            #expect(keysFromMostRecent(lru) == ["c", "b", "a"].filter { $0 != removed })
            #expect(lru.removeValue(forKey: removed) == nil)
        }
    }

    @Test func evictionTakesTheLeastRecentFirst() {
        var lru = LRUDictionary<String, Int>()
        for (index, key) in ["a", "b", "c", "d"].enumerated() { lru.updateValue(index, forKey: key) }
        _ = lru.value(forKey: "a")
        var evicted: [String] = []
        while let (key, _) = lru.removeLeastRecentlyUsed() {
            evicted.append(key)
            lru._checkInvariants()
        }
        #expect(evicted == ["b", "c", "d", "a"])
        #expect(lru.isEmpty)
        #expect(lru.leastRecentlyUsed == nil)
    }

    @Test func freedNodesAreReused() {
        var lru = LRUDictionary<Int, Int>()
        for round in 0..<100 {
            lru.updateValue(round, forKey: round)
            if round >= 3 { _ = lru.removeLeastRecentlyUsed() }
            lru._checkInvariants()
        }
        #expect(lru.count == 3)
        #expect(lru.elementsFromMostRecent.map(\.key) == [99, 98, 97])
        lru.removeAll()
        lru._checkInvariants()
        #expect(lru.isEmpty)
    }

    /// Reads far outnumber keys in a cache: the log of uses stays bounded while the order
    /// stays exact.
    @Test func manyReadsKeepTheLogBoundedAndTheOrderExact() {
        var lru = LRUDictionary<String, Int>()
        let keys = (0..<5).map { "k\($0)" }
        for (index, key) in keys.enumerated() { lru.updateValue(index, forKey: key) }
        var random = SeededRandom(seed: 7)
        var model = keys.reversed() as [String]  // most recent first
        for _ in 0..<20_000 {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            #expect(lru.value(forKey: key) != nil)
            model.removeAll { $0 == key }
            model.insert(key, at: 0)
        }
        lru._checkInvariants()
        #expect(keysFromMostRecent(lru) == model)
        #expect(lru.leastRecentlyUsed?.key == model.last)
    }

    /// Thousands of random operations against a plain array kept in recency order, with the
    /// invariants checked after each one.
    @Test(arguments: [1 as UInt64, 2, 3, 42])
    func agreesWithAReferenceModel(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var lru = LRUDictionary<Int, Int>()
        var model: [(key: Int, value: Int)] = []  // most recent first
        for step in 0..<4000 {
            let key = Int.random(in: 0..<40, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0, 1:
                let old = lru.updateValue(step, forKey: key)
                let index = model.firstIndex { $0.key == key }
                #expect(old == index.map { model[$0].value })
                if let index { model.remove(at: index) }
                model.insert((key, step), at: 0)
            case 2:
                let value = lru.value(forKey: key)
                let index = model.firstIndex { $0.key == key }
                #expect(value == index.map { model[$0].value })
                if let index { model.insert(model.remove(at: index), at: 0) }
            case 3:
                #expect(lru.peekValue(forKey: key) == model.first { $0.key == key }?.value)
            case 4:
                let removed = lru.removeValue(forKey: key)
                let index = model.firstIndex { $0.key == key }
                #expect(removed == index.map { model[$0].value })
                if let index { model.remove(at: index) }
            case 5:
                let evicted = lru.removeLeastRecentlyUsed()
                let expected = model.popLast()
                #expect(evicted?.key == expected?.key && evicted?.value == expected?.value)
            default:
                _ = lru.modifyValue(forKey: key) { $0 += 1 }
                if let index = model.firstIndex(where: { $0.key == key }) { model[index].value += 1 }
            }
            lru._checkInvariants()
            #expect(lru.count == model.count)
        }
        #expect(lru.elementsFromMostRecent.map(\.key) == model.map(\.key))
        #expect(lru.elementsFromMostRecent.map(\.value) == model.map(\.value))
    }
}
