import Foundation
import Testing

@testable import AppCacheKit

/// Writes by id: one item changed, replaced or removed in every collection of the user that
/// holds it, each atomically and keeping what a local edit keeps, found through the id index
/// rather than by decoding every collection of the type.
@Suite struct ItemWritesTests {
    static let timeline = (1...5).map { Post(id: $0, author: $0.isMultiple(of: 2) ? "bo" : "ann") }

    /// The social app's lists: the timeline (a page with a cursor and validators), ann's
    /// profile, the bookmarks, one post's detail, and a list without post 3.
    func cacheLists(_ cache: AppCache) throws {
        try cache.cacheItems(Self.timeline, forKey: "timeline")
        try cache.updateItems(Post.self, forKey: "timeline") { _ in }
        try cache.cacheItems(Self.timeline.filter { $0.author == "ann" }, forKey: "profile-ann")
        try cache.cacheItems([Self.timeline[2], Self.timeline[3]], forKey: "bookmarks")
        try cache.cacheItems([Self.timeline[2]], forKey: "post-3")
        try cache.cacheItems([Self.timeline[1]], forKey: "post-2")
    }

    // Looks at archive files: each collection a file of its own.
    @Test func updateItemChangesEveryCollectionHoldingTheItemAndNoOther() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cacheLists(cache)
        try cache.pin(Post.self, forKey: "bookmarks")
        let before = try #require(try cache.cachedCollection(Post.self, forKey: "timeline"))
        let untouched = try FileManager.default.attributesOfItem(atPath: fixture.archivePath(Post.self, key: "post-2"))[.modificationDate] as? Date
        fixture.clock.advance(by: .seconds(600))
        let timeline = StreamRecorder(cache.updates(Post.self, forKey: "timeline"))
        let other = StreamRecorder(cache.updates(Post.self, forKey: "post-2"))
        #expect(await eventually { timeline.seen.count == 1 && other.seen.count == 1 })

        let changed = try cache.updateItem(Post.self, id: 3) { $0.isLiked = true }

