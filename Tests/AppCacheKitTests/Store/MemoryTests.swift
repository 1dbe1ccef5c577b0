import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory layer: write-back, hits without decoding, limits and spills, flushes, memory
/// warnings, and memory and disk acting as one.
struct MemoryTests {
    private func modificationDate(_ path: String) throws -> Date {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func cachingWritesNoFileUntilAFlushAndTheFileKeepsTheCachedMoment() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let cachedAt = fixture.clock.now
        try cache.cacheItems(MenuItem.sampleMenu(count: 10))
        #expect(!fixture.archiveExists(MenuItem.self))
        #expect(fixture.allFiles().isEmpty)
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 10))
        #expect(cache.cachedDate(MenuItem.self) == cachedAt)
        #expect(cache.memoryStatistics.dirtyEntries == 1)

        fixture.clock.advance(by: .seconds(120))
        try cache.flush()
        #expect(abs(try modificationDate(fixture.archivePath(MenuItem.self)).timeIntervalSince(cachedAt)) < 0.001)
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        #expect(cache.memoryStatistics.entries == 1)
        // The flushed archive is what a fresh instance reads.
        #expect(try fixture.openCache().getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 10))
    }

    @Test func repeatedCachingWritesOnce() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        for round in 0..<20 {
            try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: round))
        }
        try cache.flush()
        try cache.flush()  // nothing dirty: writes nothing
        #expect(try fixture.openCache().getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3, seed: 19))
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aHitIsServedFromMemoryWithoutReadingTheFile() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems(MenuItem.sampleMenu(count: 5))
        try cache.flush()
        // Spoil the file: a read that went to disk would now miss.
        try Data("garbage".utf8).write(to: URL(filePath: fixture.archivePath(MenuItem.self)))
        for _ in 0..<3 {
            #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 5))
        }
        #expect(try cache.cachedCollection(MenuItem.self)?.items.count == 5)
        let statistics = cache.memoryStatistics
        #expect(statistics.hits == 4)
        #expect(statistics.misses == 0)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    @Test func aCollectionOnlyOnDiskIsLoadedIntoMemoryClean() throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems(MenuItem.sampleMenu(count: 4))
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 4))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 4))
        let statistics = cache.memoryStatistics
        #expect(statistics.misses == 1)
        #expect(statistics.hits == 1)
        #expect(statistics.entries == 1)
        #expect(statistics.dirtyEntries == 0)
        #expect(statistics.bytes > 0)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func pastTheEntryLimitTheLeastRecentlyUsedSpillsWithItsOwnDate() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(entries: 2, writeBackDelay: nil))
        let firstCachedAt = fixture.clock.now
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        fixture.clock.advance(by: .seconds(10))
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        fixture.clock.advance(by: .seconds(10))
        _ = try cache.getCachedItems(Plain.self, forKey: "a")  // "a" is now the most recent
        try cache.cacheItems([Plain(value: 3)], forKey: "c")
        // Spills are written on the write-back queue: the caller did not wait for the disk.
        cache.store.waitForBackgroundWork()

        #expect(fixture.archiveExists(Plain.self, key: "b"), "the least recently used spilled")
        #expect(!fixture.archiveExists(Plain.self, key: "a"))
        #expect(!fixture.archiveExists(Plain.self, key: "c"))
        #expect(abs(try modificationDate(fixture.archivePath(Plain.self, key: "b")).timeIntervalSince(firstCachedAt + 10)) < 0.001)
        var statistics = cache.memoryStatistics
        #expect(statistics.spills == 1)
        #expect(statistics.entries == 2)
        #expect(statistics.dirtyEntries == 2)

        // Reading it back comes from disk, and puts it back in memory.
        #expect(try cache.getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
        cache.store.waitForBackgroundWork()
        statistics = cache.memoryStatistics
        #expect(statistics.misses == 1)
        #expect(statistics.spills == 2, "loading b pushed the next least recently used, a, out")
        #expect(cache.cachedDate(Plain.self, forKey: "b").map { abs($0.timeIntervalSince(firstCachedAt + 10)) < 0.001 } == true)
    }

    @Test func pastTheByteLimitEntriesSpill() throws {
        let fixture = try Fixture()
        let encoded = try PayloadCodec.binary.encode(MenuItem.sampleMenu(count: 20))
        let one = encoded.decodedSize + encoded.payload.count  // what a dirty entry counts
        let cache = try fixture.openCache(memory: .layer(bytes: one * 2 + one / 2, entries: 100, writeBackDelay: nil))
        for index in 0..<5 {
            try cache.cacheItems(MenuItem.sampleMenu(count: 20), forKey: "k\(index)")
        }
        cache.store.waitForBackgroundWork()
        let statistics = cache.memoryStatistics
        #expect(statistics.entries == 2)
        #expect(statistics.bytes <= one * 2 + one / 2)
        #expect(statistics.spills == 3)
        #expect((0..<3).allSatisfy { fixture.hasArchive(MenuItem.self, key: "k\($0)") })
        for index in 0..<5 {
            #expect(try cache.getCachedItems(MenuItem.self, forKey: "k\(index)") == MenuItem.sampleMenu(count: 20))
        }
    }

    @Test func aCollectionLargerThanTheByteLimitIsWrittenAtOnceInTheBackground() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(bytes: 100, writeBackDelay: nil))
        try cache.cacheItems(MenuItem.sampleMenu(count: 50))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 50), "readable before it is written")
        cache.store.waitForBackgroundWork()
        #expect(fixture.hasArchive(MenuItem.self))
        #expect(cache.memoryStatistics.entries == 0)
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 50))
    }

    @Test func aMemoryWarningWritesDirtyEntriesAndEmptiesMemory() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        for index in 0..<4 {
            try cache.cacheItems([Plain(value: index)], forKey: "k\(index)")
        }
        try fixture.openCache().cacheItems([Plain(value: 99)], forKey: "on-disk")
        _ = try cache.getCachedItems(Plain.self, forKey: "on-disk")  // a clean entry
        #expect(cache.memoryStatistics.entries == 5)

        cache.didReceiveMemoryWarning()
        cache.store.waitForBackgroundWork()
        let statistics = cache.memoryStatistics
        #expect(statistics.entries == 0)
        #expect(statistics.bytes == 0)
        #expect(statistics.spills == 4)
        for index in 0..<4 {
            #expect(fixture.hasArchive(Plain.self, key: "k\(index)"))
            #expect(try cache.getCachedItems(Plain.self, forKey: "k\(index)") == [Plain(value: index)])
        }
    }

    @Test func writeThroughWritesBeforeReturningAndThrows() throws {
        let fixture = try Fixture()
        let armed = Locked(false)
        let cache = try fixture.openCache(
            memory: .layer(writeBackDelay: .zero),
            faults: { step, path in step == .write && path.contains("/user-") && armed.withLock { $0 } ? ENOSPC : nil })
        try cache.cacheItems([Plain(value: 1)])
        #expect(fixture.hasArchive(Plain.self))
        #expect(cache.memoryStatistics.entries == 1)
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        armed.withLock { $0 = true }
        #expect(expectAppCacheError { try cache.cacheItems([Plain(value: 2)]) }?.code == .noSpace)
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)], "memory keeps what disk has")
    }

    @Test func aScheduledWriteBackWritesDirtyEntries() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: .seconds(3600)))
        try cache.cacheItems([Plain(value: 1)])
        #expect(!fixture.hasArchive(Plain.self))
        cache.store.performScheduledWriteBack()  // what the timer runs when the delay is up
        #expect(fixture.hasArchive(Plain.self))
        #expect(cache.memoryStatistics.dirtyEntries == 0)
    }

    /// The real timer: a short delay, and a generous deadline for a busy machine.
    @Test func theWriteBackTimerFires() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: .milliseconds(20)))
        try cache.cacheItems([Plain(value: 1)])
        // (`eventually`'s deadline grows under the sanitizers, where the whole suite on two
        // cores can hold a 20 ms timer back for tens of seconds.)
        #expect(await eventually { fixture.hasArchive(Plain.self) })
        // And again for the next dirty entry.
        try cache.cacheItems([Plain(value: 2)], forKey: "second")
        #expect(await eventually { fixture.hasArchive(Plain.self, key: "second") })
    }

    @Test func deinitFlushes() throws {
        let fixture = try Fixture()
        do {
            let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
            try cache.cacheItems([Plain(value: 7)])
            #expect(!fixture.hasArchive(Plain.self))
        }
        #expect(fixture.hasArchive(Plain.self))
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 7)])
    }

    /// The last instance released by disk work it queued (on its own thread) closes there, and
    /// writes what is dirty.
    @Test func theLastInstanceReleasedOnTheCachesOwnThreadWritesWhatIsDirty() throws {
        let fixture = try Fixture()
        let held = Locked<AppCache?>(try fixture.openCache(memory: .layer(writeBackDelay: nil)))
        let store = try #require(held.withLock { $0?.store })
        try held.withLock { try $0?.cacheItems([Plain(value: 1)]) }
        let released = DispatchSemaphore(value: 0)
        store.writeBack.queue.async {
            var last = held.withLock { $0.moveOut() }
            #expect(last != nil)
            last = nil
            released.signal()
        }
        #expect(released.wait(timeout: .now() + 60) == .success, "the release on the cache's own thread returned")
        #expect(fixture.hasArchive(Plain.self), "and wrote the dirty collection")
    }

    @Test func theExitFlushWritesRegisteredCaches() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration(memory: .layer(writeBackDelay: nil))
        configuration.flushesAtExit = true
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 3)])
        ExitFlush.flushAll()  // what the atexit handler runs
        #expect(fixture.hasArchive(Plain.self))
        withExtendedLifetime(cache) {}
    }

    @Test func isStaleAndCachedDateAnswerFromMemory() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        #expect(!cache.isStale(MenuItem.self))
        fixture.clock.advance(by: .seconds(601))
        #expect(cache.isStale(MenuItem.self))
        #expect(try cache.cachedCollection(MenuItem.self)?.isStale == true)
    }

    // Reads from inside an archive file's creation: each collection a file of its own.
    /// A read made while an entry is being spilled (from inside the spill's own file write)
    /// still gets the entry's items, not the older archive on disk.
    @Test func anEntryOnItsWayToDiskStaysVisible() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cacheBox = Locked<AppCache?>(nil)
        let seenMidSpill = Locked<[[Plain]?]>([])
        let cache = try fixture.openCache(
            memory: .layer(entries: 1, writeBackDelay: nil),
            faults: { step, path in
                if step == .createFile, let cache = cacheBox.withLock({ $0 }), seenMidSpill.withLock({ $0.isEmpty }) {
                    let items = try? cache.getCachedItems(Plain.self, forKey: "a")
                    seenMidSpill.withLock { $0.append(items ?? nil) }
                }
                return nil
            })
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try cache.flush()  // the archive holds version 1 (read once mid-write; that is fine)
        seenMidSpill.withLock { $0 = [] }
        try cache.cacheItems([Plain(value: 2)], forKey: "a")
        cacheBox.withLock { $0 = cache }
        try cache.cacheItems([Plain(value: 9)], forKey: "b")  // "a" spills
        cache.store.waitForBackgroundWork()
        cacheBox.withLock { $0 = nil }
        #expect(seenMidSpill.withLock { $0 } == [[Plain(value: 2)]])
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "a") == [Plain(value: 2)])
    }

    // MARK: - Memory and disk as one

    @Test func switchingUserWritesTheOldUsersEntriesAndForgetsThem() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: "alice", memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Plain(value: 1)])
        try cache.switchUser(to: "bob")
        #expect(try cache.getCachedItems(Plain.self) == nil, "bob never sees alice's items, written or not")
        cache.store.waitForBackgroundWork()
        #expect(fixture.hasArchive(Plain.self, user: "alice"))
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(cache.memoryStatistics.entries == 0)
        try cache.cacheItems([Plain(value: 2)])
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        try cache.switchUser(to: "bob")
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 2)])
        try cache.switchUser(to: "bob")  // no change: nothing happens
    }

    @Test func aSwitchWhoseWritesFailStillSwitchesAndKeepsTheData() throws {
        let fixture = try Fixture()
        let armed = Locked(true)
        let cache = try fixture.openCache(
            user: "alice", memory: .layer(writeBackDelay: nil),
            faults: { step, path in step == .write && path.contains("/user-") && armed.withLock { $0 } ? ENOSPC : nil })
        try cache.cacheItems([Plain(value: 1)])
        try cache.switchUser(to: "bob")
        cache.store.waitForBackgroundWork()
        #expect(fixture.diagnostics.codes == [.noSpace], "the failed write of alice's items is reported")
        #expect(cache.user == "bob")
        #expect(try cache.getCachedItems(Plain.self) == nil, "bob never sees alice's items")
        #expect(cache.memoryStatistics.dirtyEntries == 1)
        armed.withLock { $0 = false }
        try cache.flush()
        #expect(fixture.hasArchive(Plain.self, user: "alice"))
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    @Test func removingDirtyEntriesMeansTheyAreNeverWritten() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        try cache.removeItems(Plain.self, forKey: "a")
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == nil)
        try cache.removeAll()
        #expect(try cache.getCachedItems(Plain.self, forKey: "b") == nil)
        try cache.flush()
        #expect(fixture.allFiles().isEmpty)
        #expect(cache.memoryStatistics.entries == 0)
    }

    @Test func removingACollectionRemovesItsArchiveToo() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Plain(value: 1)])
        try cache.flush()
        try cache.cacheItems([Plain(value: 2)])
        try cache.removeItems(Plain.self)
        #expect(!fixture.hasArchive(Plain.self))
        #expect(try cache.getCachedItems(Plain.self) == nil)
    }

    @Test func aVersionWipeNeverMixesWithAnotherVersionsMemory() throws {
        let fixture = try Fixture()
        do {
            let old = try fixture.openCache(schemaVersion: "1", memory: .layer(writeBackDelay: nil))
            try old.cacheItems([Plain(value: 1)])
            let new = try fixture.openCache(schemaVersion: "2", memory: .layer(writeBackDelay: nil))
            #expect(try new.getCachedItems(Plain.self) == nil)
            try new.cacheItems([Plain(value: 2)])
            #expect(try new.getCachedItems(Plain.self) == [Plain(value: 2)])
        }
        // The old instance flushed into its own version on the way out; the next open of the
        // new version wipes it again.
        let reopened = try fixture.openCache(schemaVersion: "2", memory: .layer(writeBackDelay: nil))
        #expect(try reopened.getCachedItems(Plain.self) == [Plain(value: 2)])
        #expect(fixture.allFiles().allSatisfy { $0.hasPrefix("version-2/") })
    }

    @Test func anotherModelTypeOfTheSameNameIsJudgedByTheDiskRules() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(1)])
        #expect(try cache.getCachedItems(NoteV2.self) == nil)
        #expect(fixture.diagnostics.codes == [.schemaMismatch])
        #expect(try cache.getCachedItems(Note.self) == nil, "the outdated archive is gone for both types")
        try cache.cacheItems([NoteV2(id: 1, title: "t")])
        #expect(try cache.getCachedItems(NoteV2.self) == [NoteV2(id: 1, title: "t")])
    }

    // MARK: - Faults

    // Looks at archive files: each collection a file of its own.
    @Test func aFailedSpillKeepsTheEntryDirtyReportsAndIsRetriedByTheNextFlush() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let armed = Locked(true)
        let cache = try fixture.openCache(
            memory: .layer(entries: 1, writeBackDelay: nil),
            faults: { step, path in step == .write && path.contains("/user-") && armed.withLock { $0 } ? ENOSPC : nil })
        let cachedAt = fixture.clock.now
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        fixture.clock.advance(by: .seconds(5))
        try cache.cacheItems([Plain(value: 2)], forKey: "b")  // "a" spills, and fails
        cache.store.waitForBackgroundWork()
        #expect(fixture.diagnostics.codes == [.noSpace])
        #expect(fixture.diagnostics.errors.first?.message.contains("stays in memory") == true)
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
        #expect(cache.memoryStatistics.dirtyEntries == 2)
        #expect(fixture.allFiles().isEmpty, "no temporary file is left behind")

        let error = expectAppCacheError { try cache.flush() }
        #expect(error?.code == .noSpace)
        #expect(error?.message.contains("2 collection(s)") == true)

        armed.withLock { $0 = false }
        try cache.flush()
        #expect(abs(try modificationDate(fixture.archivePath(Plain.self, key: "a")).timeIntervalSince(cachedAt)) < 0.001)
        #expect(fixture.archiveExists(Plain.self, key: "b"))
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
    }

    // Fails archive files' renames: each collection a file of its own.
    @Test func aMemoryWarningWhoseWritesFailKeepsTheData() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let armed = Locked(true)
        let cache = try fixture.openCache(
            memory: .layer(writeBackDelay: nil),
            faults: { step, path in step == .rename && path.hasSuffix(".archive") && armed.withLock { $0 } ? EIO : nil })
        try cache.cacheItems([Plain(value: 1)])
        cache.didReceiveMemoryWarning()
        cache.store.waitForBackgroundWork()
        #expect(fixture.diagnostics.codes == [.ioFailure])
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        armed.withLock { $0 = false }
        try cache.flush()
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 1)])
    }
}

