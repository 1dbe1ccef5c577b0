#if canImport(Observation)
import Foundation
import Observation
import Testing
@testable import AppCacheKit

/// `CachedQuery`: its observable state through a load, a failure and changes made elsewhere.
@MainActor
struct CachedQueryTests {
    let notes = [Note.make(1), Note.make(2)]

    /// Counts the changes observation reports for what `read` touches, re-arming after each.
    /// `read` holds the query weakly: the query's own registrar keeps it until the next change,
    /// and a strong capture would keep the query (and its cache) alive to the end of the process.
    final class ChangeCounter: Sendable {
        let count = Locked(0)

        @MainActor
        func track(_ read: @escaping @MainActor () -> Void) {
            withObservationTracking { read() } onChange: { [self] in
                count.withLock { $0 += 1 }
                Task { @MainActor in self.track(read) }
            }
        }

        var changes: Int { count.withLock { $0 } }
    }

    @Test func aRefreshGoesFromLoadingToItems() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(notes, etag: nil), gated: true)
        let query = CachedQuery(cache: cache, Note.self, fetch: server.fetch)
        #expect(query.items == nil)
        #expect(!query.isLoading)

        let loading = ChangeCounter()
        loading.track { [weak query] in _ = query?.isLoading }
        let refresh = Task { await query.refresh() }
        #expect(await eventually { loading.changes >= 1 })
        #expect(query.isLoading)
        #expect(query.items == nil, "nothing cached yet")

        let items = ChangeCounter()
        items.track { [weak query] in _ = query?.items }
        server.gate?.open()
        await refresh.value
        #expect(!query.isLoading)
        #expect(loading.changes >= 2, "isLoading went true, then false")
        #expect(items.changes >= 1)
        #expect(query.items == notes)
        #expect(query.cachedDate == fixture.clock.now)
        #expect(!query.isStale)
        #expect(query.error == nil)
    }

    @Test func twoRefreshesAtOnceShareOneFetchAndLoadUntilBothEnd() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(notes, etag: nil), gated: true)
        let query = CachedQuery(cache: cache, Note.self, policy: .fetchFirst, fetch: server.fetch)
        let first = Task { await query.refresh() }
        let second = Task { await query.refresh() }
        #expect(await eventually { cache.queries.flights.census.waiters == 2 })
        #expect(query.isLoading)
        server.gate?.open()
        await first.value
        await second.value
        #expect(!query.isLoading)
        #expect(query.items == notes)
        #expect(server.fetches == 1, "one fetch for both refreshes")
    }

    @Test func aFailedRefreshKeepsTheCachedItemsAndSetsTheError() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes)
        fixture.clock.advance(by: .seconds(3601))
        let server = FakeServer(answer: .failure(.init(reason: "offline")))
        let query = CachedQuery(cache: cache, Note.self, fetch: server.fetch)
        await query.refresh()
        #expect(query.items == notes)
        #expect(query.isStale)
        #expect(query.error as? FakeServer.TestFailure == .init(reason: "offline"))

        server.answer(.items([Note.make(3)], etag: nil))
        await query.refresh()
        #expect(query.items == [Note.make(3)])
        #expect(query.error == nil)
        #expect(!query.isStale)
    }

    @Test func withNothingCachedAFailureIsTheError() async throws {
        let fixture = try Fixture()
        let query = CachedQuery(
            cache: try fixture.openCache(), Note.self, fetch: FakeServer(answer: .failure(.init(reason: "down"))).fetch)
        await query.refresh()
        #expect(query.items == nil)
        #expect(query.error as? FakeServer.TestFailure == .init(reason: "down"))
        #expect(!query.isLoading)
    }

    @Test func aWriteElsewhereShowsInTheQuery() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let query = CachedQuery(cache: cache, Note.self, forKey: "top", fetch: FakeServer(answer: .items([], etag: nil)).fetch)
        let items = ChangeCounter()
        items.track { [weak query] in _ = query?.items }
        try cache.cacheItems(notes, forKey: "top")
        #expect(await eventually { query.items == notes })
        #expect(items.changes >= 1)
        #expect(query.cachedDate == fixture.clock.now)
        try cache.removeItems(Note.self, forKey: "top")
        #expect(await eventually { query.items == nil })
    }

    @Test func aQueryThatGoesStopsFollowing() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        var query: CachedQuery<Note>? = CachedQuery(cache: cache, Note.self, fetch: FakeServer(answer: .items([], etag: nil)).fetch)
        #expect(!cache.queries.observers.isEmpty)
        _ = query
        query = nil
        #expect(await eventually { cache.queries.observers.isEmpty })
    }
}
#endif

#if canImport(Observation)
/// A query is built on a watch: invalidation and triggers refetch while it lives, and its fetch
/// gets the cached items it starts from.
@MainActor
struct CachedQueryWatchTests {
    @Test func anInvalidationRefetchesWhileTheQueryLivesWithTheCachedItemsAsContext() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Note.make(1)])
        let contexts = Locked<[[Int]?]>([])
        let clock = fixture.clock
        let query = CachedQuery(cache: cache, Note.self, refresh: .none, retry: .none) { context in
            contexts.withLock { $0.append(context.cachedItems?.map(\.id)) }
            clock.advance(by: .milliseconds(1))  // a request takes time
            return .items([Note.make(2)])
        }
        await query.refresh()
        #expect(query.items?.map(\.id) == [1], "fresh: the refresh did not fetch")
        #expect(contexts.withLock { $0 }.isEmpty, "making and refreshing a fresh query fetched nothing")

        fixture.clock.advance(by: .seconds(1))
        try cache.invalidate(Note.self)
        #expect(await eventually { query.items?.map(\.id) == [2] })
        #expect(contexts.withLock { $0 } == [[1]])
        #expect(query.isStale == false)
    }
}
#endif
