import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Expiry, pinning, removals and listings.
struct HousekeepingTests {
    static let layers: [Fixture.Memory] = [.diskOnly, .layer(writeBackDelay: nil)]

    @Test(arguments: layers)
    func expiryIsEnforcedAtTheBoundary(memory: Fixture.Memory) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: memory)
        try cache.cacheItems(MenuItem.sampleMenu(count: 2), expiresAfter: .seconds(60))
        fixture.clock.advance(by: .seconds(59))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2))
        #expect(cache.cachedDate(MenuItem.self) != nil)
        fixture.clock.advance(by: .seconds(1))
        #expect(try cache.getCachedItems(MenuItem.self) == nil, "expired exactly at the boundary")
        #expect(try cache.cachedCollection(MenuItem.self) == nil)
        #expect(cache.cachedDate(MenuItem.self) == nil)
        #expect(cache.isStale(MenuItem.self))
        try cache.flush()
        #expect(!fixture.hasArchive(MenuItem.self), "an expired collection is removed when found")
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func expiryComesFromTheHeaderNotTheFileDate() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)], expiresAfter: .seconds(3600))
        let header = try Data(contentsOf: URL(filePath: fixture.archivePath(Plain.self)))
            .withUnsafeBytes { try ArchiveHeader.parse($0) }.header
        #expect(header.expiry.map { abs($0.timeIntervalSince(fixture.clock.now + 3600)) < 0.002 } == true)
        // An old file date means stale, not expired.
        try setModificationDate(fixture.clock.now - 86_400, ofFileAt: fixture.archivePath(Plain.self))
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        #expect(cache.isStale(Plain.self))
        // A reopened cache still knows the expiry.
        fixture.clock.advance(by: .seconds(3601))
        #expect(try fixture.openCache().getCachedItems(Plain.self) == nil)
    }

    @Test func expiredOnDiskIsAMissAndRemoved() throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems([Plain(value: 1)], expiresAfter: .seconds(10))
        fixture.clock.advance(by: .seconds(11))
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(!fixture.hasArchive(Plain.self))
        #expect(cache.memoryStatistics.entries == 0)
    }

    @Test(arguments: layers)
    func pinnedCollectionsIgnoreTheirTimeToLiveUntilUnpinned(memory: Fixture.Memory) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: memory)
        try cache.cacheItems([Plain(value: 1)], expiresAfter: .seconds(10))
        try cache.pin(Plain.self)
        fixture.clock.advance(by: .seconds(60))
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        // The pin is in the archive: a fresh instance honours it.
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 1)])
        try cache.removeExpired()
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        try cache.unpin(Plain.self)
        #expect(try cache.getCachedItems(Plain.self) == nil)
    }

    @Test func removeExpiredSweepsTemporaryFilesLeftByACrash() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        let leftover = fixture.layout().userPath("alice") + "/" + FileSystem.temporaryPrefix + "deadbeef"
        try Data("half a write".utf8).write(to: URL(filePath: leftover))
        try cache.removeExpired()
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    @Test func pinningWhatIsNotCachedIsAnError() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        #expect(expectAppCacheError { try cache.pin(Plain.self, forKey: "nothing") }?.code == .notCached)
    }

    @Test(arguments: layers)
    func removeExpiredTakesOnlyExpiredUnpinnedOfEveryUser(memory: Fixture.Memory) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: "alice", memory: memory)
        try cache.cacheItems([Plain(value: 1)], forKey: "short", expiresAfter: .seconds(5))
        try cache.cacheItems([Plain(value: 2)], forKey: "long", expiresAfter: .seconds(500))
        try cache.cacheItems([Plain(value: 3)], forKey: "forever")
        try cache.cacheItems([Plain(value: 4)], forKey: "pinned", expiresAfter: .seconds(5))
        try cache.pin(Plain.self, forKey: "pinned")
        try cache.switchUser(to: "bob")
        try cache.cacheItems([Plain(value: 5)], forKey: "short", expiresAfter: .seconds(5))
        fixture.clock.advance(by: .seconds(6))
        try cache.removeExpired()
        try cache.flush()
        #expect(!fixture.hasArchive(Plain.self, key: "short", user: "bob"))
        #expect(!fixture.hasArchive(Plain.self, key: "short", user: "alice"))
        #expect(fixture.hasArchive(Plain.self, key: "long", user: "alice"))
        #expect(fixture.hasArchive(Plain.self, key: "forever", user: "alice"))
        #expect(fixture.hasArchive(Plain.self, key: "pinned", user: "alice"))
    }

    @Test(arguments: layers)
    func removeAllCanSparePinnedCollections(memory: Fixture.Memory) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: memory)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try cache.cacheItems([Plain(value: 2)], forKey: "keep")
        try cache.pin(Plain.self, forKey: "keep")
        try cache.removeAll(includingPinned: false)
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == nil)
        #expect(try cache.getCachedItems(Plain.self, forKey: "keep") == [Plain(value: 2)])
        try cache.removeAll(includingPinned: true)
        #expect(try cache.getCachedItems(Plain.self, forKey: "keep") == nil)
        try cache.flush()
        cache.store.waitForBackgroundWork()  // background removals and user records land first
        #expect(fixture.allFiles().isEmpty)
    }

    @Test func removeUserIsALogoutWipeOfMemoryAndDisk() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: "alice", memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Plain(value: 1)], forKey: "flushed")
        try cache.flush()
        try cache.cacheItems([Plain(value: 2)], forKey: "dirty")
        try cache.switchUser(to: "bob")
        try cache.cacheItems([Plain(value: 3)])
        try cache.removeUser("alice")
        #expect(cache.user == "bob")
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 3)])
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Plain.self, forKey: "flushed") == nil)
        #expect(try cache.getCachedItems(Plain.self, forKey: "dirty") == nil)
        try cache.flush()
        cache.store.waitForBackgroundWork()  // background removals and user records land first
        #expect(fixture.allFiles().allSatisfy { $0.hasPrefix("version-1/user-bob/") })

        // Wiping the current user works too, dirty entries included.
        try cache.cacheItems([Plain(value: 4)])
        try cache.removeUser("alice")
        #expect(try cache.getCachedItems(Plain.self) == nil)
    }

    @Test func removeAllUsersEmptiesEverything() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: nil, memory: .layer(writeBackDelay: nil))
        for user in ["alice", "bob", nil] as [String?] {
            try cache.switchUser(to: user)
            try cache.cacheItems([Plain(value: 1)])
        }
        try cache.removeAllUsers()
        #expect(cache.memoryStatistics.entries == 0)
        try cache.flush()
        // The removal's trash is deleted after its batch, on whichever thread ran it.
        cache.store.waitForBackgroundWork()
        #expect(fixture.allFiles().isEmpty)
        for user in ["alice", "bob", nil] as [String?] {
            try cache.switchUser(to: user)
            #expect(try cache.getCachedItems(Plain.self) == nil)
        }
    }

    @Test func entriesListMemoryAndDiskWithoutDecoding() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: "bob", memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Plain(value: 9)])
        try cache.switchUser(to: "alice")
        let cachedAt = fixture.clock.now
        try cache.cacheItems(MenuItem.sampleMenu(count: 3), forKey: "on-disk")
        try cache.flush()
        try cache.cacheItems([Plain(value: 1)], expiresAfter: .seconds(100))
        try cache.pin(Plain.self)
        try cache.cacheItems([Headline(title: "dirty")])
        // An archive whose payload would not decode still lists.
        try fixture.plant(
            ArchiveRecord(payload: Data("not json".utf8), codec: 1, schemaVersion: 7, cachedDate: cachedAt),
            forKey: ArchiveKey(user: "alice", cacheName: "Broken", key: "k"))
        fixture.clock.advance(by: .seconds(40))  // Headline's own threshold is 30 s

        let entries = try cache.entries()
        #expect(entries.map(\.cacheName) == ["Broken", "Headlines", "MenuItems", "Plains"])
        let broken = try #require(entries.first { $0.cacheName == "Broken" })
        #expect(broken.modelSchemaVersion == 7 && broken.key == "k" && !broken.isInMemory && broken.bytes > 8)
        let headline = try #require(entries.first { $0.cacheName == "Headlines" })
        #expect(headline.isInMemory && headline.isDirty && headline.isStale && !headline.isOnDisk)
        let menu = try #require(entries.first { $0.cacheName == "MenuItems" })
        #expect(menu.key == "on-disk" && !menu.isDirty && !menu.isStale && menu.user == "alice" && menu.isOnDisk)
        #expect(abs(menu.cachedDate.timeIntervalSince(cachedAt)) < 0.001)
        let plain = try #require(entries.first { $0.cacheName == "Plains" })
        #expect(plain.isPinned && plain.expiry != nil)

        let everyone = try cache.entriesOfAllUsers()
        #expect(everyone.count == 5)
        #expect(everyone.filter { $0.user == "bob" }.map(\.cacheName) == ["Plains"])
        #expect(fixture.diagnostics.errors.isEmpty, "listing decodes nothing and reports nothing")
    }
}
