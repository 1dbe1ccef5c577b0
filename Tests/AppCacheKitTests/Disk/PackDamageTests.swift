import AppCacheTestSupport
import Foundation
import MenuModel
import Testing

@testable import AppCacheKit

/// Damage in a pack of small archives costs only the record it lands in: reading skips to the
/// next record that checks, a writer never cuts off a record that checks, a compaction keeps
/// every one of them, and a record whose prefix was damaged does not bring an older version of
/// its collection back.
struct PackDamageTests {
    /// A cache that packs small archives, as an app's does.
    private func packed(_ fixture: Fixture) throws -> AppCache {
        try fixture.openCache()
    }

    private func packURL(_ fixture: Fixture, user: String = "alice") -> URL {
        URL(filePath: fixture.layout().userPath(user) + "/" + PackFile.name)
    }

    /// Where each record of `pack` starts, and where it ends, in order (the pack whole).
    private func records(of pack: Data) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset < pack.count {
            let parsed = pack.withUnsafeBytes { bytes in
                PackRecord.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]), maximumBodyLength: PackTable.maximumBodyLength)
            }
            guard case .record(let record) = parsed else { break }
            ranges.append(offset..<offset + record.length)
            offset += record.length
        }
        return ranges
    }

    /// Makes `other`'s root a copy of `template`'s (lock file, journal, pack) with `pack` as
    /// the user's pack: the pack damaged in place, as a disk damages it.
    private func plant(_ pack: Data, from template: Fixture, into other: Fixture) throws {
        try? FileManager.default.removeItem(at: other.root)
        try FileManager.default.copyItem(at: template.root, to: other.root)
        try pack.write(to: packURL(other))
    }

    /// The keys whose collection reads back as it was written, through a fresh cache.
    private func intact(_ fixture: Fixture, keys: some Sequence<Int>) throws -> Set<Int> {
        let reader = try packed(fixture)
        return Set(try keys.filter { try reader.getCachedItems(Plain.self, forKey: "k\($0)") == [Plain(value: $0)] })
    }

    /// For every byte of a pack of ten collections: flipped, at most the collection whose
    /// record holds it is lost; the others read back, after the next write (which appends,
    /// cutting nothing that checks) and after a compaction too. The bytes are taken in four
    /// interleaved parts, which run side by side (the longest test of the suite, under the
    /// sanitizers most of all).
    @Test(arguments: 0..<4) func aFlippedByteAnywhereCostsAtMostTheCollectionWhoseRecordHoldsIt(part: Int) async throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        for key in 0..<10 { try cache.cacheItems([Plain(value: key)], forKey: "k\(key)") }
        let original = try Data(contentsOf: packURL(fixture))
        let ranges = records(of: original)
        #expect(ranges.count == 10)
        #expect(ranges.last?.upperBound == original.count)
        let other = try Fixture()
        var losses = 0, flipped = 0
        for position in stride(from: part, to: original.count, by: 4) {
            flipped += 1
            let owner = try #require(ranges.firstIndex { $0.contains(position) })
            var damaged = original
            damaged[position] ^= 0xFF
            try plant(damaged, from: fixture, into: other)
            let expected = Set(0..<10).subtracting([owner])
            let read = try intact(other, keys: 0..<10)
            #expect(read.isSuperset(of: expected), "byte \(position) (record \(owner)): before a write, lost \(expected.subtracting(read).sorted())")
            if !read.contains(owner) { losses += 1 }

            let writer = try packed(other)
            try writer.cacheItems([Plain(value: 99)], forKey: "later")
            let afterWrite = try intact(other, keys: 0..<10)
            #expect(afterWrite.isSuperset(of: expected), "byte \(position): after a write, lost \(expected.subtracting(afterWrite).sorted())")

            _ = try writer.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }
            let afterCompaction = try intact(other, keys: 0..<10)
            #expect(afterCompaction.isSuperset(of: expected), "byte \(position): after a compaction, lost \(expected.subtracting(afterCompaction).sorted())")
            #expect(try packed(other).getCachedItems(Plain.self, forKey: "later") == [Plain(value: 99)])
            // A long loop on a thread of the cooperative pool: let the tests that wait run.
            await Task.yield()
        }
        // Most flips land in a record's checksummed bytes: its own collection misses.
        #expect(losses > flipped / 2)
    }

    /// A pack of 1,000 collections with one 4 KiB page zeroed, 100 pages at random: only the
    /// collections whose records the page touches are lost, before and after the next write
    /// and a compaction (of the others, those near the page and every 20th are read back).
    @Test func aZeroedPageCostsOnlyTheCollectionsWhoseRecordsItTouches() async throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try cache.cacheItems((0..<1_000).map { Plain(value: $0) }, forKey: "all")
        for key in 0..<1_000 { try cache.cacheItems([Plain(value: key)], forKey: "k\(key)") }
        let original = try Data(contentsOf: packURL(fixture))
        let ranges = records(of: original)
        #expect(ranges.count == 1_001)
        var random = SeededRandom(seed: 34)
        let other = try Fixture()
        for _ in 0..<100 {
            let page = Int.random(in: 0..<(original.count / 4096), using: &random) * 4096
            var damaged = original
            damaged.replaceSubrange(page..<min(page + 4096, damaged.count), with: Data(count: min(4096, damaged.count - page)))
            try plant(damaged, from: fixture, into: other)
            // The first record is the large collection; the others are `k0`... in order.
            let touched = Set(ranges.indices.filter { ranges[$0].overlaps(page..<page + 4096) }.map { $0 - 1 })
            // Read back: every collection whose record lies near the page (where a resync
            // that went wrong would cost records), and every 20th of the rest (a cut pack
            // or a lost index would cost those).
            let near = ranges.indices.filter { ranges[$0].overlaps(page - 4096..<page + 3 * 4096) }.map { $0 - 1 }
            let checked = Set(near).union(stride(from: 0, to: 1_000, by: 20)).subtracting([-1])
            let expected = checked.subtracting(touched)
            let read = try intact(other, keys: expected)
            #expect(read.isSuperset(of: expected), "page at \(page): before a write, lost \(expected.subtracting(read).sorted())")

            let writer = try packed(other)
            try writer.cacheItems([Plain(value: 99)], forKey: "later")
            _ = try writer.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }
            let afterCompaction = try intact(other, keys: expected)
            #expect(afterCompaction.isSuperset(of: expected), "page at \(page): after a write and a compaction, lost \(expected.subtracting(afterCompaction).sorted())")
            await Task.yield()
        }
    }

    /// The newest record of a collection damaged in its prefix: the collection misses (and
    /// the damage is reported); its older record, still whole, is not served in its place.
    @Test func aDamagedNewestRecordDoesNotBringAnOlderVersionBack() throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        try cache.cacheItems([Plain(value: 3)], forKey: "a")
        try cache.cacheItems([Plain(value: 4)], forKey: "c")
        var bytes = try Data(contentsOf: packURL(fixture))
        let ranges = records(of: bytes)
        #expect(ranges.count == 4)
        bytes[ranges[2].lowerBound + 10] ^= 0x01  // the name hash of `a`'s newer record
        try bytes.write(to: packURL(fixture))
        let reader = try packed(fixture)
        #expect(try reader.getCachedItems(Plain.self, forKey: "a") == nil, "not the older [1]")
        #expect(try reader.getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
        #expect(try reader.getCachedItems(Plain.self, forKey: "c") == [Plain(value: 4)])
        #expect(fixture.diagnostics.errors.contains { $0.code == .corruptArchive && $0.message.contains("pack") })
        // Written again, it reads; damage between records stays until a compaction drops it.
        try reader.cacheItems([Plain(value: 5)], forKey: "a")
        #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "a") == [Plain(value: 5)])
        #expect(try Data(contentsOf: packURL(fixture)).count > bytes.count, "appended: nothing cut")
    }

    /// Garbage in the middle of a pack (an unknown kind, a wrong magic, a length no record
    /// has) is skipped, reported once, and dropped by the next compaction; what is around it
    /// reads.
    @Test func garbageBetweenRecordsIsSkippedReportedAndCompactedAway() throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        let first = try Data(contentsOf: packURL(fixture))
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        var bytes = try Data(contentsOf: packURL(fixture))
        bytes.insert(contentsOf: Data(repeating: 0xAC, count: 517), at: first.count)
        try bytes.write(to: packURL(fixture))
        let reader = try packed(fixture)
        #expect(try reader.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
        #expect(try reader.getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
        #expect(fixture.diagnostics.errors.filter { $0.code == .corruptArchive }.count == 1)
        _ = try reader.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }
        #expect(try Data(contentsOf: packURL(fixture)).count == bytes.count - 517)
        #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
    }

    /// Writes `a` twice, then the given steps, into a fresh root; returns the fixture, the
    /// pack's bytes and its records.
    private func written(_ steps: (AppCache) throws -> Void) throws -> (Fixture, Data, [Range<Int>]) {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try steps(cache)
        let bytes = try Data(contentsOf: packURL(fixture))
        return (fixture, bytes, records(of: bytes))
    }

    /// A changed byte anywhere in a removal record's prefix (which has no archive header to
    /// name it) does not bring the removed collection back, before or after the next write
    /// and a compaction; neither does one in the last record of the pack, which is whole
    /// damage, not a torn append, and is not cut.
    @Test func aDamagedRemovalOrLastRecordDoesNotBringAnOlderVersionBack() async throws {
        let (fixture, original, ranges) = try written { cache in
            try cache.cacheItems([Plain(value: 1)], forKey: "removed")
            try cache.cacheItems([Plain(value: 2)], forKey: "kept")
            try cache.removeItems(Plain.self, forKey: "removed")
            try cache.cacheItems([Plain(value: 3)], forKey: "last")
            try cache.cacheItems([Plain(value: 4)], forKey: "last")
        }
        #expect(ranges.count == 5)
        let other = try Fixture()
        for record in [ranges[2], ranges[4]] {
            for position in record.lowerBound..<record.lowerBound + PackRecord.prefixLength {
                for change: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = original
                    damaged[position] ^= change
                    try plant(damaged, from: fixture, into: other)
                    let reader = try packed(other)
                    let what = "byte \(position) ^ \(change)"
                    #expect(try reader.getCachedItems(Plain.self, forKey: "removed") == nil, "\(what): the removal stands")
                    #expect(try reader.getCachedItems(Plain.self, forKey: "last").map { $0 == [Plain(value: 4)] } ?? true, "\(what): not the older [3]")
                    #expect(try reader.getCachedItems(Plain.self, forKey: "kept") == [Plain(value: 2)], "\(what)")
                    try reader.cacheItems([Plain(value: 5)], forKey: "later")
                    _ = try reader.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }
                    let after = try packed(other)
                    #expect(try after.getCachedItems(Plain.self, forKey: "removed") == nil, "\(what): after a write and a compaction")
                    #expect(try after.getCachedItems(Plain.self, forKey: "last").map { $0 == [Plain(value: 4)] } ?? true, "\(what): after a write and a compaction")
                    await Task.yield()
                }
            }
        }

    }

    /// Two records in a row with damaged prefixes are one stretch of damage: both
    /// collections miss, neither falls back to its older record.
    @Test func aRunOfDamagedRecordsNamesEveryOneOfThem() throws {
        let (fixture, original, ranges) = try written { cache in
            try cache.cacheItems([Plain(value: 1)], forKey: "a")
            try cache.cacheItems([Plain(value: 2)], forKey: "b")
            try cache.cacheItems([Plain(value: 3)], forKey: "a")
            try cache.cacheItems([Plain(value: 4)], forKey: "b")
            try cache.cacheItems([Plain(value: 5)], forKey: "c")
        }
        var damaged = original
        damaged[ranges[2].lowerBound + 20] ^= 0x10
        damaged[ranges[3].lowerBound + 3] ^= 0x01
        try damaged.write(to: packURL(fixture))
        let reader = try packed(fixture)
        #expect(try reader.getCachedItems(Plain.self, forKey: "a") == nil)
        #expect(try reader.getCachedItems(Plain.self, forKey: "b") == nil)
        #expect(try reader.getCachedItems(Plain.self, forKey: "c") == [Plain(value: 5)])
    }

    /// After damage, the disk index counts what the packs hold: `diskUsage` is the bytes on
    /// disk, and a budget does not evict collections for records that are not there.
    @Test func damageMakesTheIndexCountWhatThePackHolds() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.diskByteLimit = 1 << 20
        let cache = try AppCache(configuration: configuration)
        for key in 0..<20 { try cache.cacheItems([Plain(value: key)], forKey: "k\(key)") }
        let bytes = try Data(contentsOf: packURL(fixture))
        let ranges = records(of: bytes)
        // Cut in the middle of the 11th record: the last ten are gone, as a torn append's is.
        try bytes.prefix(ranges[10].lowerBound + 20).write(to: packURL(fixture))
        let reader = try AppCache(configuration: configuration)
        try reader.cacheItems([Plain(value: 99)], forKey: "later")
        #expect(try reader.bytesOnDisk() == (try fixture.measuredUsage()))
        for key in 0..<10 { #expect(try reader.getCachedItems(Plain.self, forKey: "k\(key)") == [Plain(value: key)]) }
    }
}
