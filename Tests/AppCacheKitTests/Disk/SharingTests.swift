import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Two instances on one root, as an app and its extension share an App Group container (the
/// same locks and shared memory serve instances in one process as they serve processes; the
/// torture program runs real processes): they take turns, see each other's writes, and keep
/// the index exact.
struct SharingTests {
    @Test func aWriteByOneIsWhatTheOtherReadsNextEvenFromMemory() throws {
        let fixture = try Fixture()
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let widget = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try app.cacheItems(MenuItem.sampleMenu(count: 3))
        try app.flush()
        #expect(try widget.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3))  // now in the widget's memory

        try app.cacheItems(MenuItem.sampleMenu(count: 5, seed: 1))
        #expect(try widget.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3), "not on disk yet: not written")
        try app.flush()
        #expect(try widget.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 5, seed: 1))
        #expect(try widget.cachedCollection(MenuItem.self)?.items.count == 5)
        #expect(widget.cachedDate(MenuItem.self) == app.cachedDate(MenuItem.self))

        // A spill and a write-through count as written too.
        let through = try fixture.openCache()
        try through.cacheItems(MenuItem.sampleMenu(count: 7, seed: 2))
        #expect(try widget.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 7, seed: 2))
        #expect(try app.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 7, seed: 2))
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    @Test func aRemovalByOneIsAMissForTheOther() throws {
        let fixture = try Fixture()
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let widget = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try app.cacheItems([Plain(value: 1)])
        try app.cacheItems([Plain(value: 2)], forKey: "b")
        try app.flush()
        #expect(try widget.getCachedItems(Plain.self) == [Plain(value: 1)])
        #expect(try widget.getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
        try app.removeItems(Plain.self)
        #expect(try widget.getCachedItems(Plain.self) == nil)
        try app.removeUser("alice")
        #expect(try app.getCachedItems(Plain.self, forKey: "b") == nil, "gone for the remover at once")
        // The directory leaves the disk on the write-back queue, moments later; then for all.
        app.store.waitForBackgroundWork()
        #expect(try widget.getCachedItems(Plain.self, forKey: "b") == nil)
        #expect(widget.cachedDate(Plain.self, forKey: "b") == nil)
    }

    /// Last cached wins: a dirty collection older than what another instance wrote since is
    /// not written over it.
    @Test func anOlderUnwrittenCollectionNeverOverwritesANewerOne() throws {
        let fixture = try Fixture()
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let widget = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try widget.cacheItems([Plain(value: 1)])  // dirty in the widget
        fixture.clock.advance(by: .seconds(1))
        try app.cacheItems([Plain(value: 2)])
        try app.flush()
        try widget.flush()
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 2)])
        #expect(try widget.getCachedItems(Plain.self) == [Plain(value: 2)])
        // And a newer unwritten one wins over an older one on disk.
        fixture.clock.advance(by: .seconds(1))
        try widget.cacheItems([Plain(value: 3)])
        try widget.flush()
        #expect(try app.getCachedItems(Plain.self) == [Plain(value: 3)])
    }

    @Test func diskUsageAndTheBudgetCountBothWriters() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.diskByteLimit = 4_000
        let app = try AppCache(configuration: configuration)
        let widget = try AppCache(configuration: configuration)
        for round in 0..<40 {
            try (round.isMultiple(of: 2) ? app : widget).cacheItems(MenuItem.sampleMenu(count: 2, seed: round), forKey: "k\(round)")
            #expect(try app.bytesOnDisk() == (try widget.bytesOnDisk()))
        }
        #expect(try app.bytesOnDisk() == (try fixture.measuredUsage()))
        #expect(try app.bytesOnDisk() <= 4_000)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    // Looks at archive files: each collection a file of its own.
    /// Writes, reads, flushes, sweeps, removals and budget evictions from two instances at
    /// once: no error caused by each other, every collection whole, the index exact.
    @Test func twoInstancesWorkingAtOnceGetNoErrorsFromEachOther() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        var configuration = fixture.configuration(memory: .layer(entries: 8, writeBackDelay: nil))
        configuration.diskByteLimit = 60_000
        let instances = [try AppCache(configuration: configuration), try AppCache(configuration: configuration)]
        let failures = Locked<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for (number, cache) in instances.enumerated() {
                group.addTask {
                    var random = SeededRandom(seed: UInt64(number + 1))
                    for round in 0..<150 {
                        let key = "k\(Int.random(in: 0..<12, using: &random))"
                        do {
                            switch Int.random(in: 0..<10, using: &random) {
                            case 0..<4: try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: round), forKey: key)
                            case 4..<7:
                                if let items = try cache.getCachedItems(MenuItem.self, forKey: key), items.count != 3 {
                                    failures.withLock { $0.append("a torn collection") }
                                }
                            case 7: try cache.flush()
                            case 8: try cache.removeExpired()
                            default: try cache.removeItems(MenuItem.self, forKey: key)
                            }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                    do { try cache.flush() } catch { failures.withLock { $0.append("\(error)") } }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(fixture.diagnostics.errors.map(\.description) == [])
        #expect(try await instances[0].bytesOnDisk() == (try fixture.measuredUsage()))
        #expect(fixture.allFiles().allSatisfy { !$0.contains(".tmp-") })
    }
}
