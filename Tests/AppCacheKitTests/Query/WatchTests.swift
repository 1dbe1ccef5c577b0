import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// `watch`: a load that goes on following the collection and refetches on invalidation,
/// foreground, reconnect and polling; fetches get the cached items of the user they are for.
@Suite struct WatchTests {
    /// A server that answers note `n` on its `n`th fetch, records the cached items each fetch
    /// started from, and lets the fixture's clock move on a millisecond per request.
    final class Server: Sendable {
        private let state = Locked<(fetches: Int, contexts: [[Int]?], failure: (any Error)?)>((0, [], nil))
        let clock: CacheClock

        init(clock: CacheClock) {
            self.clock = clock
        }

        var fetches: Int { state.withLock { $0.fetches } }
        var contexts: [[Int]?] { state.withLock { $0.contexts } }

        func fail(with error: (any Error)?) {
            state.withLock { $0.failure = error }
        }

        var fetch: @Sendable (LoadContext<Note>) async throws -> FetchResult<Note> {
            { [self] context in
                let (number, failure) = state.withLock { state -> (Int, (any Error)?) in
                    state.fetches += 1
                    state.contexts.append(context.cachedItems?.map(\.id))
                    return (state.fetches, state.failure)
                }
                clock.advance(by: .milliseconds(1))  // a request takes time
                if let failure { throw failure }
                return .items([Note.make(100 + number)])
            }
        }
    }

    struct Down: Error {}