        #expect(changed == 4, "timeline, profile, bookmarks and the detail hold post 3")
        for key in ["timeline", "profile-ann", "bookmarks", "post-3"] {
            let items = try #require(try cache.getCachedItems(Post.self, forKey: key))
            #expect(items.first { $0.id == 3 }?.isLiked == true, "\(key)")
            #expect(items.filter { $0.id != 3 }.allSatisfy { !$0.isLiked }, "\(key): no other item changed")
        }
        let after = try #require(try cache.cachedCollection(Post.self, forKey: "timeline"))
        #expect(after.cachedDate == before.cachedDate, "a local edit keeps the cached date")
        #expect(try await cache.entries().first { $0.key == "bookmarks" }?.isPinned == true, "and the pin")
        let date = try FileManager.default.attributesOfItem(atPath: fixture.archivePath(Post.self, key: "post-2"))[.modificationDate] as? Date
        #expect(date == untouched, "a list without the item is not written")
        #expect(try cache.getCachedItems(Post.self, forKey: "post-2") == [Self.timeline[1]])
        #expect(await eventually { timeline.seen.count == 2 })
        #expect(timeline.last??.first { $0.id == 3 }?.isLiked == true)
        // The updates stream of the timeline saw one change; the other list's none. Another
        // change afterwards reaches the other list's stream, which proves it was listening.
        try cache.cacheItems([Post(id: 2, title: "new")], forKey: "post-2")
        #expect(await eventually { other.seen.count == 2 })
        #expect(timeline.seen.count == 2, "the timeline's stream yielded once")
    }

    @Test func aCollectionKeepsItsCursorValidatorsAndExpiry() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let (answers, _) = await collect(cache.load(Post.self, forKey: "timeline", retry: .none) { _ in
            .page(Self.timeline, next: "cursor-2", validators: CacheValidators(etag: "e1"))
        })
        #expect(answers.last?.items == Self.timeline)
        try cache.cacheItems([Self.timeline[0]], forKey: "short", expiresAfter: .seconds(60))
        #expect(try cache.updateItem(Post.self, id: 1) { $0.title = "edited" } == 2)
        #expect(cache.hasNextPage(Post.self, forKey: "timeline"))
        let switches = cache.store.state.withLock { $0.sessions.switches }
        #expect(try cache.queries.readForLoad(Post.self, key: "timeline", switches: switches)?.stored.validators?.etag == "e1")
        fixture.clock.advance(by: .seconds(61))
        #expect(try cache.getCachedItems(Post.self, forKey: "short") == nil, "the expiry stayed")
    }

    @Test func replaceItemUpsertsWherePresentAndRemoveItemRemovesEverywhere() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cacheLists(cache)
        var fresh = Post(id: 3, title: "From the server")
        fresh.likes = 42
        #expect(try cache.replaceItem(fresh) == 4)
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == Post.changing(Self.timeline, 3) { $0 = fresh })
        #expect(try cache.getCachedItems(Post.self, forKey: "post-2") == [Self.timeline[1]], "not added where it was not")
        #expect(try cache.replaceItem(Post(id: 99)) == 0, "an item no list holds changes nothing")

        #expect(try cache.removeItem(Post.self, id: 3) == 4)
        for key in ["timeline", "profile-ann", "bookmarks", "post-3"] {
            #expect(try cache.getCachedItems(Post.self, forKey: key)?.contains { $0.id == 3 } == false, "\(key)")
        }
        #expect(try cache.getCachedItems(Post.self, forKey: "post-3") == [], "the collection stays, empty")
        #expect(try cache.removeItem(Post.self, id: 3) == 0)
    }

    @Test func theIndexFollowsThisProcessesWritesAndAnotherProcesses() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cacheLists(cache)
        #expect(try cache.updateItem(Post.self, id: 1) { $0.likes = 1 } == 2, "timeline and ann's profile")
        // This process's writes keep the index: a list now holding post 1, one no longer.
        try cache.cacheItems([Post(id: 1)], forKey: "post-1")
        try cache.cacheItems([Post(id: 5)], forKey: "profile-ann")
        #expect(try cache.updateItem(Post.self, id: 1) { $0.likes = 2 } == 2, "timeline and the new detail")
        #expect(try cache.getCachedItems(Post.self, forKey: "profile-ann") == [Post(id: 5)])

        // Another process (a second cache on the root stands for it) adds a list with post 1
        // and drops it from the timeline.
        let other = try fixture.openCache()
        try other.cacheItems([Post(id: 1), Post(id: 9)], forKey: "search")
        try other.cacheItems([Post(id: 2)], forKey: "timeline")
        #expect(try cache.updateItem(Post.self, id: 1) { $0.likes = 3 } == 2, "the detail and the other process's list")
        #expect(try other.getCachedItems(Post.self, forKey: "search")?.first?.likes == 3)
        #expect(try other.getCachedItems(Post.self, forKey: "timeline") == [Post(id: 2)])
    }

    @Test func aWriteByIdReadsOnlyTheCollectionsThatChangedOnceTheIndexIsBuilt() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        // 40 lists of 5 posts each; post 7 is in 2 of them.
        for list in 0..<40 {
            let ids = list < 2 ? [7] + (1...4).map { 1_000 + list * 10 + $0 } : (1...5).map { 1_000 + list * 10 + $0 }
            try cache.cacheItems(ids.map { Post(id: $0) }, forKey: "list-\(list)")
        }
        let counter = Locked(0)
        func decodes(_ body: () throws -> Int) throws -> (changed: Int, decoded: Int) {
            counter.withLock { $0 = 0 }
            let changed = try Post.$decodes.withValue(counter) { try body() }
            return (changed, counter.withLock { $0 })
        }
        let first = try decodes { try cache.updateItem(Post.self, id: 7) { $0.likes = 1 } }
        #expect(first.changed == 2)
        #expect(first.decoded >= 200, "the first write by id builds the index: every list read once")
        let second = try decodes { try cache.updateItem(Post.self, id: 7) { $0.likes = 2 } }
        #expect(second.changed == 2)
        #expect(second.decoded == 10, "then only the two lists holding the post are read (5 posts each)")
        // Another process rewrites one list: only that one is read again.
        try fixture.openCache().cacheItems([Post(id: 7), Post(id: 8)], forKey: "list-39")
        let third = try decodes { try cache.updateItem(Post.self, id: 7) { $0.likes = 3 } }
        #expect(third.changed == 3)
        #expect(third.decoded == 2 + 10 + 2, "the changed list to index it, then the three holding the post")
    }

    @Test func aChangeMayCallBackIntoTheCache() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cacheLists(cache)
        var seen: [Int] = []
        let changed = try cache.updateItem(Post.self, id: 3) { post in
            // Reads and a write of another collection, from inside the change: no lock is held.
            seen.append(try cache.getCachedItems(Post.self, forKey: "timeline")?.count ?? -1)
            try cache.cacheItems([Post(id: 50)], forKey: "side-\(seen.count)")
            post.likes = 7
        }
        #expect(changed == 4 && seen == [5, 5, 5, 5])
        #expect(try cache.getCachedItems(Post.self, forKey: "side-4") == [Post(id: 50)])
        // A write by id of the same item from inside one is refused, not left to undo it.
        do {
            try cache.updateItem(Post.self, id: 3) { _ in _ = try cache.updateItem(Post.self, id: 3) { $0.likes = 0 } }
            Issue.record("the nested write by id was not refused")
        } catch let error as AppCacheError {
            #expect(error.code == .nestedUpdate)
        }
        #expect(try cache.getCachedItems(Post.self, forKey: "post-3")?.first?.likes == 7)
    }

    @Test func aSessionsWriteLandsInItsUsersSpace() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cacheLists(cache)
        let alice = cache.session
        try cache.switchUser(to: "bob")
        try cache.cacheItems([Post(id: 3)], forKey: "timeline")
        #expect(try cache.updateItem(Post.self, id: 3, for: alice) { $0.isLiked = true } == 4)
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == [Post(id: 3)], "bob's list is not alice's")
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Post.self, forKey: "post-3")?.first?.isLiked == true)
        try cache.removeUser("alice")
        #expect(try cache.updateItem(Post.self, id: 3, for: alice) { $0.isLiked = false } == 0, "dropped once her data is gone")
    }
}
