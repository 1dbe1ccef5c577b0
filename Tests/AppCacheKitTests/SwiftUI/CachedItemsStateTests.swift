import AppCacheTestSupport
import Foundation
import Testing
@testable import AppCacheKit
#if canImport(Observation)
import Observation
#endif

/// The engine of `@CachedItems`, driven as SwiftUI drives the property: one state object per
/// view identity, a new property value (with new closures) at every re-creation of the view,
/// and `update()` before each body.
@MainActor
struct CachedItemsStateTests {
    let notes = [Note.make(1), Note.make(2)]

    /// A fetch that counts its calls and answers `notes`, after `gate` opens if there is one.
    final class CountingFetch: Sendable {
        let calls = Locked(0)
        let gate: Gate?
        let answer: Locked<[Note]>

        init(_ answer: [Note], gated: Bool = false) {
            self.answer = Locked(answer)
            gate = gated ? Gate() : nil
        }

        var count: Int { calls.withLock { $0 } }

        /// A new closure each time, as a re-created view value makes one.
        func makeClosure() -> @Sendable (LoadContext<Note>) async throws -> FetchResult<Note> {
            { [self] _ in
                calls.withLock { $0 += 1 }
                await gate?.wait()
                return .items(answer.withLock { $0 })
            }
        }
    }

    @Test func recreatingTheViewValueAHundredTimesStartsOneWatchAndFetchesOnce() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = CountingFetch(notes, gated: true)
        let state = CachedItemsState<Note>()
        var changes = 0
        state.onChange = { changes += 1 }

