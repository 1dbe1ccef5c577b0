import Foundation
import Testing

@testable import AppCacheKit

/// A background refresh in one call: the stale collections used recently that have a fetch are
/// refetched, most recently used first; the queued changes are sent, memory is flushed and
/// trimmed, and it returns before its deadline whatever the server does, holding no lock.
@Suite struct BackgroundRefreshTests {
    /// Records the keys a fetch was asked for, in order, and answers new items (or hangs on a
    /// gate that ignores cancellation, as a request already sent would).
    final class Server: Sendable {
        private let asked = Locked<[String?]>([])
        let hang: Gate?
        let answer: Int

        init(answer: Int = 100, hangs: Bool = false) {
            self.answer = answer
            hang = hangs ? Gate() : nil
        }

        var keys: [String?] { asked.withLock { $0 } }

        func fetch(_ context: LoadContext<Post>) async throws -> FetchResult<Post> {
            asked.withLock { $0.append(context.key) }
            if let hang { await hang.wait() }
            return .items([Post(id: answer, title: "fetched \(context.key ?? "-")")])
        }
    }

    /// A change to a post, for the outbox.
    struct Retitle: CacheMutation {
        static let mutationName = "retitle"
        var title: String
        var key: String? { "a" }
        func apply(to items: inout [Post]) {
            for index in items.indices { items[index].title = title }
        }
    }

    /// An in-memory cache on `clock`, its memory written only on events (a flush), standing
    /// alone (a second cache on the configuration sees the store as a relaunch would).
    func configuration(_ clock: CacheClock) -> AppCache.Configuration {
        var configuration = AppCache.Configuration.inMemory(user: "alice", clock: clock)
        configuration.writeBackDelay = nil
        configuration.sharesServices = false
        return configuration
    }

    /// Uses the collection under `key`: a load that shows what is cached without fetching.
    func use(_ cache: AppCache, _ key: String, fetch: @escaping @Sendable (LoadContext<Post>) async throws -> FetchResult<Post> = { _ in .notModified }) async throws {
        for try await _ in cache.load(Post.self, forKey: key, policy: .cacheFirst, fetch: fetch) {}
    }

    @Test func refetchesTheStaleCollectionsUsedRecentlyThatHaveAFetchMostRecentFirst() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        let server = Server()
        cache.registerFetch(for: Post.self, server.fetch)
        for key in ["a", "b", "c", "unused", "fresh"] { try cache.cacheItems([Post(id: 1)], forKey: key) }
        try cache.cacheItems([Plain(value: 1)], forKey: "remembered")
        for key in ["a", "b", "c"] {
            try await use(cache, key)
            clock.advance(by: .seconds(60))
        }
        for try await _ in cache.load(Plain.self, forKey: "remembered", policy: .cacheFirst, fetch: { _ in .notModified }) {}
        clock.advance(by: .seconds(2 * 3600))
        try cache.cacheItems([Post(id: 2)], forKey: "fresh")
        try await use(cache, "fresh")

        let report = await cache.refreshInBackground(until: .now + .seconds(600), maxConcurrentFetches: 1)

