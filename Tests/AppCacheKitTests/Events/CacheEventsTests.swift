import Foundation
import Testing

@testable import AppCacheKit

/// What `events` tells and `statistics()` counts: each read, fetch, write, eviction, problem,
/// invalidation, queued change and user change, named by its collection, never its items.
@Suite struct CacheEventsTests {
    struct Like: CacheMutation {
        static let mutationName = "like"
        var postID: Int
        var key: String? { "top" }
        func apply(to items: inout [Post]) {}
    }

    /// The kinds seen so far for `cacheName` (or every event without a cache name).
    func kinds(_ recorder: StreamRecorder<CacheEvent>, _ cacheName: String? = Post.cacheName) -> [CacheEvent.Kind] {
        recorder.seen.filter { $0.cacheName == cacheName }.map(\.kind)
    }

    @Test func readsAreToldAndCounted() async throws {
        let clock = CacheClock()
        var configuration = AppCache.Configuration.inMemory(user: "alice", clock: clock)
        configuration.sharesServices = false
        try AppCache(configuration: configuration).cacheItems([Post(id: 1), Post(id: 2)], forKey: "top")
        let cache = try AppCache(configuration: configuration)
        let seen = StreamRecorder(cache.events)
        #expect(try cache.getCachedItems(Post.self, forKey: "missing") == nil)
        #expect(try cache.getCachedItems(Post.self, forKey: "top")?.count == 2)
        #expect(try cache.getCachedItems(Post.self, forKey: "top")?.count == 2)
        #expect(try cache.getCachedItems(Post.self, forKey: "top")?.count == 2)
        #expect(await eventually { kinds(seen).count >= 5 })
        let told = kinds(seen)
        #expect(told.first == .miss)
        #expect(told.filter { $0 == .memoryHit }.count == 2)
        #expect(told.contains { if case .decoded = $0 { true } else { false } })
        let diskHit = try #require(told.first { if case .diskHit = $0 { true } else { false } })
        guard case .diskHit(let bytes) = diskHit else { return }
        #expect(bytes > 0)
        #expect(seen.seen.allSatisfy { $0.user == "alice" && $0.date == clock.now })
        #expect(seen.seen.first { $0.kind == .memoryHit }?.key == "top")

        let counts = cache.statistics().counts(for: Post.self, key: "top", user: "alice")
        #expect(counts.memoryHits == 2 && counts.diskHits == 1 && counts.decodes == 1 && counts.bytesRead == bytes)
        #expect(cache.statistics().counts(for: Post.self, key: "missing", user: "alice").misses == 1)
        #expect(cache.statistics().total.hitRate == 0.75)
    }

    @Test func statisticsCountWithNobodyObservingAndKeepHitsOfEvictedCollections() throws {
        var configuration = AppCache.Configuration.inMemory(user: "alice")
        configuration.memoryEntryLimit = 1
        let cache = try AppCache(configuration: configuration)
        #expect(!cache.services.events.isObserved)
        try cache.cacheItems([Post(id: 1)], forKey: "a")
        for _ in 0..<3 { _ = try cache.getCachedItems(Post.self, forKey: "a") }
        // "b" pushes "a" out of memory: its three hits stay counted.
        try cache.cacheItems([Post(id: 2)], forKey: "b")
        _ = try cache.getCachedItems(Post.self, forKey: "b")
        _ = try cache.getCachedItems(Post.self, forKey: "a")
        let statistics = cache.statistics()
        let a = statistics.counts(for: Post.self, key: "a", user: "alice")
        #expect(a.memoryHits == 3 && a.diskHits == 1)
        #expect(statistics.counts(for: Post.self, key: "b", user: "alice").memoryHits == 1)
        #expect(statistics.counts(forCacheName: Post.cacheName).bytesWritten > 0)
    }

    @Test func fetchesAreTold() async throws {
        let clock = CacheClock()
        var configuration = AppCache.Configuration.inMemory(user: "alice", clock: clock)
        configuration.retriesFailedFetches = true
        let cache = try AppCache(configuration: configuration)
        let seen = StreamRecorder(cache.events)
        // A fetch that fails once, is retried after the clock moves, then brings two posts.
        let attempts = Locked(0)
        let retry = RetryPolicy.exponentialBackoff(maxAttempts: 2, initialDelay: .seconds(60), maximumDelay: .seconds(60))
        let loading = Task {
            for try await _ in cache.load(Post.self, forKey: "top", retry: retry, fetch: { _ in
                if attempts.withLock({ $0 += 1; return $0 }) == 1 { throw URLError(.timedOut) }
                return .items([Post(id: 1), Post(id: 2)])
            }) {}
        }
        try #require(await eventually { clock.waitingTimers == 1 })
        clock.advance(by: .seconds(61))
        try await loading.value
        // Then a conditional fetch the server answers "not modified", and one that fails.
        for try await _ in cache.load(Post.self, forKey: "top", policy: .fetchFirst, fetch: { _ in .notModified }) {}
        // (The load shows the cached items with the error; it does not throw.)
        for try await _ in cache.load(Post.self, forKey: "top", policy: .fetchFirst, retry: .none, fetch: { _ in throw URLError(.badServerResponse) }) {}
        #expect(await eventually { kinds(seen).contains { if case .fetchFailed = $0 { true } else { false } } })
        let fetchKinds = kinds(seen).filter {
            switch $0 {
            case .fetchStarted, .fetchFinished, .fetchNotModified, .fetchFailed, .fetchRetried: true
            default: false
            }
        }
        guard fetchKinds.count == 7 else {
            Issue.record("\(fetchKinds)")
            return
        }
        #expect(fetchKinds[0] == .fetchStarted)
        guard case .fetchRetried(attempt: 1, let delay) = fetchKinds[1] else {
            Issue.record("\(fetchKinds[1])")
            return
        }
        #expect(delay <= .seconds(60), "the policy's delay, jittered")
        #expect(fetchKinds[2] == .fetchFinished(itemCount: 2))
        #expect(fetchKinds[3] == .fetchStarted && fetchKinds[4] == .fetchNotModified)
        #expect(fetchKinds[5] == .fetchStarted && fetchKinds[6] == .fetchFailed(message: "\(URLError(.badServerResponse))"))
        #expect(kinds(seen).contains(.written(bytes: 0)) == false)
        let counts = cache.statistics().counts(for: Post.self, key: "top", user: "alice")
        #expect(counts.fetches == 3 && counts.notModified == 1 && counts.fetchFailures == 1)
    }