/// The default memory limit is sized from the device, so a real feed fits.
@Suite struct DefaultMemoryLimitTests {
    @Test func aShareOfPhysicalMemoryWithAFloorAndACeiling() {
        let gigabyte: UInt64 = 1 << 30
        #expect(AppCache.Configuration.memoryByteLimit(physicalMemory: 2 * gigabyte, isAppExtension: false) == 16 << 20, "the floor")
        #expect(AppCache.Configuration.memoryByteLimit(physicalMemory: 4 * gigabyte, isAppExtension: false) == 16 << 20)
        #expect(AppCache.Configuration.memoryByteLimit(physicalMemory: 6 * gigabyte, isAppExtension: false) == 24 << 20)
        #expect(AppCache.Configuration.memoryByteLimit(physicalMemory: 8 * gigabyte, isAppExtension: false) == 32 << 20)
        #expect(AppCache.Configuration.memoryByteLimit(physicalMemory: 64 * gigabyte, isAppExtension: false) == 64 << 20, "the ceiling")
        #expect(AppCache.Configuration.memoryByteLimit(physicalMemory: 8 * gigabyte, isAppExtension: true) == 4 << 20, "extensions stay small")
        // An 800-status timeline (about 8 MiB decoded) fits the default of any app.
        #expect(AppCache.Configuration(schemaVersion: "1").memoryByteLimit >= 16 << 20)
        var explicit = AppCache.Configuration(schemaVersion: "1")
        explicit.memoryByteLimit = 8 << 20
        #expect(explicit.memoryByteLimit == 8 << 20, "an explicit limit stays as it is")
    }
}
