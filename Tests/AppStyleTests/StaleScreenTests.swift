import AppCacheKit
import Foundation
import Testing

// What an app's own tests of a screen look like: the public API and the testing kit only (no
// `@testable`, no internal hooks), the way ``TestingYourAppsCaching`` tells apps to write them.

/// The app's model.
struct Post: CacheableModel, Equatable, Identifiable {
    var id: Int
    var title: String

    /// The feed is worth refetching after ten minutes.
    static var stalenessThreshold: Duration? { .seconds(600) }
}

/// The app's backend, faked: answers what the test says and counts the requests.
actor FakeServer {
    struct Offline: Error, Equatable {}

    private(set) var requests = 0
    private var answer: Result<[Post], Offline>

    init(posts: [Post]) {
        answer = .success(posts)
    }

    func answer(with posts: [Post]) { answer = .success(posts) }
    func goOffline() { answer = .failure(Offline()) }

    func topPosts() throws(Offline) -> [Post] {
        requests += 1
        return try answer.get()
    }
}

/// The app's feed screen: shows what is cached at once and refetches when it is stale.
@MainActor
final class FeedScreen {
    private(set) var posts: [Post] = []
    /// What the screen tells the user when the feed could not be refreshed.
    private(set) var error: (any Error)?

    private let cache: AppCache
    private let server: FakeServer

    init(cache: AppCache, server: FakeServer) {
        self.cache = cache
        self.server = server
    }

    /// What the screen's `.task` runs each time it appears.
    func appear() async {
        let server = server
        let feed = cache.load(Post.self, forKey: "top") { _ in .items(try await server.topPosts()) }
        do {
            for try await loaded in feed {
                posts = loaded.items
                error = loaded.refreshError
            }
        } catch {
            self.error = error
        }
    }
}

@MainActor
struct StaleScreenTests {
    let clock = CacheClock()
    /// The app's cache as a test opens it: the testing preset, in memory (no files), on the
    /// test's clock. Every cache opened with it shares one store, as launches share a disk.
    let configuration: AppCache.Configuration
    let cached = [Post(id: 1, title: "cached")]
    let newer = [Post(id: 2, title: "newer"), Post(id: 1, title: "cached")]

    init() {
        configuration = .inMemory(clock: clock)
    }

    func openCache() throws -> AppCache {
        try AppCache(configuration: configuration)
    }

    /// A first launch fetched the feed: it is cached, `server` answered once.
    func launchedOnce(_ server: FakeServer) async throws -> AppCache {
        let cache = try openCache()
        let screen = FeedScreen(cache: cache, server: server)
        await screen.appear()
        #expect(screen.posts == cached)
        #expect(await server.requests == 1, "nothing was cached: one fetch")
        await cache.idle()
        return cache
    }

    @Test func aFreshFeedIsShownFromTheCacheWithoutAFetch() async throws {
        let server = FakeServer(posts: cached)
        let cache = try await launchedOnce(server)
        await server.answer(with: newer)

        clock.advance(by: .seconds(599))
        let screen = FeedScreen(cache: cache, server: server)
        await screen.appear()
        #expect(screen.posts == cached)
        #expect(screen.error == nil)
        #expect(await server.requests == 1, "fresh: no fetch")

        // The cache opened again, as the next launch does: still fresh, still no fetch.
        let relaunched = FeedScreen(cache: try openCache(), server: server)
        await relaunched.appear()
        #expect(relaunched.posts == cached)
        #expect(await server.requests == 1)
    }

    @Test func aStaleFeedIsShownAgainAfterOneRefetch() async throws {
        let server = FakeServer(posts: cached)
        let cache = try await launchedOnce(server)
        await server.answer(with: newer)

        clock.advance(by: .seconds(601))
        let screen = FeedScreen(cache: cache, server: server)
        await screen.appear()
        #expect(screen.posts == newer)
        #expect(screen.error == nil)
        #expect(await server.requests == 2, "stale: one refetch")

        // What it fetched is cached for the next launch, fresh again.
        await cache.idle()
        let relaunched = FeedScreen(cache: try openCache(), server: server)
        await relaunched.appear()
        #expect(relaunched.posts == newer)
        #expect(await server.requests == 2)
    }

    @Test func aFailedRefetchKeepsTheCachedFeedShownWithTheErrorAndIsNotRetried() async throws {
        let server = FakeServer(posts: cached)
        let cache = try await launchedOnce(server)
        await server.goOffline()

        clock.advance(by: .seconds(601))
        let screen = FeedScreen(cache: cache, server: server)
        await screen.appear()
        #expect(screen.posts == cached, "the cached feed stays")
        #expect(screen.error as? FakeServer.Offline == FakeServer.Offline())
        #expect(await server.requests == 2, "one refetch, which failed")

        // No retry waits for the clock (the testing preset turns retries off).
        await cache.idle()
        #expect(clock.waitingTimers == 0)
        clock.advance(by: .seconds(3600))
        await cache.idle()
        #expect(await server.requests == 2)
        #expect(try cache.getCachedItems(Post.self, forKey: "top") == cached, "the failure removed nothing")
    }
}
