import AppCacheKit
import AppCacheTestSupport
import Foundation
import Testing

/// The testing kit as an app's tests use it, through the public API only: a clock the test
/// moves (staleness, retry backoff, polling, write-back follow it), the testing preset,
/// `idle()`, preview data.
@Suite struct TestingKitTests {
    /// What an app's model layer fetches through; counts its fetches, fails when told to.
    final class FakeAPI: @unchecked Sendable {
        private let lock = NSLock()
        private var fetchCount = 0
        private var failures: Int
        init(failures: Int = 0) { self.failures = failures }
        var fetches: Int { lock.withLock { fetchCount } }

        @Sendable func posts(_ context: LoadContext<Post>) async throws -> FetchResult<Post> {
            let fail = lock.withLock { () -> Bool in
                fetchCount += 1
                guard failures > 0 else { return false }
                failures -= 1
                return true
            }
            if fail { throw URLError(.badServerResponse) }
            return .items([Post(id: 1, title: "fresh")])
        }
    }

    /// Each test a directory of its own.
    func directory() throws -> TemporaryDirectory {
        try TemporaryDirectory(prefix: "TestingKitTests")
    }

    @Test func aStaleScreenRefetches() async throws {
        let root = try directory()
        let clock = CacheClock()
        let cache = try AppCache(configuration: .testing(rootDirectory: root.url, clock: clock))
        let api = FakeAPI()
        try cache.cacheItems([Post(id: 1, title: "cached")], forKey: "top")

        // Fresh: the screen shows the cache and fetches nothing.
        var (shown, _) = await collect(cache.load(Post.self, forKey: "top", fetch: api.posts))
        #expect(shown.map(\.items) == [[Post(id: 1, title: "cached")]])
        #expect(api.fetches == 0)

        // Two days later (past the default threshold of a day): stale, so it refetches.
        clock.advance(by: .seconds(2 * 86_400))
        #expect(cache.isStale(Post.self, forKey: "top"))
        (shown, _) = await collect(cache.load(Post.self, forKey: "top", fetch: api.posts))
        #expect(shown.map(\.items) == [[Post(id: 1, title: "cached")], [Post(id: 1, title: "fresh")]])
        #expect(api.fetches == 1)
        #expect(!cache.isStale(Post.self, forKey: "top"))
    }

    @Test func aRetryWaitsForTheClockNotForTheWallClock() async throws {
        let root = try directory()
        let clock = CacheClock()
        var configuration = AppCache.Configuration.testing(rootDirectory: root.url, clock: clock)
        configuration.retriesFailedFetches = true
        let cache = try AppCache(configuration: configuration)
        let api = FakeAPI(failures: 1)
        let retry = RetryPolicy.exponentialBackoff(maxAttempts: 2, initialDelay: .seconds(600), maximumDelay: .seconds(600))
        let loading = Task { await collect(cache.load(Post.self, forKey: "top", retry: retry, fetch: api.posts)).0 }
        // The first attempt failed and the backoff waits on the clock: ten minutes, not run.
        try #require(await eventually { api.fetches == 1 && clock.waitingTimers == 1 })
        clock.advance(by: .seconds(600))
        let shown = await loading.value
        #expect(api.fetches == 2)
        #expect(shown.last?.items == [Post(id: 1, title: "fresh")])
    }

    @Test func theTestingPresetFetchesOnceAndWritesThrough() async throws {
        let root = try directory()
        let cache = try AppCache(configuration: .testing(rootDirectory: root.url))
        let api = FakeAPI(failures: 1)
        let (_, error) = await collect(cache.load(Post.self, forKey: "top", retry: .default, fetch: api.posts))
        #expect(error is URLError)
        #expect(api.fetches == 1, "retries off, whatever the call asks")
        try cache.cacheItems([Post(id: 2)], forKey: "top")
        let other = try AppCache(configuration: .testing(rootDirectory: root.url))
        #expect(try other.getCachedItems(Post.self, forKey: "top") == [Post(id: 2)], "on disk when cacheItems returned")
    }

    @Test func pollingAndWriteBackFollowTheClock() async throws {
        let root = try directory()
        let clock = CacheClock()
        var configuration = AppCache.Configuration.testing(rootDirectory: root.url, clock: clock)
        configuration.followsRefreshTriggers = true
        configuration.writeBackDelay = .seconds(30)
        let cache = try AppCache(configuration: configuration)
        let api = FakeAPI()
        let seen = StreamRecorder(cache.watch(Post.self, forKey: "top", refresh: RefreshTriggers(every: .seconds(60)), fetch: api.posts))
        try #require(await eventually { api.fetches == 1 && seen.seen.count >= 1 })
        // A poll is due in a minute of the clock's, not the wall clock's.
        try #require(await eventually { clock.waitingTimers >= 1 })
        #expect(api.fetches == 1)
        clock.advance(by: .seconds(61))
        #expect(await eventually { api.fetches == 2 })

        // The write-back waits 30 seconds of the clock's.
        try cache.cacheItems([Post(id: 3)], forKey: "later")
        await cache.idle()
        let waiting = try #require(try await cache.entries().first { $0.key == "later" })
        #expect(waiting.isDirty && !waiting.isOnDisk, "the write-back waits for the clock")
        clock.advance(by: .seconds(31))
        await cache.idle()
        let written = try #require(try await cache.entries().first { $0.key == "later" })
        #expect(!written.isDirty && written.isOnDisk)
    }

    @Test func previewDataIsOneLine() throws {
        let cache = try AppCache.preview { try $0.cacheItems([Post(id: 1), Post(id: 2)], forKey: "top") }
        #expect(try cache.getCachedItems(Post.self, forKey: "top")?.map(\.id) == [1, 2])
    }
}