    @Test func writesSpillsAndEvictionsAreTold() async throws {
        let clock = CacheClock()
        var configuration = AppCache.Configuration.inMemory(user: "alice", clock: clock)
        configuration.writeBackDelay = .seconds(600)
        configuration.memoryEntryLimit = 1
        let cache = try AppCache(configuration: configuration)
        let seen = StreamRecorder(cache.events)
        try cache.cacheItems([Post(id: 1)], forKey: "first")
        try cache.cacheItems([Post(id: 2)], forKey: "second")  // "first" spills
        await cache.idle()
        #expect(await eventually { seen.seen.contains { $0.key == "first" && $0.kind == .evicted(.memoryLimit) } })
        #expect(await eventually { seen.seen.contains { if $0.key == "first", case .spilled = $0.kind { true } else { false } } })
        #expect(seen.seen.contains { if $0.key == "first", case .written = $0.kind { true } else { false } })

        try cache.cacheItems([Post(id: 3)], forKey: "brief", expiresAfter: .seconds(60))
        try cache.flush()
        clock.advance(by: .seconds(120))
        #expect(try cache.getCachedItems(Post.self, forKey: "brief") == nil)
        #expect(await eventually { seen.seen.contains { $0.key == "brief" && $0.kind == .evicted(.expired) } })
    }

    @Test func theDiskBudgetsEvictionsAreTold() async throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.diskByteLimit = 4_000
        let cache = try AppCache(configuration: configuration)
        let seen = StreamRecorder(cache.events)
        for index in 0..<20 {
            try cache.cacheItems([Post(id: index, title: String(repeating: "x", count: 300))], forKey: "k\(index)")
        }
        _ = try await cache.bytesOnDisk()
        #expect(await eventually { seen.seen.contains { $0.kind == .evicted(.diskBudget) && $0.key == "k0" && $0.user == "alice" } })
    }

    @Test func problemsInvalidationsChangesAndUsersAreTold() async throws {
        var configuration = AppCache.Configuration.inMemory(user: "alice")
        configuration.followsRefreshTriggers = false
        let cache = try AppCache(configuration: configuration)
        let seen = StreamRecorder(cache.events)
        try cache.cacheItems([Post(id: 1)], forKey: "top")
        try cache.invalidate(Post.self, forKey: "top")
        let server = Locked<[Int]>([])
        cache.registerSender(for: Like.self) { like, _ in
            if like.postID == 2 { throw MutationRejected(reason: "no") }
            server.withLock { $0.append(like.postID) }
        }
        let accepted = try cache.enqueue(Like(postID: 1))
        let rejected = try cache.enqueue(Like(postID: 2))
        #expect(await eventually { cache.pendingMutations.isEmpty })
        try cache.switchUser(to: "bob")
        try cache.removeUser("alice")
        #expect(await eventually { seen.seen.contains { $0.kind == .userRemoved && $0.user == "alice" } })
        let told = seen.seen
        #expect(told.contains { $0.kind == .invalidated && $0.key == "top" && $0.cacheName == Post.cacheName })
        #expect(told.contains { $0.kind == .mutationEnqueued(name: "like", id: accepted) })
        #expect(told.contains { $0.kind == .mutationSent(name: "like", id: accepted) })
        #expect(told.contains { $0.kind == .mutationAccepted(name: "like", id: accepted) })
        #expect(told.contains { if case .mutationRejected("like", rejected, _) = $0.kind { true } else { false } })
        #expect(told.contains { $0.kind == .userSwitched && $0.user == "bob" })
    }

    @Test func aDamagedArchiveIsToldAsAProblem() async throws {
        // Damages the archive's file.
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Post(id: 1)], forKey: "top")
        let reader = try fixture.openCache()
        let seen = StreamRecorder(reader.events)
        let path = fixture.archivePath(Post.self, key: "top")
        var bytes = try Data(contentsOf: URL(filePath: path))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(filePath: path))
        #expect(try reader.getCachedItems(Post.self, forKey: "top") == nil)
        #expect(await eventually { seen.seen.contains { $0.kind == .problemFound(.corruptArchive) && $0.key == "top" } })
        #expect(seen.seen.contains(where: { $0.kind == .miss && $0.key == "top" }))
    }

    @Test func aReaderThatGoesStopsObserving() async throws {
        let cache = try AppCache(configuration: .inMemory())
        try cache.cacheItems([Post(id: 1)], forKey: "top")
        let reading = Task {
            for await _ in cache.events {}
        }
        #expect(await eventually { cache.services.events.isObserved })
        reading.cancel()
        // The reader went: nobody observes any more.
        #expect(await eventually { !cache.services.events.isObserved })
    }
}
