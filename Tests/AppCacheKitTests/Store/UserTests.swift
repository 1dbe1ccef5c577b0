import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Each user's collections live apart.
struct UserTests {
    @Test func usersNeverSeeEachOthersItems() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: "alice")
        try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: 1))
        try cache.switchUser(to: "bob")
        #expect(cache.user == "bob")
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(cache.isStale(MenuItem.self))
        try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: 2))
        try cache.switchUser(to: nil)
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        try cache.cacheItems(MenuItem.sampleMenu(count: 4, seed: 3))
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2, seed: 1))
        try cache.switchUser(to: "bob")
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3, seed: 2))
        try cache.switchUser(to: nil)
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 4, seed: 3))
    }

    @Test func awkwardUserIdsAreSeparateDirectoriesInsideTheVersion() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: nil)
        let users = Array(Set(FileNameTests.awkward).subtracting([""]))  // as Swift compares them; "" is no user
        for (index, user) in users.enumerated() {
            try cache.switchUser(to: user)
            try cache.cacheItems([Plain(value: index)])
        }
        for (index, user) in users.enumerated() {
            try cache.switchUser(to: user)
            #expect(try cache.getCachedItems(Plain.self) == [Plain(value: index)], "\(user)")
        }
        let directories = try FileManager.default.contentsOfDirectory(atPath: fixture.rootPath + "/version-1").filter { !$0.hasPrefix(".") }
        #expect(directories.count == users.count)
        #expect(Set(directories.map { $0.lowercased() }).count == users.count)
        #expect(directories.allSatisfy { $0.hasPrefix("user-") })
    }

    // Looks at archive files: each collection a file of its own.
    /// A user directory's name may be hashed, but every archive names its user, so a tool
    /// listing the cache can tell whose data it is.
    @Test func archivesNameTheirUser() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let longUser = String(repeating: "ü", count: 1000)
        let cache = try fixture.openCache(user: longUser)
        try cache.cacheItems([Plain(value: 1)], forKey: "k")
        let path = fixture.archivePath(Plain.self, key: "k", user: longUser)
        let bytes = try Data(contentsOf: URL(filePath: path))
        let header = try bytes.withUnsafeBytes { try ArchiveHeader.parse($0) }.header
        #expect(header.user == longUser)
        #expect(header.cacheName == "Plains")
        #expect(header.key == "k")
    }

    @Test func removeAllRemovesOnlyTheCurrentUser() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(user: "alice")
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        try cache.cacheItems([Plain(value: 1)], forKey: "x")
        try cache.switchUser(to: "bob")
        try cache.cacheItems(MenuItem.sampleMenu(count: 3))
        try cache.switchUser(to: "alice")
        try cache.removeAll()
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(try cache.getCachedItems(Plain.self, forKey: "x") == nil)
        try cache.switchUser(to: "bob")
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3))
        cache.store.waitForBackgroundWork()  // the removal's trash is deleted on the write-back thread
        #expect(fixture.allFiles().allSatisfy { $0.hasPrefix("version-1/user-bob/") })
        // Writing after a wipe works, and wiping an empty user is fine.
        try cache.switchUser(to: "alice")
        try cache.removeAll()
        try cache.cacheItems([Plain(value: 2)])
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 2)])
    }

    @Test func cachesOpenedForDifferentUsersShareTheRootSafely() throws {
        let fixture = try Fixture()
        let alice = try fixture.openCache(user: "alice")
        let bob = try fixture.openCache(user: "bob")
        try alice.cacheItems([Plain(value: 1)])
        try bob.cacheItems([Plain(value: 2)])
        #expect(try alice.getCachedItems(Plain.self) == [Plain(value: 1)])
        #expect(try bob.getCachedItems(Plain.self) == [Plain(value: 2)])
    }
}
