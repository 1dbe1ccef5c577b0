import Foundation
import Testing
@testable import AppCacheKit

/// `updates(of:forKey:)`: the current items at once, then every change, in order.
struct UpdatesTests {
    typealias Follower = StreamRecorder<[Note]?>

    let notes = [Note.make(1), Note.make(2)]
    let fresher = [Note.make(3)]

    @Test func yieldsTheCurrentItemsThenEveryChange() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        try cache.cacheItems(notes, forKey: "top")
        let follower = Follower(cache.updates(Note.self, forKey: "top"))
        #expect(await follower.reaches(notes))
        try cache.cacheItems(fresher, forKey: "top")
        #expect(await follower.reaches(fresher))
        try cache.removeItems(Note.self, forKey: "top")
        #expect(await follower.reaches(nil))
        try cache.cacheItem(Note.make(9), forKey: "top")
        #expect(await follower.reaches([Note.make(9)]))
        try cache.updateItems(Note.self, forKey: "top") { $0.append(Note.make(10)) }
        #expect(await follower.reaches([Note.make(9), Note.make(10)]))

        // Other collections are not its business: once it has looked again (a flush wakes
        // every observer), it has yielded nothing more.
        let before = follower.seen.count
        let looks = cache.queries.observers.looks
        try cache.cacheItems(notes, forKey: "other")
        try cache.flush()
        #expect(await eventually { cache.queries.observers.looks > looks })
        #expect(follower.seen.count == before)
        follower.stop()
    }

    @Test func startsWithNilWhenNothingIsCachedAndSeesALoadsResult() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        let follower = Follower(cache.updates(Note.self))
        #expect(await follower.reaches(nil))
        _ = await collect(cache.load(Note.self, fetch: FakeServer(answer: .items(notes, etag: nil)).fetch))
        #expect(await follower.reaches(notes))
        follower.stop()
    }

    @Test func neverYieldsAnOlderValueAfterANewerOne() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        let follower = Follower(cache.updates(Note.self))
        for id in 0..<300 {
            try cache.cacheItems([Note.make(id)])
            if id.isMultiple(of: 50) { await Task.yield() }
        }
        #expect(await follower.reaches([Note.make(299)]))
        let ids = follower.seen.compactMap { $0?.first?.id }
        #expect(ids == ids.sorted(), "values arrive in the order they were cached (some coalesced)")
        follower.stop()
    }

    @Test func reDatingItemsNotYetWrittenYieldsNothingNew() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        try cache.cacheItems(notes)
        let follower = Follower(cache.updates(Note.self))
        #expect(await follower.reaches(notes))
        fixture.clock.advance(by: .seconds(3601))
        let (answers, _) = await collect(cache.load(Note.self, fetch: FakeServer(answer: .notModified).fetch))
        #expect(answers.map(\.source) == [.memory, .notModified])
        let looks = cache.queries.observers.looks
        // The re-dated items reach the disk: a change on disk, so the follower looks again, and
        // yields nothing new (the same items).
        #expect(cache.memoryStatistics.dirtyEntries == 1)
        try cache.flush()
        #expect(await eventually { cache.queries.observers.looks > looks })
        #expect(follower.seen.count == 1)
        try cache.cacheItems(fresher)
        #expect(await follower.reaches(fresher))
        #expect(follower.seen.map { $0?.map(\.id) } == [[1, 2], [3]], "the server saying the items are current changes no items")
        follower.stop()
    }

    /// The stream's one timer is the expiry's: on the real clock (this test's only), a time to
    /// live passing is yielded with no call and no other change.
    @Test func expiryIsAChangeWithoutAnyCall() async throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration(memory: .layer())
        configuration.now = { Date() }
        let cache = try AppCache(configuration: configuration)
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        try cache.cacheItems(notes, expiresAfter: .seconds(2))
        #expect(try cache.getCachedItems(Note.self) == notes)
        let follower = Follower(cache.updates(Note.self))
        #expect(await follower.reaches(nil), "the expiry arrives with no call")
        // (A consumer slower than the expiry may see only the last value: values coalesce.)
        #expect(follower.seen.allSatisfy { $0 == notes || $0 == nil })
        follower.stop()
    }

    @Test func userSwitchesAndWipesShowTheNewUsersItems() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        try cache.cacheItems(notes)
        try cache.switchUser(to: "bob")
        try cache.cacheItems(fresher)
        try cache.switchUser(to: "alice")

        let follower = Follower(cache.updates(Note.self))
        #expect(await follower.reaches(notes))
        try cache.switchUser(to: "bob")
        #expect(await follower.reaches(fresher))
        try cache.removeUser("bob")
        #expect(await follower.reaches(nil))
        #expect(cache.user == nil, "removing the current user signs out")
        try cache.cacheItems(notes)
        #expect(await follower.reaches(notes))
        try cache.removeAllUsers()
        #expect(await follower.reaches(nil))
        follower.stop()
    }

    /// That it arrives; how soon (within 2 seconds) is measured by the benchmark program's
    /// `updates` row, not timed here.
    @Test func aChangeByAnotherInstanceOnTheRootArrives() async throws {
        let fixture = try Fixture()
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let widget = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        defer { withExtendedLifetime(widget) {} }  // updates streams hold the cache weakly
        try app.cacheItems(notes)
        try app.flush()
        let follower = Follower(widget.updates(Note.self))
        #expect(await follower.reaches(notes))

        try app.cacheItems(fresher)
        try app.flush()
        #expect(await follower.reaches(fresher))

        try app.removeItems(Note.self)
        #expect(await follower.reaches(nil))
        follower.stop()
    }

    /// The streams hold their cache weakly, and finish when it goes, as documented: a task
    /// following one does not wait for ever.
    @Test func streamsFinishWhenTheirCacheGoes() async throws {
        let fixture = try Fixture()
        var cache: AppCache? = try fixture.openCache(memory: .layer())
        let follower = Follower(try #require(cache).updates(Note.self))
        let pending = StreamRecorder(try #require(cache).pendingMutationUpdates())
        #expect(await follower.reaches(nil))
        #expect(await eventually { pending.last == [] })
        #expect(!follower.hasFinished && !pending.hasFinished, "both follow while the cache lives")
        cache = nil
        #expect(await eventually { follower.hasFinished }, "the collection's stream finished")
        #expect(await eventually { pending.hasFinished }, "the pending changes' stream finished")
    }

    @Test func endingTheConsumerFreesTheObserver() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        defer { withExtendedLifetime(cache) {} }  // updates streams hold the cache weakly
        let follower = Follower(cache.updates(Note.self))
        #expect(await follower.reaches(nil))
        #expect(!cache.queries.observers.isEmpty)
        follower.stop()
        #expect(await eventually { cache.queries.observers.isEmpty })
    }
}

extension StreamRecorder where Element == [Note]? {
    /// Waits until the latest value is `expected`.
    func reaches(_ expected: [Note]?) async -> Bool {
        await eventually { last == .some(expected) }
    }
}
