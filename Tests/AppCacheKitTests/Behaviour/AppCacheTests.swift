import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Round trips, keys and the basic contract of the facade.
struct AppCacheTests {
    @Test func missReturnsNil() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(try cache.cachedCollection(MenuItem.self) == nil)
        #expect(cache.cachedDate(MenuItem.self) == nil)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    @Test(arguments: [0, 1, 100, 10_000])
    func menuCollectionsRoundTrip(count: Int) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let menu = MenuItem.sampleMenu(count: count)
        try cache.cacheItems(menu)
        #expect(try cache.getCachedItems(MenuItem.self) == menu)
        // And from a fresh instance, so nothing but the file can answer.
        #expect(try fixture.openCache().getCachedItems(MenuItem.self) == menu)
    }

    @Test func nestedOptionalDatedAndNonASCIIValuesRoundTrip() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let notes = (0..<30).map { Note.make($0) }
        try cache.cacheItems(notes)
        let read = try #require(try fixture.openCache().getCachedItems(Note.self))
        #expect(read == notes)
        #expect(read.contains { $0.score == nil } && read.contains { $0.score != nil })
        #expect(read[0].written == notes[0].written)
    }

    @Test func emptyCollectionIsAHitNotAMiss() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([MenuItem]())
        #expect(try cache.getCachedItems(MenuItem.self) == [])
    }

    @Test func keysHoldSeparateCollections() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: 1))
        try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: 42), forKey: "restaurant-42")
        try cache.cacheItems(MenuItem.sampleMenu(count: 4, seed: 7), forKey: "")
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2, seed: 1))
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "restaurant-42") == MenuItem.sampleMenu(count: 3, seed: 42))
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "") == MenuItem.sampleMenu(count: 4, seed: 7))
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "restaurant-43") == nil)
    }

    @Test func typesWithDifferentCacheNamesDoNotMeet() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        try cache.cacheItems([Headline(title: "t")])
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        #expect(try cache.getCachedItems(Headline.self) == [Headline(title: "t")])
    }

    @Test func aLaterWriteReplacesTheCollection() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 5))
        try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: 9))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2, seed: 9))
    }

    // Looks at archive files: each collection a file of its own.
    @Test(arguments: FileNameTests.awkward)
    func awkwardKeysStayInsideTheUserDirectoryAndRoundTrip(_ key: String) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: key.count)], forKey: key)
        #expect(try cache.getCachedItems(Plain.self, forKey: key) == [Plain(value: key.count)])
        let files = fixture.allFiles()
        #expect(files.count == 1)
        #expect(files.allSatisfy { $0.hasPrefix("version-1/user-alice/") && $0.split(separator: "/").count == 3 })
    }

    // Looks at archive files: each collection a file of its own.
    @Test func keysDifferingOnlyInCaseAreDifferentCollections() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        let keys = ["Key", "key", "KEY", String(repeating: "🍣", count: 1000), String(repeating: "🍣", count: 999) + "🍤"]
        for (index, key) in keys.enumerated() {
            try cache.cacheItems([Plain(value: index)], forKey: key)
        }
        for (index, key) in keys.enumerated() {
            #expect(try cache.getCachedItems(Plain.self, forKey: key) == [Plain(value: index)])
        }
        #expect(Set(fixture.allFiles()).count == keys.count)
        // On a volume that ignores case they would be one file, were it not for the names' hash.
        let names = keys.map { ArchiveFileName.make(cacheName: "Plains", key: $0, caseInsensitiveVolume: true) }
        #expect(Set(names.map { $0.lowercased() }).count == keys.count)
    }

    // Looks at archive files: each collection a file of its own.
    /// Canonically equivalent keys are equal Swift strings, so they name one collection, in
    /// memory and on disk alike.
    @Test(arguments: [Fixture.Memory.diskOnly, .layer()])
    func canonicallyEquivalentKeysAreOneCollection(memory: Fixture.Memory) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: memory)
        try cache.cacheItems([Plain(value: 1)], forKey: "caf\u{e9}")
        try cache.cacheItems([Plain(value: 2)], forKey: "cafe\u{301}")
        #expect(try cache.getCachedItems(Plain.self, forKey: "caf\u{e9}") == [Plain(value: 2)])
        try cache.flush()
        #expect(fixture.allFiles().count == 1)
    }

    @Test func removeItemsRemovesOneCollection() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        try cache.cacheItems(MenuItem.sampleMenu(count: 2), forKey: "k")
        try cache.removeItems(MenuItem.self)
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "k") != nil)
        try cache.removeItems(MenuItem.self, forKey: "k")
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "k") == nil)
        // Removing what is not there is fine.
        try cache.removeItems(MenuItem.self, forKey: "never cached")
    }

    // Checks an archive file's permissions: each collection a file of its own.
    @Test func filesAndDirectoriesAreOwnerOnly() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let root = fixture.root.appending(path: "nested/cache")
        var configuration = fixture.configuration()
        configuration.rootDirectory = root
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        let layout = CacheLayout(rootDirectory: root, schemaVersion: "1")
        for directory in [layout.rootPath, layout.versionPath, layout.userPath("alice")] {
            #expect(try permissions(ofItemAt: directory) == 0o700, "\(directory)")
        }
        let archive = layout.absolutePath(layout.archivePath(for: ArchiveKey(user: "alice", cacheName: "MenuItems", key: nil)))
        #expect(try permissions(ofItemAt: archive) == 0o600)
        #expect(try permissions(ofItemAt: layout.versionPath + "/.lock") == 0o600)
    }

    /// `init` makes the root and the version directory, so a root that cannot be used fails
    /// there, not at a later flush; user directories wait for their first write.
    @Test func openingCreatesTheRootAndTheVersionDirectory() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.rootDirectory = fixture.root.appending(path: "later/cache")
        let cache = try AppCache(configuration: configuration)
        #expect(FileManager.default.fileExists(atPath: fixture.rootPath + "/later/cache/version-1"))
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/later/cache/version-1/user-alice"))
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        #expect(FileManager.default.fileExists(atPath: fixture.rootPath + "/later/cache/version-1/user-alice"))
    }

    @Test func defaultRootIsTheCachesDirectory() {
        let configuration = AppCache.Configuration(schemaVersion: "1")
        #expect(configuration.rootDirectory.lastPathComponent == "AppCache")
        #expect(configuration.user == nil)
    }
}

struct CacheableModelTests {
    @Test func defaultsComeFromTheTypeName() {
        #expect(MenuItem.cacheName == "MenuItems")
        #expect(Plain.cacheName == "Plains")
        #expect(Plain.schemaVersion == 1)
        #expect(Plain.stalenessThreshold == nil)
        #expect(Headline.stalenessThreshold == .seconds(30))
    }
}
