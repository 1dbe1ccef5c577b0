import Foundation
import Testing
@testable import AppCacheKit

/// A `load` or `watch` called from inside a fetch: of the fetch's own collection it throws
/// `nestedLoad` at once (it would wait for itself); of another collection it works. The fetches
/// capture the cache weakly, as the documentation says (the cache keeps a load's fetch for
/// background refreshes).
struct NestedLoadTests {
    let notes = [Note.make(1), Note.make(2)]
    let others = [Note.make(7)]

    /// What an inner call threw, recorded by the fetch that made it.
    final class Inner: Sendable {
        private let state = Locked<(answers: [[Note]], error: (any Error)?)>(([], nil))

        var answers: [[Note]] { state.withLock { $0.answers } }
        var code: AppCacheError.Code? { state.withLock { ($0.error as? AppCacheError)?.code } }
        var error: (any Error)? { state.withLock { $0.error } }

        func record(_ stream: AsyncThrowingStream<LoadedItems<Note>, any Error>) async {
            let (answers, error) = await collect(stream)
            state.withLock { $0 = (answers.map(\.items), error) }
        }
    }

    @Test func aLoadOfTheSameCollectionInsideItsFetchThrowsNestedLoad() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let inner = Inner()
        let notes = notes
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", retry: .none) { [weak cache] _ in
            guard let cache else { return .items([]) }
            await inner.record(cache.load(Note.self, forKey: "top", retry: .none) { _ in .items([]) })
            return .items(notes)
        })
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes], "the outer load goes on")
        #expect(inner.code == .nestedLoad)
        #expect(inner.answers.isEmpty)
        let refusal = try #require(inner.error as? AppCacheError)
        #expect(refusal.key == "top" && refusal.cacheName == Note.cacheName)
        #expect(refusal.message.contains("inside the fetch of the same collection"))
    }

    @Test func aWatchOfTheSameCollectionInsideItsFetchThrowsNestedLoad() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let inner = Inner()
        let notes = notes
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", retry: .none) { [weak cache] _ in
            guard let cache else { return .items([]) }
            await inner.record(cache.watch(Note.self, forKey: "top", refresh: .none, retry: .none) { _ in .items([]) })
            return .items(notes)
        })
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes])
        #expect(inner.code == .nestedLoad)
    }

    @Test func aLoadInsideAWatchsFetchOfItsCollectionThrowsNestedLoad() async throws {
        let fixture = try Fixture()
        // With a memory layer: without one, a watch cannot tell a look at the same items from a
        // change, and may yield them again on any wake-up.
        let cache = try fixture.openCache(memory: .layer())
        let inner = Inner()
        let notes = notes
        let seen = StreamRecorder(cache.watch(Note.self, forKey: "top", refresh: .none, retry: .none) { [weak cache] _ in
            guard let cache else { return .items([]) }
            await inner.record(cache.load(Note.self, forKey: "top", policy: .cacheFirst, retry: .none) { _ in .items([]) })
            return .items(notes)
        })
        defer { seen.stop() }
        #expect(await eventually { !seen.seen.isEmpty })
        #expect(seen.seen.first?.items == notes)
        #expect(inner.code == .nestedLoad)
    }

    @Test func aLoadOfAnotherCollectionInsideAFetchWorks() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let inner = Inner()
        let (notes, others) = (notes, others)
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", retry: .none) { [weak cache] _ in
            guard let cache else { return .items([]) }
            // Another key of the type: another collection.
            await inner.record(cache.load(Note.self, forKey: "other", retry: .none) { _ in .items(others) })
            return .items(notes)
        })
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes])
        #expect(inner.error == nil)
        #expect(inner.answers == [others])
        #expect(try cache.getCachedItems(Note.self, forKey: "other") == others)
    }

    @Test func theSameKeyOfAnotherUserInsideAFetchWorks() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let alice = cache.session
        try cache.switchUser(to: "bob")
        let inner = Inner()
        let (notes, others) = (notes, others)
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", retry: .none, for: alice) { [weak cache] _ in
            guard let cache else { return .items([]) }
            await inner.record(cache.load(Note.self, forKey: "top", retry: .none) { _ in .items(others) })
            return .items(notes)
        })
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes])
        #expect(inner.error == nil, "bob's collection is not alice's")
        #expect(inner.answers == [others])
    }

    @Test func theSameKeyOfAnotherCacheInsideAFetchWorks() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let elsewhere = try Fixture()
        let other = try elsewhere.openCache()
        let inner = Inner()
        let (notes, others) = (notes, others)
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", retry: .none) { [weak other] _ in
            guard let other else { return .items([]) }
            await inner.record(other.load(Note.self, forKey: "top", retry: .none) { _ in .items(others) })
            return .items(notes)
        })
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes])
        #expect(inner.error == nil, "another cache's collection, fetched in its own flights")
        #expect(inner.answers == [others])
        withExtendedLifetime(other) {}
    }

    @Test func aCycleAcrossCollectionsIsRefused() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let inner = Inner()
        let (notes, others) = (notes, others)
        // top's fetch loads other, whose fetch loads top: top would wait for itself.
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", retry: .none) { [weak cache] _ in
            guard let cache else { return .items([]) }
            _ = await collect(cache.load(Note.self, forKey: "other", retry: .none) { [weak cache] _ in
                guard let cache else { return .items([]) }
                await inner.record(cache.load(Note.self, forKey: "top", retry: .none) { _ in .items([]) })
                return .items(others)
            })
            return .items(notes)
        })
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes])
        #expect(inner.code == .nestedLoad)
        #expect(try cache.getCachedItems(Note.self, forKey: "other") == others)
    }
}
