import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// Invalidation marks collections stale without removing their items, for the current user,
/// on disk (a relaunch and another instance see it) and in memory, until they are written again.
@Suite struct InvalidationTests {
    @Test func anInvalidatedCollectionIsStaleEverywhereUntilWrittenAgain() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(1)], forKey: "top")
        try cache.cacheItems([Note.make(2)], forKey: "other")
        fixture.clock.advance(by: .seconds(1))
        #expect(!cache.isStale(Note.self, forKey: "top"))

        try cache.invalidate(Note.self, forKey: "top")
        #expect(cache.isStale(Note.self, forKey: "top"))
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == [Note.make(1)], "items stay")
        #expect(try cache.cachedCollection(Note.self, forKey: "top")?.isStale == true)
        #expect(try await cache.entries().first { $0.key == "top" }?.isStale == true)
        #expect(!cache.isStale(Note.self, forKey: "other"), "only that collection")

        // The next load fetches (a moment later: a write in the very millisecond of an
        // invalidation counts as before it).
        fixture.clock.advance(by: .milliseconds(5))
        let server = FakeServer(answer: .items([Note.make(3)], etag: nil))
        let (answers, _) = await collect(cache.load(Note.self, forKey: "top", retry: .none, fetch: server.fetch))
        #expect(server.fetches == 1)
        #expect(answers.map(\.isStale) == [true, false])

        // Written again: fresh; another instance and a relaunch agree.
        #expect(!cache.isStale(Note.self, forKey: "top"))
        try cache.invalidate(Note.self, forKey: "other")
        try cache.flush()
        let other = try fixture.openCache()
        #expect(other.isStale(Note.self, forKey: "other"))
        #expect(!other.isStale(Note.self, forKey: "top"))
        #expect(try other.getCachedItems(Note.self, forKey: "other") == [Note.make(2)])
    }

    @Test func prefixesTheDefaultCollectionAndEveryCollection() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        for key in ["feed/a", "feed/b", "profile", nil] as [String?] { try cache.cacheItems([Note.make(1)], forKey: key) }
        try cache.cacheItems([Plain(value: 1)], forKey: "feed/a")
        fixture.clock.advance(by: .seconds(1))

        try cache.invalidate(Note.self)
        #expect(cache.isStale(Note.self) && !cache.isStale(Note.self, forKey: "profile"), "no key: the default collection only")

        try cache.invalidate(Note.self, keyPrefix: "feed/")
        #expect(cache.isStale(Note.self, forKey: "feed/a") && cache.isStale(Note.self, forKey: "feed/b"))
        #expect(!cache.isStale(Note.self, forKey: "profile"))
        #expect(!cache.isStale(Plain.self, forKey: "feed/a"), "of that type only")

        try cache.invalidate(Note.self, keyPrefix: "")
        #expect(cache.isStale(Note.self, forKey: "profile"))
        #expect(!cache.isStale(Plain.self, forKey: "feed/a"))
    }

    @Test func invalidateAllMarksTheCurrentUsersCollectionsOnly() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(1)])
        try cache.cacheItems([Plain(value: 1)], forKey: "x")
        try cache.switchUser(to: "bob")
        try cache.cacheItems([Note.make(2)])
        try cache.switchUser(to: "alice")
        fixture.clock.advance(by: .seconds(1))

        try cache.invalidateAll()
        #expect(cache.isStale(Note.self) && cache.isStale(Plain.self, forKey: "x"))
        try cache.switchUser(to: "bob")
        #expect(!cache.isStale(Note.self), "bob's stay fresh")
    }

    @Test func aReadOnlyCacheCannotInvalidate() throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems([Note.make(1)])
        let cache = try fixture.openCache(faults: { step, _ in step == .openLockFile ? EROFS : nil })
        #expect(expectAppCacheError { try cache.invalidate(Note.self) }?.code == .permissionDenied)
        #expect(!cache.isStale(Note.self))
    }

    @Test func theLogIsReadAsUntrustedBytes() {
        var log = InvalidationLog()
        log.add(.init(userDirectory: "user-a", cacheName: "Notes\twith tab", key: .exactly("k\\n\n"), milliseconds: 5))
        log.add(.init(userDirectory: "user-a", cacheName: nil, key: .prefix("feed/"), milliseconds: 6))
        log.add(.init(userDirectory: "shared", cacheName: "Notes", key: .defaultCollection, milliseconds: 7))
        #expect(InvalidationLog(decoding: log.encoded()) == log)
        let hostile = "../x\tNotes\t=\tk\t1\nuser-a\tNotes\t?\tk\t1\nuser-a\tNotes\t=\tbad\\q\t1\nuser-a\tNotes\t=\tk\tsoon\n"
        #expect(InvalidationLog(decoding: Data(hostile.utf8)).records.isEmpty)
        #expect(InvalidationLog(decoding: Data(count: InvalidationLog.maximumSize + 1)).records.isEmpty)

        // Past the capacity the oldest merge into one record per user: more stale, never less.
        var full = InvalidationLog()
        for index in 0..<(InvalidationLog.capacity + 3) {
            full.add(.init(userDirectory: "user-a", cacheName: "Notes", key: .exactly("k\(index)"), milliseconds: Int64(index)))
        }
        #expect(full.records.count <= InvalidationLog.capacity)
        #expect(Staleness.invalidates(full.latestInvalidation(of: ArchiveKey(user: "a", cacheName: "Notes", key: "k0")), cachedAt: Date(timeIntervalSince1970: 0)))
    }
}
