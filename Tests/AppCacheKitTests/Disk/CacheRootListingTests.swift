import Foundation
import Testing
@testable import AppCacheKit

struct CacheRootListingTests {
    // Lists archive files by their names: each collection a file of its own.
    @Test func readsNamesFromHeadersEvenWhenFileNamesAreHashed() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let longUser = String(repeating: "ü", count: 300)
        let cache = try fixture.openCache(user: longUser)
        try cache.cacheItems([Plain(value: 1)], forKey: String(repeating: "k", count: 500))
        try cache.switchUser(to: nil)
        try cache.cacheItems([Plain(value: 2)])
        let listing = try CacheRootListing.read(root: fixture.root)
        #expect(listing.schemaVersions == ["1"])
        #expect(Set(listing.users) == [longUser, nil])
        #expect(listing.archives.contains { $0.user == longUser && $0.key == String(repeating: "k", count: 500) })
        #expect(listing.archives.allSatisfy { $0.checksumVerified == nil && $0.cacheName == "Plains" })
        #expect(listing.unreadable.isEmpty)
    }

    // Plants files beside archive files: each collection a file of its own.
    @Test func reportsFilesThatAreNotArchivesWithoutTouchingThem() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache().cacheItems([Plain(value: 1)])
        let junk = fixture.layout().userPath("alice") + "/junk.archive"
        try Data("junk".utf8).write(to: URL(filePath: junk))
        let listing = try CacheRootListing.read(root: fixture.root, verifyChecksums: true)
        #expect(listing.archives.count == 1)
        #expect(listing.archives.first?.checksumVerified == true)
        #expect(listing.unreadable.map(\.path) == [junk])
        #expect(FileManager.default.fileExists(atPath: junk))
    }

    // Plants files where archive files go: each collection a file of its own.
    @Test func aDirectoryWithoutVersionsIsNotACache() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        #expect(expectAppCacheError { _ = try CacheRootListing.read(root: fixture.root) }?.code == .notACache)
        let file = fixture.root.appending(path: "file")
        try Data().write(to: file)
        #expect(expectAppCacheError { _ = try CacheRootListing.read(root: file) }?.code == .notACache)
    }
}
