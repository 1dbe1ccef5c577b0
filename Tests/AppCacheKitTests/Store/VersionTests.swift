import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// App schema versions and model schema versions.
struct VersionTests {
    // Looks at archive files: each collection a file of its own.
    @Test func openingWithAnotherVersionWipesTheOldOneForAllUsers() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let old = try fixture.openCache(schemaVersion: "1.0", user: "alice")
        try old.cacheItems(MenuItem.sampleMenu(count: 2))
        try old.switchUser(to: "bob")
        try old.cacheItems(MenuItem.sampleMenu(count: 2))
        try old.switchUser(to: nil)
        try old.cacheItems(MenuItem.sampleMenu(count: 2))

        let new = try fixture.openCache(schemaVersion: "2.0", user: "alice")
        #expect(try new.getCachedItems(MenuItem.self) == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/version-1.0"))
        try new.cacheItems(MenuItem.sampleMenu(count: 1))
        #expect(fixture.allFiles() == ["version-2.0/user-alice/MenuItems.archive"])
    }

    /// An old app's extension still running when the updated app opens the root: its writes
    /// stop with their own error, and the old version's directory is not made again.
    @Test func aCacheWhoseVersionANewerAppRemovedStopsWriting() throws {
        let fixture = try Fixture()
        let old = try fixture.openCache(schemaVersion: "1.0", memory: .layer(writeBackDelay: nil))
        try old.cacheItems(MenuItem.sampleMenu(count: 2))
        let new = try fixture.openCache(schemaVersion: "2.0")
        try new.cacheItems(MenuItem.sampleMenu(count: 1))

        let error = expectAppCacheError { try old.flush() }
        #expect(error?.code == .versionRemoved)
        #expect(error?.message.contains("schema version") == true)
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/version-1.0"), "the old version is not made again")
        #expect(expectAppCacheError { try old.removeItems(MenuItem.self) }?.code == .versionRemoved)
        #expect(try new.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 1))

        // It misses, and every write says why, write-back ones included.
        #expect(try old.getCachedItems(MenuItem.self) == nil)
        #expect(old.memoryStatistics.entries == 0)
        #expect(expectAppCacheError { try old.cacheItems(MenuItem.sampleMenu(count: 3)) }?.code == .versionRemoved)
        // Background writes (a spill, a memory warning) go on failing; diagnostics hears once.
        old.didReceiveMemoryWarning()
        old.store.spillInBackground([])
        old.store.performScheduledWriteBack()
        old.store.waitForBackgroundWork()
        #expect(fixture.diagnostics.errors.filter { $0.code == .versionRemoved }.count <= 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/version-1.0"))
    }

    /// Reported once to `diagnostics` when only background writes meet the removal.
    @Test func aRemovedVersionIsReportedOnceFromBackgroundWrites() throws {
        let fixture = try Fixture()
        let old = try fixture.openCache(schemaVersion: "1.0", memory: .layer(writeBackDelay: nil))
        try old.cacheItems(MenuItem.sampleMenu(count: 2), forKey: "a")
        try old.cacheItems(MenuItem.sampleMenu(count: 2), forKey: "b")
        _ = try fixture.openCache(schemaVersion: "2.0")

        old.store.performScheduledWriteBack()  // what the write-back timer runs
        old.store.performScheduledWriteBack()
        old.flushBeforeSuspension(thenClose: false)
        old.store.waitForBackgroundWork()
        let reported = fixture.diagnostics.errors.filter { $0.code == .versionRemoved }
        #expect(reported.count == 1)
        #expect(reported.first?.path?.contains("version-1.0") == true)
        #expect(!fixture.diagnostics.errors.contains { $0.message.contains("mkdir") })
    }

    @Test func reopeningTheSameVersionKeepsTheData() throws {
        let fixture = try Fixture()
        try fixture.openCache(schemaVersion: "3").cacheItems(MenuItem.sampleMenu(count: 2))
        #expect(try fixture.openCache(schemaVersion: "3").getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2))
    }

    @Test func anInterruptedWipeFinishesOnTheNextOpen() throws {
        let fixture = try Fixture()
        // What a crash in the middle of a wipe leaves: a hidden trash directory, partly deleted.
        let trash = fixture.rootPath + "/.wipe-1234/user-alice"
        try FileManager.default.createDirectory(atPath: trash, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(filePath: trash + "/x.archive"))
        _ = try fixture.openCache()
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/.wipe-1234"))
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aFailedWipeIsAnErrorAndNothingMixes() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache(schemaVersion: "1").cacheItems(MenuItem.sampleMenu(count: 2))
        let error = expectAppCacheError {
            _ = try fixture.openCache(schemaVersion: "2", faults: { operation, _ in operation == .rename ? EIO : nil })
        }
        #expect(error?.code == .versionWipeFailed)
        #expect(error?.path?.hasSuffix("version-1") == true)
        #expect(error?.underlyingError is SystemError)
        // The old version is intact and no new version directory was created next to it.
        #expect(fixture.allFiles() == ["version-1/user-alice/MenuItems.archive"])

        // Once the fault is gone the wipe goes through.
        let cache = try fixture.openCache(schemaVersion: "2")
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(fixture.allFiles().isEmpty)
    }

    @Test func foreignEntriesInTheRootAreLeftAlone() throws {
        let fixture = try Fixture()
        try Data("mine".utf8).write(to: fixture.root.appending(path: "notes.txt"))
        try FileManager.default.createDirectory(at: fixture.root.appending(path: "other"), withIntermediateDirectories: true)
        _ = try fixture.openCache(schemaVersion: "9")
        #expect(FileManager.default.fileExists(atPath: fixture.rootPath + "/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: fixture.rootPath + "/other"))
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aModelSchemaMismatchIsAMissAndRemovesTheArchive() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Note.make(1)])
        #expect(try cache.getCachedItems(NoteV2.self) == nil)
        #expect(fixture.diagnostics.codes == [.schemaMismatch])
        #expect(!FileManager.default.fileExists(atPath: fixture.archivePath(Note.self)))
        // The new version caches and reads normally afterwards.
        try cache.cacheItems([NoteV2(id: 1, title: "t")])
        #expect(try cache.getCachedItems(NoteV2.self) == [NoteV2(id: 1, title: "t")])
    }
}