        #expect(server.keys == ["c", "b", "a"], "stale, used, with a fetch: most recently used first")
        #expect(report.refreshed.map(\.key) == ["c", "b", "a"])
        #expect(report.refreshed.first?.cacheName == "Posts")
        #expect(report.failed.isEmpty && report.cancelled.isEmpty && report.skipped.isEmpty)
        #expect(report.finishedInTime)
        for key in ["a", "b", "c"] {
            #expect(try cache.getCachedItems(Post.self, forKey: key) == [Post(id: 100, title: "fetched \(key)")])
            #expect(!cache.isStale(Post.self, forKey: key))
        }
        #expect(try cache.getCachedItems(Post.self, forKey: "unused") == [Post(id: 1)], "never used: not refetched")
        #expect(try cache.getCachedItems(Post.self, forKey: "fresh") == [Post(id: 2)], "fresh: not refetched")
        #expect(try cache.getCachedItems(Plain.self, forKey: "remembered") == [Plain(value: 1)], "its load's fetch, remembered, answered notModified")
    }

    @Test func usesOlderThanTheWindowDoNotCount() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        let server = Server()
        cache.registerFetch(for: Post.self, server.fetch)
        for key in ["old", "recent"] { try cache.cacheItems([Post(id: 1)], forKey: key) }
        try await use(cache, "old")
        clock.advance(by: .seconds(2 * 86_400))
        try await use(cache, "recent")
        clock.advance(by: .seconds(2 * 3600))

        let report = await cache.refreshInBackground(until: .now + .seconds(600))
        #expect(server.keys == ["recent"])
        #expect(report.refreshed.map(\.key) == ["recent"])

        // A wider window takes the old one too.
        let wider = await cache.refreshInBackground(until: .now + .seconds(600), usedWithin: .seconds(3 * 86_400))
        #expect(wider.refreshed.map(\.key) == ["old"], "the recent one is fresh now")
    }

    @Test func theFetchOfACollectionsLastLoadIsRememberedWithoutARegistration() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        try cache.cacheItems([Post(id: 1)], forKey: "watched")
        try cache.cacheItems([Post(id: 1)], forKey: "other")
        let server = Server(answer: 7)
        try await use(cache, "watched", fetch: server.fetch)
        clock.advance(by: .seconds(2 * 3600))

        let report = await cache.refreshInBackground(until: .now + .seconds(600))
        #expect(server.keys == ["watched"])
        #expect(report.refreshed.map(\.key) == ["watched"])
        #expect(try cache.getCachedItems(Post.self, forKey: "watched") == [Post(id: 7, title: "fetched watched")])
    }

    /// What a fetch's closure captures, to see whether the cache still holds the closure.
    final class Captured: Sendable {}

    @Test func aRegistrationLetsGoOfTheRememberedFetchesOfItsTypeAndOfItsLaterLoads() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        try cache.cacheItems([Post(id: 1)], forKey: "a")
        weak var before: Captured?
        weak var after: Captured?
        do {
            let captured = Captured()
            before = captured
            try await use(cache, "a") { _ in withExtendedLifetime(captured) { .notModified } }
        }
        #expect(before != nil, "without a registration, the load's fetch is remembered, with what it captures")

        let server = Server(answer: 9)
        cache.registerFetch(for: Post.self, server.fetch)
        #expect(before == nil, "the registered fetch wins: the remembered one is let go")
        clock.advance(by: .seconds(60))
        do {
            let captured = Captured()
            after = captured
            try await use(cache, "a") { _ in withExtendedLifetime(captured) { .notModified } }
        }
        #expect(after == nil, "a load of a type with a registered fetch leaves nothing behind")

        // The use still counts: a background refresh runs the registered fetch for it.
        clock.advance(by: .seconds(2 * 3600))
        let report = await cache.refreshInBackground(until: .now + .seconds(600))
        #expect(report.refreshed.map(\.key) == ["a"])
        #expect(server.keys == ["a"])
    }

    /// Runs a closure when it goes: what a fetch may capture whose deinitialisation calls
    /// back into the cache.
    final class CallsBack: Sendable {
        let onDeinit: @Sendable () -> Void
        init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
        deinit { onDeinit() }
    }

    @Test func aRememberedFetchLetGoOfMayCallBackIntoTheCache() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        try cache.cacheItems([Post(id: 1)], forKey: "a")
        let calledBack = Locked(false)
        do {
            // Its deinit registers a fetch: it takes the lock the table of uses lets go under.
            let captured = CallsBack { [weak cache] in
                cache?.registerFetch(for: Plain.self) { _ in .notModified }
                calledBack.withLock { $0 = true }
            }
            try await use(cache, "a") { _ in withExtendedLifetime(captured) { .notModified } }
        }
        #expect(!calledBack.withLock { $0 }, "remembered: not let go yet")
        cache.registerFetch(for: Post.self, Server().fetch)
        #expect(calledBack.withLock { $0 }, "let go by the registration, after the lock: its call back returned")
    }

    @Test func aCacheWhoseFetchesCaptureItWeaklyGoesWithItsLastReference() async throws {
        let clock = CacheClock()
        weak var weakCache: AppCache?
        do {
            let cache = try AppCache(configuration: configuration(clock))
            weakCache = cache
            try cache.cacheItems([Post(id: 1)], forKey: "a")
            try await use(cache, "a") { [weak cache] _ in
                // The cache captured, as a fetch that reads another collection captures it.
                _ = try cache?.getCachedItems(Post.self, forKey: "b")
                return .items([Post(id: 2)])
            }
            #expect(try cache.getCachedItems(Post.self, forKey: "a") == [Post(id: 1)], "cacheFirst showed the cached items")
        }
        #expect(weakCache == nil, "nothing the cache keeps (the remembered fetch, a flight, a task) holds it")
    }

    @Test func aHangingServerAtTheDeadlineLeavesTheCachedItems() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        let server = Server(hangs: true)
        cache.registerFetch(for: Post.self, server.fetch)
        for index in 0..<6 {
            try cache.cacheItems([Post(id: index)], forKey: "k\(index)")
            try await use(cache, "k\(index)")
            clock.advance(by: .seconds(1))
        }
        clock.advance(by: .seconds(2 * 3600))

        // A deadline of a few seconds against a server that never answers. How much started
        // before it depends on the machine (a starved test run may start none); what holds
        // whatever the timing: every collection is cancelled or skipped, none stored, the
        // most recently used taken first. (The benchmark `background-refresh` times it.)
        let deadline = ContinuousClock.Instant.now + .seconds(3)
        let report = await cache.refreshInBackground(until: deadline, maxConcurrentFetches: 4)
        #expect(report.cancelled.count + report.skipped.count == 6 && report.cancelled.count <= 4)
        #expect(report.refreshed.isEmpty && !report.finishedInTime)
        let taken = ["k5", "k4", "k3", "k2", "k1", "k0"]
        // A fetch cancelled before its task ran never reached the server: the server saw only
        // collections reported cancelled, and those are the most recently used.
        #expect(Set(server.keys.compactMap { $0 }).isSubset(of: Set(report.cancelled.compactMap(\.key))))
        #expect(report.cancelled.allSatisfy { taken.prefix(4).contains($0.key ?? "") }, "most recently used first")

        // The server answers at last: a cancelled fetch stores nothing.
        server.hang?.open()
        await cache.idle()
        for index in 0..<6 {
            #expect(try cache.getCachedItems(Post.self, forKey: "k\(index)") == [Post(id: index)])
            #expect(cache.isStale(Post.self, forKey: "k\(index)"))
        }
    }

    @Test func sendsTheQueuedChanges() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        try cache.cacheItems([Post(id: 1)], forKey: "a")
        let attempts = Locked(0)
        // Offline at first: the first send fails, and the sender waits out a backoff that only
        // the test's clock would end.
        cache.registerSender(for: Retitle.self) { _, _ in
            if attempts.withLock({ $0 += 1; return $0 }) == 1 { throw URLError(.timedOut) }
        }
        try cache.enqueue(Retitle(title: "one"))
        try cache.enqueue(Retitle(title: "two"))
        #expect(await eventually { attempts.withLock { $0 } == 1 && cache.pendingMutations.first?.lastError != nil })

        let report = await cache.refreshInBackground(until: .now + .seconds(600))
        #expect(report.sentMutations == 2)
        #expect(report.pendingMutations == 0)
        #expect(cache.pendingMutations.isEmpty)
        #expect(try cache.getCachedItems(Post.self, forKey: "a")?.first?.title == "two")
    }

    @Test func aSendThatFailsEndsTheWaitForTheSenderWithoutRetrying() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        try cache.cacheItems([Post(id: 1)], forKey: "a")
        let attempts = Locked(0)
        cache.registerSender(for: Retitle.self) { _, _ in
            attempts.withLock { $0 += 1 }
            throw URLError(.timedOut)
        }
        try cache.enqueue(Retitle(title: "one"))
        #expect(await eventually { attempts.withLock { $0 } == 1 && cache.pendingMutations.first?.lastError != nil })
        // The failed send's step is over (its backoff set), as an app's background launch finds
        // it: a refresh that came between the error and the backoff would meet the backoff.
        await cache.idle()

        // A deadline ten minutes away; "long before it" allows for a starved test run.
        let deadline = ContinuousClock.Instant.now + .seconds(600)
        let report = await cache.refreshInBackground(until: deadline)
        #expect(ContinuousClock.Instant.now < deadline - .seconds(480), "the backoff is not waited out")
        #expect(attempts.withLock { $0 } == 2, "tried once more, at once")
        #expect(report.sentMutations == 0 && report.pendingMutations == 1)
        #expect(report.finishedInTime, "the sender had nothing more it could send")
    }

    @Test func tellsNotModifiedAndFailedApart() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        struct Down: Error {}
        cache.registerFetch(for: Post.self) { context in
            if context.key == "down" { throw Down() }
            return .notModified
        }
        for key in ["same", "down"] {
            try cache.cacheItems([Post(id: 1)], forKey: key)
            try await use(cache, key)
        }
        clock.advance(by: .seconds(2 * 3600))

        let report = await cache.refreshInBackground(until: .now + .seconds(600))
        #expect(report.notModified.map(\.key) == ["same"])
        #expect(report.failed.map(\.collection.key) == ["down"])
        #expect(report.failed.first?.error is Down)
        #expect(!cache.isStale(Post.self, forKey: "same"), "re-dated")
        #expect(cache.isStale(Post.self, forKey: "down"))
        #expect(try cache.getCachedItems(Post.self, forKey: "down") == [Post(id: 1)])
    }

    @Test func flushesAndTrimsMemory() async throws {
        let clock = CacheClock()
        let configuration = configuration(clock)
        let server = Server()
        do {
            let cache = try AppCache(configuration: configuration)
            cache.registerFetch(for: Post.self, server.fetch)
            try cache.cacheItems([Post(id: 1)], forKey: "a")
            try await use(cache, "a")
            clock.advance(by: .seconds(2 * 3600))
            try cache.cacheItems([Plain(value: 3)], forKey: "dirty")
            #expect(cache.memoryStatistics.dirtyEntries > 0)

            let report = await cache.refreshInBackground(until: .now + .seconds(600))
            #expect(report.refreshed.map(\.key) == ["a"])
            #expect(report.isFlushed && report.finishedInTime)
            #expect(report.trimmedEntries > 0)
            #expect(cache.memoryStatistics.entries == 0, "memory trimmed")
            #expect(cache.memoryStatistics.dirtyEntries == 0)
        }
        // A relaunch finds what the refresh brought, and what was dirty before it.
        let relaunched = try AppCache(configuration: configuration)
        #expect(try relaunched.getCachedItems(Post.self, forKey: "a") == [Post(id: 100, title: "fetched a")])
        #expect(try relaunched.getCachedItems(Plain.self, forKey: "dirty") == [Plain(value: 3)])
    }

    @Test func aRelaunchedProcessKnowsWhatWasUsedBefore() async throws {
        let clock = CacheClock()
        let configuration = configuration(clock)
        do {
            let cache = try AppCache(configuration: configuration)
            cache.registerFetch(for: Post.self, Server().fetch)
            for key in ["a", "b"] { try cache.cacheItems([Post(id: 1)], forKey: key) }
            try await use(cache, "a")
            clock.advance(by: .seconds(60))
            try await use(cache, "b")
            // The uses are recorded off the caller's thread.
            #expect(await eventually {
                let (_, switches) = cache.store.sessionAndSwitches
                return ((try? cache.store.readCollection(RecordedUse.self, key: nil, switches: switches))?.items.count ?? 0) == 2
            })
            try cache.flush()
            #expect(try await cache.entries().map(\.key).sorted(by: { ($0 ?? "") < ($1 ?? "") }) == ["a", "b"], "the record is not listed")
        }
        clock.advance(by: .seconds(2 * 3600))
        // Launched in the background: nothing loaded yet, only the fetch registered.
        let relaunched = try AppCache(configuration: configuration)
        let server = Server()
        relaunched.registerFetch(for: Post.self, server.fetch)
        let report = await relaunched.refreshInBackground(until: .now + .seconds(600), maxConcurrentFetches: 1)
        #expect(server.keys == ["b", "a"])
        #expect(report.refreshed.count == 2)

        // The refresh's own fetches are no use: once the uses leave the window, nothing is refetched.
        clock.advance(by: .seconds(2 * 86_400))
        let later = await relaunched.refreshInBackground(until: .now + .seconds(600))
        #expect(later.refreshed.isEmpty && server.keys.count == 2)
    }

    @Test func stopsWhenTheSystemClosesTheDiskForSuspension() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        let gate = cache.store.disk.gate
        let hang = Gate()
        cache.registerFetch(for: Post.self) { _ in
            gate.close()  // the system says time is up while the fetch runs
            await hang.wait()
            return .items([])
        }
        for key in ["a", "b", "c"] {
            try cache.cacheItems([Post(id: 1)], forKey: key)
            try await use(cache, key)
        }
        clock.advance(by: .seconds(2 * 3600))

        let deadline = ContinuousClock.Instant.now + .seconds(600)
        let report = await cache.refreshInBackground(until: deadline, maxConcurrentFetches: 1)
        #expect(ContinuousClock.Instant.now < deadline - .seconds(480), "stopped long before its deadline")
        #expect(report.cancelled.count == 1 && report.skipped.count == 2)
        #expect(!report.isFlushed || cache.memoryStatistics.dirtyEntries == 0)
        hang.open()
        gate.open()
        #expect(try cache.getCachedItems(Post.self, forKey: "a") == [Post(id: 1)])
    }

    @Test func theCallersCancellationStopsIt() async throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: configuration(clock))
        let server = Server(hangs: true)
        cache.registerFetch(for: Post.self, server.fetch)
        try cache.cacheItems([Post(id: 1)], forKey: "a")
        try await use(cache, "a")
        clock.advance(by: .seconds(2 * 3600))

        let deadline = ContinuousClock.Instant.now + .seconds(600)
        let work = Task { await cache.refreshInBackground(until: deadline) }
        #expect(await eventually { server.keys.count == 1 })
        work.cancel()  // a BGAppRefreshTask's expiration handler
        let report = await work.value
        #expect(ContinuousClock.Instant.now < deadline - .seconds(480), "stopped long before its deadline")
        #expect(report.cancelled.map(\.key) == ["a"])
        server.hang?.open()
    }
}

/// The lock file, on disk: free once the refresh has returned.
@Suite struct BackgroundRefreshLockTests {
    @Test func nothingHoldsTheLockFileAfterItReturns() async throws {
        let fixture = try Fixture()
        let cache = try AppCache(configuration: fixture.configuration(memory: .layer(writeBackDelay: nil)))
        cache.registerFetch(for: Post.self) { context in .items([Post(id: 9, title: context.key ?? "")]) }
        for index in 0..<10 {
            try cache.cacheItems([Post(id: index)], forKey: "k\(index)")
            for try await _ in cache.load(Post.self, forKey: "k\(index)", policy: .cacheFirst, fetch: { _ in .notModified }) {}
        }
        fixture.clock.advance(by: .seconds(2 * 3600))

        let report = await cache.refreshInBackground(until: .now + .seconds(600))
        #expect(report.refreshed.count == 10 && report.isFlushed)
        let peer = try BusyTests.Peer(fixture)  // throws when the lock file is held
        peer.letGo()
        #expect(try fixture.openCache().getCachedItems(Post.self, forKey: "k3") == [Post(id: 9, title: "k3")])
    }
}
