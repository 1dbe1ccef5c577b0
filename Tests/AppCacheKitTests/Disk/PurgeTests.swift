import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// iOS empties `Library/Caches` under storage pressure, and "clear cache" tools delete it:
/// the cache must recreate what was deleted and lose nothing it still holds dirty.
struct PurgeTests {
    /// The directories a purge may delete while caches are open.
    enum Purged: String, CaseIterable {
        case root, versionDirectory, userDirectory, rootReplacedByAnEmptyOne
    }

    private func purge(_ what: Purged, in fixture: Fixture) throws {
        let layout = fixture.layout()
        switch what {
        case .root:
            try FileManager.default.removeItem(atPath: fixture.rootPath)
        case .versionDirectory:
            try FileManager.default.removeItem(atPath: layout.versionPath)
        case .userDirectory:
            try FileManager.default.removeItem(atPath: layout.versionPath + "/" + CacheLayout.userDirectoryName("alice"))
        case .rootReplacedByAnEmptyOne:
            try FileManager.default.removeItem(atPath: fixture.rootPath)
            try FileManager.default.createDirectory(atPath: fixture.rootPath, withIntermediateDirectories: false)
        }
    }

    // Looks at archive files: each collection a file of its own.
    @Test(arguments: Purged.allCases)
    func aFlushAfterAPurgeRecreatesTheDirectoriesAndWritesEveryDirtyCollection(purged: Purged) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(MenuItem.sampleMenu(count: 3), forKey: "lunch")
        try cache.flush()
        try purge(purged, in: fixture)
        let dinner = MenuItem.sampleMenu(count: 5, seed: 2)
        try cache.cacheItems(dinner, forKey: "dinner")

        try cache.flush()

        #expect(fixture.archiveExists(MenuItem.self, key: "dinner"))
        let reopened = try fixture.openCache()
        #expect(try reopened.getCachedItems(MenuItem.self, forKey: "dinner") == dinner)
        #expect(FileManager.default.fileExists(atPath: fixture.layout().versionPath + "/" + ProcessCoordinator.fileName))
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    // Looks at archive files: each collection a file of its own.
    @Test(arguments: Purged.allCases)
    func readsAfterAPurgeMissAndTheNextWriteWorks(purged: Purged) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 3))
        try purge(purged, in: fixture)

        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        let menu = MenuItem.sampleMenu(count: 4, seed: 7)
        try cache.cacheItems(menu)
        #expect(try cache.getCachedItems(MenuItem.self) == menu)
        #expect(fixture.archiveExists(MenuItem.self))
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aSpillPastTheMemoryLimitAfterAPurgeIsWritten() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(bytes: 8 << 20, entries: 1))
        let first = MenuItem.sampleMenu(count: 3)
        try cache.cacheItems(first, forKey: "first")
        try purge(.root, in: fixture)

        try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: 1), forKey: "second")  // spills "first"
        cache.store.waitForBackgroundWork()

        #expect(fixture.archiveExists(MenuItem.self, key: "first"))
        #expect(try fixture.openCache().getCachedItems(MenuItem.self, forKey: "first") == first)
    }

    @Test func twoInstancesEndUpOnOneLockFileAfterAPurge() throws {
        let fixture = try Fixture()
        let one = try fixture.openCache(memory: .layer())
        let two = try fixture.openCache(memory: .layer())
        try one.cacheItems(MenuItem.sampleMenu(count: 2))
        try one.flush()
        #expect(try two.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2))
        try purge(.root, in: fixture)

        let newer = MenuItem.sampleMenu(count: 6, seed: 3)
        fixture.clock.advance(by: .seconds(1))
        try one.cacheItems(newer)
        try one.flush()
        // The other instance recreates nothing of its own: it finds the lock file the first made,
        // and its memory learns of the change through it.
        try two.cacheItems([Note.make(1), Note.make(2)], forKey: "notes")
        try two.flush()
        #expect(try two.getCachedItems(MenuItem.self) == newer)
        #expect(try one.getCachedItems(Note.self, forKey: "notes") == [Note.make(1), Note.make(2)])
    }

    // Looks at archive files: each collection a file of its own.
    @Test func noWriteLandsInADirectoryMovedOutOfView() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        try cache.flush()
        let versionPath = fixture.layout().versionPath
        let moved = fixture.rootPath + "/.wipe-test"
        try FileManager.default.moveItem(atPath: versionPath, toPath: moved)
        let before = try FileManager.default.subpathsOfDirectory(atPath: moved).sorted()

        try cache.cacheItems(MenuItem.sampleMenu(count: 5, seed: 4))
        try cache.flush()

        #expect(try FileManager.default.subpathsOfDirectory(atPath: moved).sorted() == before)
        #expect(fixture.archiveExists(MenuItem.self))
    }
}