        for round in 0..<100 {
            // SwiftUI makes a new property value (its closure new too) and updates it; the state
            // object is the one it keeps.
            state.update(CachedItemsRequest(cache: cache, key: "top", fetch: server.makeClosure()))
            if round == 49 { server.gate?.open() }
            await Task.yield()
        }
        #expect(await eventually { state.items == notes })
        for _ in 0..<100 {
            state.update(CachedItemsRequest(cache: cache, key: "top", fetch: server.makeClosure()))
        }
        // The one watch still follows the collection, and fetched once for 200 updates.
        try cache.cacheItems([Note.make(3)], forKey: "top")
        #expect(await eventually { state.items == [Note.make(3)] })
        #expect(server.count == 1, "one fetch for 200 updates")
        #expect(state.watchesStarted == 1)
        #expect(cache.queries.observers.count == 1, "one watch")
        #expect(changes > 0)
        #expect(!state.isLoading)
    }

    @Test func theNewestFetchClosureIsTheOneCalled() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let first = CountingFetch(notes)
        let second = CountingFetch([Note.make(3)])
        let state = CachedItemsState<Note>()
        state.update(CachedItemsRequest(cache: cache, key: "top", fetch: first.makeClosure()))
        #expect(await eventually { state.items == notes })
        state.update(CachedItemsRequest(cache: cache, key: "top", fetch: second.makeClosure()))
        await state.refresh()
        #expect(state.items == [Note.make(3)])
        #expect((first.count, second.count) == (1, 1))
    }

    @Test func aMemoryHitShowsInTheSameUpdate() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, forKey: "top")
        let server = CountingFetch([])
        let state = CachedItemsState<Note>()
        state.update(CachedItemsRequest(cache: cache, key: "top", fetch: server.makeClosure()))
        #expect(state.items == notes, "shown before any await")
        #expect(!state.isLoading)
        #expect(state.cachedDate == fixture.clock.now)
        #expect(await eventually { cache.queries.observers.looks >= 1 })
        #expect(server.count == 0, "fresh: nothing fetched")
    }

    @Test func aCollectionOnDiskOnlyArrivesWithoutTheMainActorReadingIt() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .diskOnly)
        let posts = [Post(id: 1), Post(id: 2)]
        try cache.cacheItems(posts, forKey: "top")
        let state = CachedItemsState<Post>()
        let decodes = Locked(0)
        Post.$decodes.withValue(decodes) {
            state.update(CachedItemsRequest(cache: cache, key: "top") { _ in .items([]) })
        }
        #expect(decodes.withLock { $0 } == 0, "the update decoded nothing on the main actor")
        #expect(state.items == nil, "not in memory: nothing shown yet")
        #expect(state.isLoading)
        #expect(await eventually { state.items == posts })
        #expect(!state.isLoading)
    }

    @Test func aNewKeyKeepsTheOldItemsUntilTheNewOnesArrive() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, forKey: "a")
        let server = CountingFetch([Note.make(9)], gated: true)
        let state = CachedItemsState<Note>()
        state.update(CachedItemsRequest(cache: cache, key: "a", fetch: server.makeClosure()))
        #expect(state.items == notes)

        state.update(CachedItemsRequest(cache: cache, key: "b", fetch: server.makeClosure()))
        #expect(state.isLoading)
        #expect(await eventually { server.count == 1 }, "b is not cached: fetched")
        #expect(state.items == notes, "a's items stay while b's are fetched")
        #expect(cache.queries.observers.count == 1, "a's watch stopped")
        server.gate?.open()
        #expect(await eventually { state.items == [Note.make(9)] })
        #expect(!state.isLoading)
        #expect(state.watchesStarted == 2)

        // A write to the old key no longer reaches the state.
        try cache.cacheItems([Note.make(5)], forKey: "a")
        try cache.cacheItems([Note.make(6)], forKey: "b")
        #expect(await eventually { state.items == [Note.make(6)] })
    }

    @Test func theWatchStopsWhenTheStateGoes() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        var state: CachedItemsState<Note>? = CachedItemsState<Note>()
        state?.update(CachedItemsRequest(cache: cache, key: "top", fetch: CountingFetch(notes).makeClosure()))
        #expect(await eventually { state?.items == notes })
        #expect(cache.queries.observers.count == 1)
        state = nil
        #expect(await eventually { cache.queries.observers.count == 0 })
    }

    @Test func aFailedFirstFetchIsTheErrorAndTheStateStillFollowsTheCollection() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let state = CachedItemsState<Note>()
        state.update(CachedItemsRequest(cache: cache, key: "top", retry: .none) { _ in throw FakeServer.TestFailure(reason: "down") })
        #expect(await eventually { state.refreshError != nil })
        #expect(state.refreshError as? FakeServer.TestFailure == .init(reason: "down"))
        #expect(state.items == nil)
        #expect(!state.isLoading)
        try cache.cacheItems(notes, forKey: "top")
        #expect(await eventually { state.items == notes })
        #expect(cache.queries.observers.count == 1)
    }

    @Test func refreshFetchesEvenWhenFreshAndLoadsUntilItEnds() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, forKey: "top")
        let server = CountingFetch([Note.make(7)], gated: true)
        let state = CachedItemsState<Note>()
        state.update(CachedItemsRequest(cache: cache, key: "top", fetch: server.makeClosure()))
        let refresh = Task { await state.refresh() }
        #expect(await eventually { server.count == 1 })
        #expect(state.isLoading)
        server.gate?.open()
        await refresh.value
        #expect(!state.isLoading)
        #expect(state.items == [Note.make(7)])
        #expect(state.refreshError == nil)
    }

    @Test func loadNextPageAppendsAndSaysWhetherAnotherFollows() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let state = CachedItemsState<Post>()
        var request = CachedItemsRequest<Post>(cache: cache, key: "timeline") { _ in .page([Post(id: 1), Post(id: 2)], next: "2") }
        request.nextPage = CachedItemsRequest<Post>.pager(maxCount: nil, retry: .none) { cursor in
            cursor == "2" ? Page(items: [Post(id: 3)], next: nil) : Page(items: [], next: nil)
        }
        state.update(request)
        #expect(await eventually { state.items?.map(\.id) == [1, 2] })
        #expect(await eventually { state.hasNextPage })
        try await state.loadNextPage()
        #expect(state.items?.map(\.id) == [1, 2, 3])
        #expect(await eventually { !state.hasNextPage })
        #expect(!state.isLoading)
        await #expect(throws: AppCacheError.self) { try await state.loadNextPage() }
    }

    #if canImport(Observation)
    @Test func observationFollowsWhatAViewReads() async throws {
        // What SwiftUI does on iOS 17 for a view that reads the state's properties in its body:
        // track the reads, hear of the next change once.
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, forKey: "top")
        let state = CachedItemsState<Note>()
        state.update(CachedItemsRequest(cache: cache, key: "top", policy: .cacheFirst, fetch: { _ in .items([]) }))
        #expect(await eventually { state.items == notes })

        let told = Locked(0)
        withObservationTracking {
            _ = state.items
            _ = state.isLoading
        } onChange: {
            told.withLock { $0 += 1 }
        }
        #expect(told.withLock { $0 } == 0, "reading tells nothing")
        try cache.cacheItems([Note.make(3)], forKey: "top")
        #expect(await eventually { state.items == [Note.make(3)] })
        #expect(told.withLock { $0 } == 1, "the change is told, once")

        // A view that read nothing of it is not told.
        let untouched = Locked(0)
        withObservationTracking { _ = 0 } onChange: { untouched.withLock { $0 += 1 } }
        try cache.cacheItems([Note.make(4)], forKey: "top")
        #expect(await eventually { state.items == [Note.make(4)] })
        #expect(untouched.withLock { $0 } == 0)
    }
    #endif
}
