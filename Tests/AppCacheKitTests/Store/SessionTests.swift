import Foundation
import Testing
@testable import AppCacheKit

/// Writes bound to the user they began for, sign-out, single values, atomic updates and
/// pinning on write.
struct SessionTests {
    let notes = [Note.make(1), Note.make(2)]

    @Test(arguments: [true, false])
    func aBoundWriteLandsInItsUsersSpaceWhoeverIsCurrent(writeBack: Bool) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: writeBack ? .layer(writeBackDelay: nil) : .diskOnly)
        let session = cache.session
        #expect(session.user == "alice")
        try cache.switchUser(to: "bob")
        #expect(try cache.cacheItems(notes, forKey: "feed", for: session))
        #expect(try cache.getCachedItems(Note.self, forKey: "feed") == nil, "never in bob's space")
        #expect(fixture.hasArchive(Note.self, key: "feed", user: "alice"), "written at once, not kept in memory")
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Note.self, forKey: "feed") == notes)
        #expect(try cache.cacheItems([Note.make(3)], forKey: "feed", for: session), "switching away and back removes nothing")
        #expect(try cache.getCachedItems(Note.self, forKey: "feed") == [Note.make(3)])
    }

    @Test(arguments: ["signOut", "removeUser", "removeAllUsers", "removeAll"])
    func aBoundWriteForARemovedUserIsDropped(removal: String) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let session = cache.session
        switch removal {
        case "signOut": try cache.signOut(removingData: true)
        case "removeUser": try cache.removeUser("alice")
        case "removeAllUsers": try cache.removeAllUsers()
        default: try cache.removeAll()
        }
        #expect(try cache.cacheItems(notes, for: session) == false)
        try cache.flush()
        #expect(!fixture.hasArchive(Note.self, user: "alice"))
        #expect(try cache.getCachedItems(Note.self) == nil)

        // A session taken now holds again.
        try cache.switchUser(to: "alice")
        #expect(try cache.cacheItems(notes, for: cache.session))
        #expect(try cache.getCachedItems(Note.self) == notes)
    }

    @Test func signingOutKeepingDataWritesWhatWasDirty() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems(notes)
        #expect(!fixture.hasArchive(Note.self))
        try cache.signOut(removingData: false)
        #expect(cache.user == nil)
        cache.store.waitForBackgroundWork()
        #expect(fixture.hasArchive(Note.self, user: "alice"))
        #expect(try cache.getCachedItems(Note.self) == nil)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func signingOutRemovingDataWritesNothingOfTheirsFirst() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let recorded = Locked<[String]>([])
        var configuration = fixture.configuration(memory: .layer(writeBackDelay: nil))
        configuration.faults = { operation, path in
            if operation == .rename, path.hasSuffix(".archive") { recorded.withLock { $0.append(path) } }
            return nil
        }
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems(notes)
        try cache.signOut(removingData: true)
        let writes = recorded.withLock { $0 }
        #expect(writes.isEmpty, "the dirty collection was dropped, not written: \(writes)")
        #expect(cache.user == nil)
        cache.store.waitForBackgroundWork()  // background removals and user records land first
        #expect(fixture.allFiles().isEmpty)

        try cache.cacheItems(notes)
        try cache.flush()
        #expect(fixture.archiveExists(Note.self, user: nil), "the next write lands in the signed-out space")
        try cache.signOut(removingData: true)
        #expect(fixture.archiveExists(Note.self, user: nil), "signing out when signed out removes nothing")
    }

    @Test func removingTheCurrentUserSignsOut() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(notes)
        try cache.removeUser("bob")
        #expect(cache.user == "alice", "removing another user leaves the current one")
        try cache.removeUser("alice")
        #expect(cache.user == nil)
        try cache.cacheItems(notes)
        #expect(!fixture.hasArchive(Note.self, user: "alice"), "a following write cannot land in the wiped user")
        #expect(fixture.hasArchive(Note.self, user: nil))
    }

    @Test func aSingleValueIsACollectionOfOne() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        #expect(try cache.cachedItem(Note.self, forKey: "me") == nil)
        try cache.cacheItem(Note.make(7), forKey: "me")
        #expect(try cache.cachedItem(Note.self, forKey: "me") == Note.make(7))
        #expect(try cache.getCachedItems(Note.self, forKey: "me") == [Note.make(7)])
        #expect(!cache.isStale(Note.self, forKey: "me"))
        fixture.clock.advance(by: .seconds(3601))
        #expect(cache.isStale(Note.self, forKey: "me"))

        try cache.cacheItem(Note.make(8), forKey: "short", expiresAfter: .seconds(10))
        fixture.clock.advance(by: .seconds(11))
        #expect(try cache.cachedItem(Note.self, forKey: "short") == nil)

        try cache.cacheItems(notes, forKey: "list")
        #expect(try cache.cachedItem(Note.self, forKey: "list") == nil, "a list is not a single value")
        try cache.switchUser(to: "bob")
        #expect(try cache.cachedItem(Note.self, forKey: "me") == nil, "users apart")
    }

    @Test func updatesStartFromNothingAndKeepThePin() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let first = try cache.updateItems(Note.self, forKey: "pages") { $0.append(Note.make(1)) }
        #expect(first == [Note.make(1)])
        try cache.pin(Note.self, forKey: "pages")
        try cache.updateItems(Note.self, forKey: "pages") { $0.append(Note.make(2)) }
        #expect(try cache.getCachedItems(Note.self, forKey: "pages") == [Note.make(1), Note.make(2)])
        #expect(try cache.entries().first { $0.key == "pages" }?.isPinned == true)
    }

    /// `for session:` has one contract on every call: the work lands in that user's space,
    /// current or not, and is dropped only when that user's data was removed since.
    @Test func anUpdateBoundToAUserWhoLeftLandsInTheirSpaceUntilTheirDataIsRemoved() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, forKey: "feed")
        let alice = cache.session
        try cache.switchUser(to: "bob")
        let landed = try cache.updateItems(Note.self, forKey: "feed", for: alice) { $0.append(Note.make(3)) }
        #expect(landed == notes + [Note.make(3)], "alice's feed, with alice's items")
        #expect(try cache.getCachedItems(Note.self, forKey: "feed") == nil, "bob's feed is untouched")

        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Note.self, forKey: "feed") == notes + [Note.make(3)], "alice finds it")

        try cache.signOut(removingData: true)
        try cache.switchUser(to: "alice")
        var called = false
        #expect(try cache.updateItems(Note.self, forKey: "feed", for: alice) { _ in called = true } == nil)
        #expect(!called, "dropped before it reads")
        #expect(try cache.getCachedItems(Note.self, forKey: "feed") == nil, "a logout is not undone")
    }

    /// A load and a watch bound to a session read and store in that user's space while another
    /// user is current, and a page bound to one is dropped (nil) once the user's data went.
    @Test func loadsWatchesAndPagesBoundToASessionLandInThatUsersSpace() async throws {
        let fixture = try Fixture()
        typealias Post = PagesTests.Post
        let posts = PagesTests.posts([1, 2])
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(posts, forKey: "feed")
        let alice = cache.session
        try cache.switchUser(to: "bob")

        var answers: [LoadedItems<Post>] = []
        for try await loaded in cache.load(Post.self, forKey: "feed", policy: .fetchFirst, for: alice, fetch: { context in
            #expect(context.cachedItems == posts, "the fetch sees alice's cached items")
            return .page([Post(id: 7, title: "t")], next: "p2")
        }) {
            answers.append(loaded)
        }
        #expect(answers.map(\.items) == [[Post(id: 7, title: "t")]])
        #expect(try cache.getCachedItems(Post.self, forKey: "feed") == nil, "bob's feed is untouched")

        let page = try await cache.loadNextPage(Post.self, forKey: "feed", for: alice) { cursor in
            #expect(cursor == "p2")
            return Page(items: [Post(id: 8, title: "t")], next: nil)
        }
        #expect(page?.items == [Post(id: 7, title: "t"), Post(id: 8, title: "t")])

        var watched: [[Post]] = []
        for try await loaded in cache.watch(Post.self, forKey: "feed", policy: .cacheFirst, for: alice, fetch: { _ in .notModified }) {
            watched.append(loaded.items)
            break
        }
        #expect(watched == [[Post(id: 7, title: "t"), Post(id: 8, title: "t")]], "the watch shows alice's collection")

        try cache.removeUser("alice")
        let dropped = try await cache.loadNextPage(Post.self, forKey: "feed", for: alice) { _ in
            Issue.record("no fetch for a removed user")
            return Page(items: [], next: nil)
        }
        #expect(dropped == nil)
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Post.self, forKey: "feed") == nil)
    }

    @Test func aFailingTransformCachesNothing() throws {
        struct Refused: Error {}
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(notes)
        #expect(throws: Refused.self) {
            try cache.updateItems(Note.self) { items in
                items.removeAll()
                throw Refused()
            }
        }
        #expect(try cache.getCachedItems(Note.self) == notes)
    }

    @Test(arguments: [true, false])
    func concurrentUpdatesNeverLoseOneAnother(writeBack: Bool) throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: writeBack ? .layer() : .diskOnly)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<25 {
                do {
                    try cache.updateItems(Note.self, forKey: "shared") { $0.append(Note.make(worker * 100 + step)) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let items = try #require(try cache.getCachedItems(Note.self, forKey: "shared"))
        #expect(items.count == 200)
        #expect(Set(items.map(\.id)).count == 200)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    // Counts archive files' renames: each collection a file of its own.
    @Test func aPinnedWriteIsOneWrite() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let renames = Locked(0)
        var configuration = fixture.configuration()
        configuration.faults = { operation, path in
            if operation == .rename, path.hasSuffix(".archive") { renames.withLock { $0 += 1 } }
            return nil
        }
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems(notes, forKey: "saved", expiresAfter: .seconds(10), pinned: true)
        #expect(renames.withLock { $0 } == 1)
        let entry = try #require(try cache.entries().first { $0.key == "saved" })
        #expect(entry.isPinned)
        fixture.clock.advance(by: .seconds(11))
        #expect(try cache.getCachedItems(Note.self, forKey: "saved") == notes, "pinned: the time to live waits")
        try cache.removeExpired()
        #expect(fixture.hasArchive(Note.self, key: "saved"))
    }
}
