import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// Paged collections: a first page with its cursor, next pages appended (replacing items of the
/// same id, trimmed to a maximum), the cursor kept across relaunches, one fetch for concurrent
/// calls, a refresh dropping later pages, and each page bound to the user who asked for it.
@Suite struct PagesTests {
    struct Post: CacheableModel, Identifiable, Equatable {
        var id: Int
        var title: String
        static var cacheName: String { "Posts" }
    }

    static func posts(_ ids: [Int], _ title: String = "t") -> [Post] { ids.map { Post(id: $0, title: title) } }

    /// Counts page fetches and answers the scripted pages by cursor, optionally after a gate.
    final class Pages: Sendable {
        private let state = Locked<(fetches: Int, cursors: [String])>((0, []))
        let pages: [String: Page<Post>]
        let gate: Gate?

        init(_ pages: [String: Page<Post>], gated: Bool = false) {
            self.pages = pages
            gate = gated ? Gate() : nil
        }

        var fetches: Int { state.withLock { $0.fetches } }
        var cursors: [String] { state.withLock { $0.cursors } }

        var fetch: @Sendable (String) async throws -> Page<Post> {
            { [self] cursor in
                state.withLock { state in
                    state.fetches += 1
                    state.cursors.append(cursor)
                }
                await gate?.wait()
                guard let page = pages[cursor] else { throw FakeServer.TestFailure(reason: "no page \(cursor)") }
                return page
            }
        }
    }

    func firstPage(_ cache: AppCache, _ ids: [Int], next: String?, key: String = "timeline") async throws {
        let (answers, error) = await collect(cache.load(Post.self, forKey: key, policy: .fetchFirst, retry: .none) { _ in
            .page(Self.posts(ids), next: next)
        })
        #expect(error == nil)
        #expect(answers.last?.items.map(\.id) == ids)
    }

    @Test func pagesAppendReplaceByIdAndTheCursorSurvivesARelaunch() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try await firstPage(cache, [1, 2], next: "c2")
        #expect(cache.hasNextPage(Post.self, forKey: "timeline"))
        let cachedDate = try #require(try cache.cachedCollection(Post.self, forKey: "timeline")).cachedDate

        let pages = Pages([
            "c2": Page(items: [Post(id: 2, title: "edited"), Post(id: 3, title: "t")], next: "c3"),
            "c3": Page(items: Self.posts([4]), next: nil),
        ])
        fixture.clock.advance(by: .seconds(5))
        let second = try await cache.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch)
        #expect(second.items == [Post(id: 1, title: "t"), Post(id: 2, title: "edited"), Post(id: 3, title: "t")])
        #expect(second.source == .fetch)
        #expect(second.cachedDate == cachedDate, "staleness stays the first page's")
        try cache.flush()

        // A relaunch goes on from the stored cursor.
        let relaunched = try fixture.openCache()
        #expect(relaunched.hasNextPage(Post.self, forKey: "timeline"))
        let third = try await relaunched.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch)
        #expect(third.items.map(\.id) == [1, 2, 3, 4])
        #expect(!relaunched.hasNextPage(Post.self, forKey: "timeline"), "the last page says so")
        #expect(pages.cursors == ["c2", "c3"])

        // At the end: nothing fetched, a clear error.
        await #expect(throws: AppCacheError.self) {
            _ = try await relaunched.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch)
        }
        do {
            _ = try await relaunched.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch)
        } catch let error as AppCacheError {
            #expect(error.code == .noNextPage)
        }
        #expect(pages.fetches == 2)
        #expect(try fixture.openCache().getCachedItems(Post.self, forKey: "timeline")?.map(\.id) == [1, 2, 3, 4])
    }

    @Test func nothingCachedHasNoNextPage() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        #expect(!cache.hasNextPage(Post.self))
        let pages = Pages([:])
        do {
            _ = try await cache.loadNextPage(Post.self, retry: .none, fetch: pages.fetch)
            Issue.record("no error")
        } catch let error as AppCacheError {
            #expect(error.code == .noNextPage)
        }
        // A plain write has no cursor either.
        try cache.cacheItems(Self.posts([1]))
        #expect(!cache.hasNextPage(Post.self))
        #expect(pages.fetches == 0)
    }

    @Test func maxCountKeepsTheFirstItems() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try await firstPage(cache, [1, 2, 3], next: "c")
        let pages = Pages(["c": Page(items: Self.posts([4, 5, 6]), next: "d")])
        let all = try await cache.loadNextPage(Post.self, forKey: "timeline", maxCount: 4, retry: .none, fetch: pages.fetch)
        #expect(all.items.map(\.id) == [1, 2, 3, 4])
        #expect(cache.hasNextPage(Post.self, forKey: "timeline"))
    }

    @Test func twoCallsAtOnceFetchOnce() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try await firstPage(cache, [1], next: "c")
        let pages = Pages(["c": Page(items: Self.posts([2]), next: nil)], gated: true)
        async let first = cache.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch)
        async let second = cache.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch)
        #expect(await eventually { pages.fetches == 1 })
        pages.gate?.open()
        let results = try await [first, second]
        #expect(results.map { $0.items.map(\.id) } == [[1, 2], [1, 2]])
        #expect(pages.fetches == 1)
    }

    @Test func aRefreshDropsLaterPagesAndAPageItSupersededIsNotAppended() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try await firstPage(cache, [1], next: "c")
        let pages = Pages(["c": Page(items: Self.posts([2]), next: "d")], gated: true)
        let pending = Task { try await cache.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch) }
        #expect(await eventually { pages.fetches == 1 })

        // The first page is refreshed meanwhile: later pages go, its own cursor is stored.
        try await firstPage(cache, [9], next: "n9")
        pages.gate?.open()
        let result = try await pending.value
        #expect(result.items.map(\.id) == [9], "the page fetched for the old cursor is dropped")
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline")?.map(\.id) == [9])
        #expect(cache.hasNextPage(Post.self, forKey: "timeline"))
    }

    @Test func aPageIsNeverAppendedToAnotherUsersCollection() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try await firstPage(cache, [1], next: "c")
        try cache.switchUser(to: "bob")
        try await firstPage(cache, [7], next: "c")  // bob's timeline, with the same cursor
        try cache.switchUser(to: "alice")
        let pages = Pages(["c": Page(items: Self.posts([2]), next: nil)], gated: true)
        let pending = Task { try await cache.loadNextPage(Post.self, forKey: "timeline", retry: .none, fetch: pages.fetch) }
        #expect(await eventually { pages.fetches == 1 })
        try cache.switchUser(to: "bob")
        pages.gate?.open()
        let result = await pending.result
        #expect((try? result.get()) == nil || (try? result.get())?.items.map(\.id) == [7])
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline")?.map(\.id) == [7], "bob's timeline untouched")
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline")?.map(\.id) == [1], "dropped, as an update for a user no longer current")
    }
}
