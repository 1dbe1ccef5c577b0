import AppCacheTestSupport
import Foundation
import MenuModel
import Testing

@testable import AppCacheKit

/// The disk budget bounds what the archives take on disk: their files and their packs whole,
/// records no longer live included, and `diskUsage` says exactly that.
struct DiskBudgetOnDiskTests {
    /// The bytes of every archive file and pack under the root's version directory.
    static func bytesOnDisk(_ fixture: Fixture) -> Int {
        let version = fixture.layout().versionPath
        var total = 0
        let enumerator = FileManager.default.enumerator(atPath: version)
        while let name = enumerator?.nextObject() as? String {
            let last = (name as NSString).lastPathComponent
            guard last == PackFile.name || last.hasSuffix(CacheLayout.archiveSuffix) else { continue }
            total += (try? FileManager.default.attributesOfItem(atPath: version + "/" + name)[.size] as? Int) ?? 0
        }
        return total
    }

    /// 1,000 write-through writes of keys written again and again, of sizes packed and not,
    /// with removals between: after each, the bytes on disk are within the budget and
    /// `diskUsage` is exactly them. (Before, replaced records stayed in the pack uncounted:
    /// ten writes left 135,117 bytes under a 120,000-byte budget.)
    @Test(arguments: [120_000, 2_000_000])
    func theBytesOnDiskStayWithinTheBudget(_ budget: Int) async throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.diskByteLimit = budget
        let cache = try AppCache(configuration: configuration)
        var random = SeededRandom(seed: UInt64(budget))
        var largest = 0
        for write in 0..<1_000 {
            let key = "k\(Int.random(in: 0..<60, using: &random))"
            if write % 17 == 0 {
                try cache.removeItems(MenuItem.self, forKey: key)
            } else {
                // Mostly small (a pack record), sometimes over 64 KiB (a file of its own).
                let count = Int.random(in: 0..<10, using: &random) == 0 ? 400 : Int.random(in: 1...20, using: &random)
                try cache.cacheItems(MenuItem.sampleMenu(count: count, seed: write), forKey: key)
            }
            let onDisk = Self.bytesOnDisk(fixture)
            largest = max(largest, onDisk)
            #expect(onDisk <= budget, "write \(write): \(onDisk) bytes on disk")
            #expect(try await cache.bytesOnDisk() == onDisk, "write \(write)")
            // A long loop on a thread of the cooperative pool: let the tests that wait run.
            await Task.yield()
        }
        #expect(largest > budget / 2, "the budget was reached: \(largest)")
    }

    /// Without a disk budget, a batch's small collections cost the journal one line per pack,
    /// not one each; whoever asks `diskUsage` (this process or another) still gets exactly
    /// what the disk holds, read from the directories the journal names.
    @Test func withoutABudgetPackedWritesCostTheJournalALinePerPack() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(entries: 2_000))
        try cache.cacheItems([Plain(value: 0)], forKey: "first")
        try cache.flush()
        let journalBefore = try #require(FileManager.default.attributesOfItem(atPath: fixture.journalPath)[.size] as? Int)
        for key in 0..<500 { try cache.cacheItems(MenuItem.sampleMenu(count: 1, seed: key), forKey: "k\(key)") }
        try cache.flush()
        let journalAfter = try #require(FileManager.default.attributesOfItem(atPath: fixture.journalPath)[.size] as? Int)
        #expect(journalAfter - journalBefore < 200, "\(journalAfter - journalBefore) bytes of journal for 500 collections")

        #expect(try fixture.openCache().bytesOnDisk() == Self.bytesOnDisk(fixture), "another instance's usage is exact")
        #expect(try cache.bytesOnDisk() == Self.bytesOnDisk(fixture))
        for key in 0..<50 { try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: key), forKey: "k\(key)") }
        try cache.removeItems(MenuItem.self, forKey: "k60")
        try cache.flush()
        #expect(try cache.bytesOnDisk() == Self.bytesOnDisk(fixture), "kept exact as it writes")
        let other = try fixture.openCache()
        for key in 0..<20 { try other.cacheItems(MenuItem.sampleMenu(count: 3, seed: key), forKey: "o\(key)") }
        try cache.cacheItems([Plain(value: 2)], forKey: "between")
        #expect(try cache.bytesOnDisk() == Self.bytesOnDisk(fixture), "another instance's writes, read when asked")
        // The journal lost: made again without reading every archive, usage still exact.
        try FileManager.default.removeItem(atPath: fixture.journalPath)
        let third = try fixture.openCache()
        try third.cacheItems([Plain(value: 1)], forKey: "after")
        #expect(try third.bytesOnDisk() == Self.bytesOnDisk(fixture))
    }

    /// Removed collections leave dead records behind: they count, and a compaction gives them
    /// back when the budget needs it, before any live collection is evicted for them.
    @Test func deadRecordsAreCompactedAwayBeforeLiveOnesAreEvicted() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        let unbudgeted = try AppCache(configuration: configuration)
        for key in 0..<40 { try unbudgeted.cacheItems(MenuItem.sampleMenu(count: 10, seed: key), forKey: "k\(key)") }
        for key in 0..<30 { try unbudgeted.removeItems(MenuItem.self, forKey: "k\(key)") }
        let usage = try unbudgeted.bytesOnDisk()
        #expect(usage == Self.bytesOnDisk(fixture), "dead records counted")
        configuration.diskByteLimit = usage / 2
        let budgeted = try AppCache(configuration: configuration)
        try budgeted.cacheItems([Plain(value: 1)], forKey: "trigger")
        #expect(Self.bytesOnDisk(fixture) <= usage / 2)
        for key in 30..<40 {
            #expect(try budgeted.getCachedItems(MenuItem.self, forKey: "k\(key)") == MenuItem.sampleMenu(count: 10, seed: key), "k\(key) kept")
        }
    }
}
