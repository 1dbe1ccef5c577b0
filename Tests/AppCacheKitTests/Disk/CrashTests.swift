import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// A process killed mid-batch leaves the index exact again after the next open plus one write:
/// every collection old or new, `diskUsage` equal to the archives on disk, no temporary file.
/// (The torture program kills real processes; these tests replay what a kill leaves behind.)
struct CrashTests {
    /// Leaves the lock file as a holder killed mid-batch leaves it: the crash flag set.
    private func markBatchUnfinished(_ fixture: Fixture) throws {
        let handle = try FileHandle(forUpdating: URL(filePath: fixture.layout().versionPath + "/" + ProcessCoordinator.fileName))
        try handle.seek(toOffset: 8)
        try handle.write(contentsOf: Data([1, 0, 0, 0, 0, 0, 0, 0]))
        try handle.close()
    }

    private func appendJournal(_ fixture: Fixture, _ records: [DiskIndex.Record]) throws {
        let handle = try FileHandle(forWritingTo: URL(filePath: fixture.journalPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: IndexJournal.bytes(records))
        try handle.close()
    }

    // Replays a batch killed around an archive file's rename: each collection a file of its own.
    @Test func aKillBetweenTheRenameAndTheJournalLineIsSettled() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let key = ArchiveKey(user: "alice", cacheName: "MenuItems", key: nil)
        let path = fixture.layout().archivePath(for: key)
        try fixture.openCache().cacheItems(MenuItem.sampleMenu(count: 2))
        // The killed batch announced the change, renamed a bigger archive into place and left
        // a second temporary file; its outcome line never reached the journal.
        try appendJournal(fixture, [.willChange(path: path, temporaryName: ".tmp-dead")])
        try fixture.plant(
            ArchiveRecord(payload: try JSONEncoder().encode(MenuItem.sampleMenu(count: 40)), codec: 1, schemaVersion: 1, cachedDate: Date()),
            forKey: key)
        let leftover = fixture.layout().userPath("alice") + "/.tmp-dead"
        try Data("half".utf8).write(to: URL(filePath: leftover))
        try markBatchUnfinished(fixture)

        let cache = try fixture.openCache()
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 40), "the new items, whole")
        #expect(try fixture.openCache().bytesOnDisk() == (try fixture.measuredUsage()))
    }

    // Replays a batch killed before an archive file's rename: each collection a file of its own.
    @Test func aKillBeforeTheRenameKeepsTheOldCollection() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let key = ArchiveKey(user: "alice", cacheName: "MenuItems", key: nil)
        try fixture.openCache().cacheItems(MenuItem.sampleMenu(count: 2))
        try appendJournal(fixture, [.willChange(path: fixture.layout().archivePath(for: key), temporaryName: ".tmp-half")])
        let leftover = fixture.layout().userPath("alice") + "/.tmp-half"
        try Data("ACA1 and then nothing".utf8).write(to: URL(filePath: leftover))
        try markBatchUnfinished(fixture)

        // One write (of another collection) after the open settles it.
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2), "the old items, whole")
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
    }

    // Replays a batch killed after appending to a pack, before its outcome lines, and before
    // it removed the older file of one of the collections it packed.
    @Test func aKillBetweenAPackAppendAndItsJournalLinesIsSettled() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 2), forKey: "a")
        // "b" was a file of its own (cached a minute earlier) before the killed batch packed it.
        let key = ArchiveKey(user: "alice", cacheName: MenuItem.cacheName, key: "b")
        let file = fixture.layout().absolutePath(fixture.layout().archivePath(for: key))
        try fixture.plant(
            ArchiveRecord(
                payload: try PayloadCodec.binary.encodeItems(MenuItem.sampleMenu(count: 9)), codec: PayloadCodec.binary.headerValue,
                schemaVersion: 1, cachedDate: fixture.clock.now.addingTimeInterval(-60)),
            forKey: key)
        let older = try Data(contentsOf: URL(filePath: file))
        let journalLength = try #require(FileManager.default.attributesOfItem(atPath: fixture.journalPath)[.size] as? Int)
        try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: 1), forKey: "b")
        try cache.cacheItems(MenuItem.sampleMenu(count: 4, seed: 2), forKey: "a")
        // What the kill left: the records appended, the older file not yet removed, the
        // journal holding the announcement and no outcome.
        try older.write(to: URL(filePath: file))
        let handle = try FileHandle(forUpdating: URL(filePath: fixture.journalPath))
        try handle.truncate(atOffset: UInt64(journalLength))
        try handle.close()
        try appendJournal(fixture, [.willAppend(directory: "user-alice")])
        try markBatchUnfinished(fixture)

        let reopened = try fixture.openCache()
        try reopened.cacheItems([Plain(value: 1)])
        #expect(!FileManager.default.fileExists(atPath: file), "the older file went")
        #expect(try reopened.getCachedItems(MenuItem.self, forKey: "b") == MenuItem.sampleMenu(count: 3, seed: 1))
        #expect(try reopened.getCachedItems(MenuItem.self, forKey: "a") == MenuItem.sampleMenu(count: 4, seed: 2))
        #expect(try reopened.bytesOnDisk() == (try fixture.measuredUsage()), "the index counts what the pack holds")
        #expect(try fixture.openCache().bytesOnDisk() == (try fixture.measuredUsage()))
    }

    @Test func aKillDuringALogoutWipeIsSettled() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 3))
        try cache.switchUser(to: "bob")
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        cache.store.waitForBackgroundWork()  // the switch's record of bob, before the "kill"
        // The wipe of alice was announced and her directory moved out of view; then the kill.
        try appendJournal(fixture, [.willRemoveAll(directory: "user-alice")])
        try FileManager.default.moveItem(atPath: fixture.layout().userPath("alice"), toPath: fixture.rootPath + "/.wipe-dead")
        try markBatchUnfinished(fixture)

        let reopened = try fixture.openCache(user: "bob")
        #expect(try reopened.bytesOnDisk() == (try fixture.measuredUsage()))
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/.wipe-dead"), "trash goes on the next open")
        #expect(try reopened.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 1))
    }

    // Leaves temporary files beside archive files: each collection a file of its own.
    @Test func aKillDuringAJournalCompactionIsSettled() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache().cacheItems([Plain(value: 1)])
        try appendJournal(fixture, [.willCompact(temporaryName: ".tmp-compacting")])
        let leftover = fixture.layout().versionPath + "/.tmp-compacting"
        try Data("00000000 H 2\n".utf8).write(to: URL(filePath: leftover))
        try markBatchUnfinished(fixture)

        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
    }

    /// A writer killed after its journal append and before it stored the journal's new length
    /// in the lock file (what the torture program's two-process mode met) leaves that length
    /// short. A process that keeps an index must not move its cursor by it: the cursor would
    /// point into a line, and its next read of what others appended would find the journal
    /// damaged and rebuild it.
    @Test func aWriterKilledBeforeItStoredTheJournalsLengthLeavesItsReadersInStep() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.diskByteLimit = 1 << 30  // a budget: the cache keeps an index, and a cursor
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        // The killed writer held the lock file: no batch of this cache's (the one opening a
        // cache with a budget runs in the background) may run beside its journal line below.
        cache.store.waitForBackgroundWork()
        // The killed writer's batch: a line appended (of a length no line of the cache's own
        // batches has, so that a cursor off by it falls inside a line), the length word not
        // moved, the crash flag left set.
        try appendJournal(fixture, [.touch(path: CachePath(directory: "user-alice", name: "Plains+a.archive"))])
        try markBatchUnfinished(fixture)
        // The next batch settles it, and appends through the journal it holds open.
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        // Another process writes: the cache reads what it appended from its cursor.
        var other = fixture.configuration()
        other.diskByteLimit = 1 << 30
        try AppCache(configuration: other).cacheItems([Plain(value: 3)], forKey: "c")
        try cache.cacheItems([Plain(value: 4)], forKey: "d")

        #expect(fixture.diagnostics.errors.map(\.message) == [], "no damaged journal, no rebuild")
        #expect(try cache.getCachedItems(Plain.self, forKey: "c") == [Plain(value: 3)])
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()), "the index counts every archive")
    }

    // Looks at archive files: each collection a file of its own.
    /// Without a crash, no batch reads the journal, so settling costs nothing in the usual case;
    /// the journal stays compact as it grows.
    @Test func theJournalIsCompactedAsItGrows() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        for round in 0..<3000 {
            try cache.cacheItems([Plain(value: round)], forKey: "k\(round % 20)")
        }
        let size = try FileManager.default.attributesOfItem(atPath: fixture.journalPath)[.size] as? Int ?? 0
        #expect(size < 3 * JournalLedger.minimumCompactionSize)
        #expect(try fixture.openCache().bytesOnDisk() == (try fixture.measuredUsage()))
        #expect(fixture.allFiles().allSatisfy { !$0.contains(".tmp-") })
    }
}