    @Test func aWatchLoadsThenFollowsEveryWriter() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(0)])
        fixture.clock.advance(by: .seconds(7200))  // stale
        let server = Server(clock: fixture.clock)
        let seen = StreamRecorder(cache.watch(Note.self, refresh: .none, retry: .none, fetch: server.fetch))
        defer { seen.stop() }

        #expect(await eventually { seen.seen.count == 2 })
        #expect(seen.seen.map(\.source) == [.memory, .fetch])
        #expect(seen.seen.map { $0.items.map(\.id) } == [[0], [101]])
        #expect(seen.seen.map(\.isStale) == [true, false])
        #expect(server.contexts == [[0]], "the fetch started from the cached items")

        // Another instance writes: the watch yields it, without fetching.
        fixture.clock.advance(by: .seconds(1))
        let other = try fixture.openCache()
        try other.cacheItems([Note.make(50)])
        #expect(await eventually { seen.last?.items.map(\.id) == [50] })
        #expect(seen.last?.source == .disk || seen.last?.source == .memory)
        #expect(server.fetches == 1, "a change is not a refetch")
        #expect(seen.error == nil)
    }

    @Test func anInvalidationRefetchesAWatchedCollectionAtOnce() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(0)])
        let server = Server(clock: fixture.clock)
        let seen = StreamRecorder(cache.watch(Note.self, refresh: .none, retry: .none, fetch: server.fetch))
        defer { seen.stop() }
        #expect(await eventually { seen.seen.count == 1 })
        #expect(server.fetches == 0, "fresh: no fetch")

        fixture.clock.advance(by: .seconds(1))
        try cache.invalidate(Note.self)
        #expect(await eventually { seen.last?.items.map(\.id) == [101] })
        #expect(seen.last?.source == .fetch)
        #expect(!cache.isStale(Note.self), "the refetch made it fresh")

        // From another process (an instance with its own lock-file mapping): the same.
        fixture.clock.advance(by: .seconds(1))
        try fixture.openCache().invalidate(Note.self)
        #expect(await eventually { seen.last?.items.map(\.id) == [102] })
        #expect(server.fetches == 2)
    }

    @Test func foregroundAndReconnectRefetchOnlyStaleCollections() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(0)])
        let server = Server(clock: fixture.clock)
        let seen = StreamRecorder(cache.watch(Note.self, refresh: .default, retry: .none, fetch: server.fetch))
        defer { seen.stop() }
        #expect(await eventually { seen.seen.count == 1 })

        // Fresh: neither trigger refetches (the watch looks, and decides not to).
        var looks = cache.queries.observers.looks
        cache.applicationDidBecomeActive()
        cache.networkDidBecomeAvailable()
        #expect(await eventually { cache.queries.observers.looks > looks })
        #expect(server.fetches == 0)

        fixture.clock.advance(by: .seconds(7200))
        cache.networkDidBecomeAvailable()
        #expect(await eventually { server.fetches == 1 && seen.last?.source == .fetch })

        fixture.clock.advance(by: .seconds(7200))
        cache.applicationDidBecomeActive()
        #expect(await eventually { server.fetches == 2 && seen.last?.items.map(\.id) == [102] })

        // With the triggers off, a stale collection stays as it is.
        try cache.cacheItems([Note.make(7)], forKey: "quiet")
        let quietServer = Server(clock: fixture.clock)
        let quiet = StreamRecorder(cache.watch(Note.self, forKey: "quiet", refresh: .none, retry: .none, fetch: quietServer.fetch))
        defer { quiet.stop() }
        #expect(await eventually { quiet.last?.items.map(\.id) == [7] })
        fixture.clock.advance(by: .seconds(7200))
        looks = cache.queries.observers.looks
        cache.applicationDidBecomeActive()
        cache.networkDidBecomeAvailable()
        try cache.cacheItems([Note.make(1)], forKey: "elsewhere")  // something to look at
        #expect(await eventually { cache.queries.observers.looks > looks + 1 })
        #expect(quietServer.fetches == 0)
        #expect(quiet.last?.items.map(\.id) == [7])
    }

    @Test func pollingRefetchesOnItsIntervalPausesInTheBackgroundAndStopsWithTheStream() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(0)])
        let server = Server(clock: fixture.clock)
        let interval = Duration.milliseconds(20)
        let polling = RefreshTriggers(onForeground: false, onReconnect: false, every: interval)
        let seen = StreamRecorder(cache.watch(Note.self, refresh: polling, retry: .none, fetch: server.fetch))
        #expect(await eventually { server.fetches >= 3 }, "fresh or not, it polls")

        // Paused: woken (by a change, a trigger) the watch still looks, but never polls, however
        // long since its last poll. Polling counts on the uptime clock, so an interval must pass
        // before each wake-up; the look that follows proves the watch decided.
        cache.applicationDidEnterBackground()
        cache.store.waitForBackgroundWork()
        let clock = ContinuousClock()
        var looks = cache.queries.observers.looks
        cache.queries.observers.notifyAll()
        // A look begun after this point comes after any poll under way when the app left.
        #expect(await eventually { cache.queries.observers.looks > looks })
        let paused = server.fetches
        for _ in 1...5 {
            looks = cache.queries.observers.looks
            let looked = clock.now
            #expect(await eventually { clock.now - looked > interval })
            cache.queries.observers.notifyAll()
            #expect(await eventually { cache.queries.observers.looks > looks })
        }
        #expect(server.fetches == paused, "no poll in the background")

        cache.applicationDidBecomeActive()
        let resumed = server.fetches
        #expect(await eventually { server.fetches >= resumed + 2 })

        seen.stop()
        #expect(await eventually { cache.queries.observers.isEmpty })
        let stopped = server.fetches
        // Another watch with the same interval polls meanwhile: polls fall due, and watches get
        // to run, while the stopped one stays silent.
        let otherServer = Server(clock: fixture.clock)
        let other = StreamRecorder(cache.watch(Note.self, forKey: "other", refresh: polling, retry: .none, fetch: otherServer.fetch))
        defer { other.stop() }
        #expect(await eventually { otherServer.fetches >= 4 }, "three polls after its first fetch")
        #expect(server.fetches <= stopped + 1, "the stream ended: no more polls")
    }

    @Test func theFetchGetsTheCachedItemsOfTheUserItIsFor() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(1)])
        try cache.switchUser(to: "bob")
        try cache.cacheItems([Note.make(2)])
        try cache.switchUser(to: "alice")
        fixture.clock.advance(by: .seconds(7200))
        let server = Server(clock: fixture.clock)
        let seen = StreamRecorder(cache.watch(Note.self, retry: .none, fetch: server.fetch))
        defer { seen.stop() }
        #expect(await eventually { server.fetches == 1 })
        #expect(server.contexts == [[1]])

        try cache.switchUser(to: "bob")
        #expect(await eventually { seen.last?.items.map(\.id) == [2] }, "the watch follows the switch")
        cache.networkDidBecomeAvailable()  // bob's is stale
        #expect(await eventually { server.fetches == 2 })
        #expect(server.contexts.last == [2], "bob's items, never alice's")
    }

    @Test func aFailedRefetchKeepsTheItemsShownWithTheErrorAndNothingCachedEndsTheStream() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(0)])
        fixture.clock.advance(by: .seconds(7200))
        let server = Server(clock: fixture.clock)
        server.fail(with: Down())
        let seen = StreamRecorder(cache.watch(Note.self, retry: .none, fetch: server.fetch))
        defer { seen.stop() }
        #expect(await eventually { seen.seen.count == 2 })
        #expect(seen.seen.map { $0.items.map(\.id) } == [[0], [0]])
        #expect(seen.last?.refreshError is Down)
        #expect(seen.error == nil, "the watch goes on")

        server.fail(with: nil)
        cache.networkDidBecomeAvailable()
        #expect(await eventually { seen.last?.items.map(\.id) == [102] && seen.last?.refreshError == nil })

        let empty = StreamRecorder(cache.watch(Note.self, forKey: "none", retry: .none, fetch: { _ in throw Down() }))
        #expect(await eventually { empty.error != nil })
        #expect(empty.error is Down)
    }

    /// A fetch stored in the very millisecond of the invalidation answers it: no refetch loop.
    @Test func aFetchInTheMomentOfTheInvalidationAnswersIt() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(0)])
        let fetches = Locked(0)
        let seen = StreamRecorder(cache.watch(Note.self, refresh: .none, retry: .none) { _ in
            fetches.withLock { $0 += 1 }
            return .items([Note.make(1)])  // the clock stands still
        })
        defer { seen.stop() }
        #expect(await eventually { seen.seen.count == 1 })
        fixture.clock.advance(by: .seconds(1))
        try cache.invalidate(Note.self)
        #expect(await eventually { seen.last?.items.map(\.id) == [1] })
        let looks = cache.queries.observers.looks
        cache.queries.observers.notifyAll()
        #expect(await eventually { cache.queries.observers.looks > looks })
        #expect(fetches.withLock { $0 } == 1)
    }
}
