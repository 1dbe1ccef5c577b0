import Dispatch
import Foundation
import Testing
@testable import AppCacheKit

/// `load`: what it yields under each policy, when it fetches, what it stores and for whom.
struct LoadTests {
    let notes = [Note.make(1), Note.make(2)]
    let fresher = [Note.make(3), Note.make(4), Note.make(5)]

    @Test func staleWhileRevalidateYieldsFreshItemsAndDoesNotFetch() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, forKey: "top")
        let server = FakeServer(answer: .items(fresher, etag: nil))

        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", fetch: server.fetch))
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes])
        #expect(answers.map(\.source) == [.memory])
        #expect(answers.first?.isStale == false)
        #expect(server.fetches == 0)
    }

    @Test func staleWhileRevalidateShowsStaleItemsThenTheFetchedOnes() async throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems(notes, forKey: "top")
        fixture.clock.advance(by: .seconds(3601))
        let cache = try fixture.openCache()  // a fresh instance: the first answer comes from disk
        let server = FakeServer(answer: .items(fresher, etag: nil))

        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", fetch: server.fetch))
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes, fresher])
        #expect(answers.map(\.source) == [.disk, .fetch])
        #expect(answers.map(\.isStale) == [true, false])
        #expect(answers.last?.cachedDate == fixture.clock.now)
        #expect(server.fetches == 1)
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == fresher, "stored as cacheItems would")
        #expect(!cache.isStale(Note.self, forKey: "top"))
    }

    @Test func aMissFetchesStoresAndYieldsOnce() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let server = FakeServer(answer: .items(fresher, etag: nil))
        let (answers, error) = await collect(cache.load(Note.self, forKey: "top", fetch: server.fetch))
        #expect(error == nil)
        #expect(answers.map(\.source) == [.fetch])
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == fresher)
        #expect(try fixture.openCache().getCachedItems(Note.self, forKey: "top") == fresher, "on disk")
    }

    @Test func cacheFirstTakesStaleItemsWithoutFetching() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes)
        fixture.clock.advance(by: .seconds(7200))
        let server = FakeServer(answer: .items(fresher, etag: nil))

        let (answers, _) = await collect(cache.load(Note.self, policy: .cacheFirst, fetch: server.fetch))
        #expect(answers.map(\.items) == [notes])
        #expect(answers.first?.isStale == true)
        #expect(server.fetches == 0)

        // Nothing cached: it fetches.
        let (missing, _) = await collect(cache.load(Note.self, forKey: "other", policy: .cacheFirst, fetch: server.fetch))
        #expect(missing.map(\.source) == [.fetch])
        #expect(server.fetches == 1)
    }

    @Test func fetchFirstFetchesEvenWhenFreshAndFallsBackWhenOffline() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes)
        let server = FakeServer(answer: .items(fresher, etag: nil))

        let (answers, _) = await collect(cache.load(Note.self, policy: .fetchFirst, fetch: server.fetch))
        #expect(answers.map(\.items) == [fresher])
        #expect(answers.map(\.source) == [.fetch])

        server.answer(.failure(.init(reason: "offline")))
        let (offline, error) = await collect(cache.load(Note.self, policy: .fetchFirst, fetch: server.fetch))
        #expect(error == nil, "cached items stand in: the stream finishes normally")
        #expect(offline.map(\.items) == [fresher])
        #expect(offline.first?.refreshError as? FakeServer.TestFailure == .init(reason: "offline"))
    }

    @Test func aFailedRefreshKeepsTheCachedItemsAndSaysWhy() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes)
        fixture.clock.advance(by: .seconds(3601))
        let server = FakeServer(answer: .failure(.init(reason: "offline")))

        let (answers, error) = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(error == nil)
        #expect(answers.map(\.items) == [notes, notes])
        #expect(answers[0].refreshError == nil)
        #expect(answers[1].refreshError as? FakeServer.TestFailure == .init(reason: "offline"))
        #expect(answers[1].isStale)
        #expect(try cache.getCachedItems(Note.self) == notes, "nothing was lost")
    }

    @Test func aFailedFetchWithNothingCachedThrowsItsOwnError() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let server = FakeServer(answer: .failure(.init(reason: "offline")))
        let (answers, error) = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(answers.isEmpty)
        #expect(error as? FakeServer.TestFailure == .init(reason: "offline"), "the fetch's error, as thrown")
    }

    @Test func concurrentLoadsShareOneFetch() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(fresher, etag: nil), gated: true)

        let loads = (0..<6).map { _ in
            Task { await collect(cache.load(Note.self, forKey: "top", fetch: server.fetch)) }
        }
        #expect(await eventually { cache.queries.flights.census.waiters == 6 }, "every load waits for the one flight")
        #expect(cache.queries.flights.census.flights == 1)
        server.gate?.open()
        for load in loads {
            let (answers, error) = await load.value
            #expect(error == nil)
            #expect(answers.map(\.items) == [fresher])
            #expect(answers.map(\.source) == [.fetch])
        }
        #expect(server.fetches == 1)
        #expect(await eventually { cache.queries.flights.census.flights == 0 })

        // Another collection, or the same one later, is another flight.
        _ = await collect(cache.load(Note.self, forKey: "other", fetch: server.fetch))
        #expect(server.fetches == 2)
    }

    @Test func validatorsAreStoredWithTheItemsAndSurviveAReopen() async throws {
        let fixture = try Fixture()
        let server = FakeServer(answer: .items(notes, etag: "\"v1\""))
        let first = try fixture.openCache(memory: .layer())
        _ = await collect(first.load(Note.self, fetch: server.fetch))
        #expect(server.receivedValidators == [nil], "nothing stored yet")
        try first.flush()  // the app goes away

        fixture.clock.advance(by: .seconds(3601))
        let reopened = try fixture.openCache(memory: .layer())
        server.answer(.items(fresher, etag: "\"v2\""))
        _ = await collect(reopened.load(Note.self, fetch: server.fetch))
        #expect(server.receivedValidators.last == CacheValidators(etag: "\"v1\""))

        // From memory too, and replaced by the newer ones.
        fixture.clock.advance(by: .seconds(3601))
        _ = await collect(reopened.load(Note.self, fetch: server.fetch))
        #expect(server.receivedValidators.last == CacheValidators(etag: "\"v2\""))

        // A plain cacheItems stores no validators: the next fetch is unconditional.
        try reopened.cacheItems(notes)
        fixture.clock.advance(by: .seconds(3601))
        _ = await collect(reopened.load(Note.self, fetch: server.fetch))
        #expect(server.receivedValidators.last == .some(nil))
    }

    // Looks at archive files: each collection a file of its own.
    @Test func notModifiedRedatesTheArchiveWithoutRewritingIt() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let server = FakeServer(answer: .items(notes, etag: "\"v1\""))
        _ = await collect(try fixture.openCache().load(Note.self, fetch: server.fetch))
        let path = fixture.archivePath(Note.self)
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        let inodeBefore = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int

        fixture.clock.advance(by: .seconds(3601))
        let cache = try fixture.openCache()
        server.answer(.notModified)
        let (answers, error) = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(error == nil)
        #expect(answers.map(\.source) == [.disk, .notModified])
        #expect(answers.map(\.items) == [notes, notes])
        #expect(answers.map(\.isStale) == [true, false])
        #expect(answers.last?.cachedDate == fixture.clock.now)

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytesBefore, "the payload is untouched")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == inodeBefore, "the same file, not a rewrite")
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        #expect(abs((modified ?? .distantPast).timeIntervalSince(fixture.clock.now)) < 0.001)
        #expect(!cache.isStale(Note.self))
        #expect(!(try fixture.openCache()).isStale(Note.self), "another instance sees the new date")
        #expect(server.receivedValidators.last == CacheValidators(etag: "\"v1\""), "validators are kept")
    }

    @Test func notModifiedRedatesADirtyCollectionInMemory() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems(notes)
        fixture.clock.advance(by: .seconds(3601))
        let server = FakeServer(answer: .notModified)
        let (answers, _) = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(answers.map(\.source) == [.memory, .notModified])
        #expect(!cache.isStale(Note.self))
        try cache.flush()
        #expect(!(try fixture.openCache()).isStale(Note.self), "written with the new date")
    }

    @Test func notModifiedWithNothingCachedIsAnError() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let server = FakeServer(answer: .notModified)
        let (answers, error) = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(answers.isEmpty)
        #expect((error as? AppCacheError)?.code == .notCached)
    }

    @Test func endingTheConsumerCancelsAFetchNobodyWaitsForAndStoresNothing() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(fresher, etag: nil), gated: true)
        let consumer = Task { await collect(cache.load(Note.self, fetch: server.fetch)) }
        #expect(await eventually { server.fetches == 1 })
        consumer.cancel()
        let (answers, _) = await consumer.value
        #expect(answers.isEmpty)
        #expect(await eventually { cache.queries.flights.census.waiters == 0 })

        server.gate?.open()  // the fetch returns after all
        #expect(await eventually { server.finished == 1 && cache.queries.flights.census.flights == 0 })
        #expect(try cache.getCachedItems(Note.self) == nil, "a cancelled fetch stores nothing")
        #expect(!fixture.hasArchive(Note.self))
    }

    @Test func oneCancelledLoadDoesNotCancelTheFetchOthersWaitFor() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(fresher, etag: nil), gated: true)
        let leaving = Task { await collect(cache.load(Note.self, fetch: server.fetch)) }
        let staying = Task { await collect(cache.load(Note.self, fetch: server.fetch)) }
        #expect(await eventually { cache.queries.flights.census.waiters == 2 })
        leaving.cancel()
        #expect(await eventually { cache.queries.flights.census.waiters == 1 })
        server.gate?.open()
        #expect(await staying.value.answers.map(\.items) == [fresher])
        #expect(try cache.getCachedItems(Note.self) == fresher)
        #expect(server.fetches == 1)
    }

    @Test func aLogoutDuringAFetchDropsItsResult() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(fresher, etag: nil), gated: true)
        let load = Task { await collect(cache.load(Note.self, fetch: server.fetch)) }
        #expect(await eventually { server.fetches == 1 })

        try cache.signOut(removingData: true)
        server.gate?.open()
        let (answers, error) = await load.value
        #expect(error == nil)
        #expect(answers.isEmpty, "the result is dropped, not shown")
        #expect(!fixture.hasArchive(Note.self, user: "alice"), "not written back to alice")
        #expect(!fixture.hasArchive(Note.self, user: nil), "nor to the signed-out space")
        #expect(try cache.getCachedItems(Note.self) == nil)
    }

    @Test func aRemoveAllDuringAFetchDropsItsResult() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let server = FakeServer(answer: .items(fresher, etag: nil), gated: true)
        let load = Task { await collect(cache.load(Note.self, fetch: server.fetch)) }
        #expect(await eventually { server.fetches == 1 })
        try cache.removeAll()
        server.gate?.open()
        #expect(await load.value.answers.isEmpty)
        #expect(cache.user == "alice")
        #expect(try cache.getCachedItems(Note.self) == nil)
    }

    @Test func aLoginDuringAFetchStoresTheResultForTheUserWhoStartedIt() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let server = FakeServer(answer: .items(fresher, etag: nil), gated: true)
        let load = Task { await collect(cache.load(Note.self, fetch: server.fetch)) }
        #expect(await eventually { server.fetches == 1 })

        try cache.switchUser(to: "bob")
        server.gate?.open()
        _ = await load.value
        #expect(try cache.getCachedItems(Note.self) == nil, "never in bob's space")
        #expect(fixture.hasArchive(Note.self, user: "alice"))
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Note.self) == fresher)
    }

    /// An actor running on a thread of its own, like the main actor: the test keeps it busy
    /// while a load it started must read the disk elsewhere. (Not the main actor itself: on
    /// Linux that runs on one of the few threads the tests share, and keeping it busy would
    /// starve them.)
    actor Caller {
        final class OwnThread: SerialExecutor {
            /// Set on the actor's queue: code can tell it runs there.
            static let marker = DispatchSpecificKey<Bool>()
            let queue: DispatchQueue = {
                let queue = DispatchQueue(label: "LoadTests.Caller")
                queue.setSpecific(key: marker, value: true)
                return queue
            }()

            func enqueue(_ job: consuming ExecutorJob) {
                let job = UnownedJob(job)
                let executor = asUnownedSerialExecutor()
                queue.async { job.runSynchronously(on: executor) }
            }
        }

        nonisolated let executor = OwnThread()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Starts a load, then blocks this actor's thread, without suspending, until `read` is
        /// signalled (or 60 seconds pass: the tests share two cores with slower ones); returns
        /// the stream and whether the signal came.
        func startLoadAndStayBusy(
            _ cache: AppCache, fetch: @escaping @Sendable (CacheValidators?) async throws -> FetchResult<Note>,
            until read: DispatchSemaphore
        ) -> (AsyncThrowingStream<LoadedItems<Note>, any Error>, Bool) {
            let stream = cache.load(Note.self, fetch: fetch)
            // (Longer under the sanitizers, where the whole suite on two cores is several times slower.)
            return (stream, read.wait(timeout: .now() + 60 * sanitizerSlowdown) == .success)
        }
    }

    @Test func aLoadReadsTheDiskWhileItsCallersExecutorIsBusy() async throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems(notes)
        let firstRead = DispatchSemaphore(value: 0)
        let readsOnTheCaller = Locked(0)
        var configuration = fixture.configuration()
        configuration.faults = { operation, _ in
            if operation == .read {
                if DispatchQueue.getSpecific(key: Caller.OwnThread.marker) == true { readsOnTheCaller.withLock { $0 += 1 } }
                firstRead.signal()
            }
            return nil
        }
        let cache = try AppCache(configuration: configuration)
        let server = FakeServer(answer: .items(fresher, etag: nil))
        let (stream, readWhileBusy) = await Caller().startLoadAndStayBusy(cache, fetch: server.fetch, until: firstRead)
        #expect(readWhileBusy, "the archive was read while the caller's executor was busy")
        #expect(readsOnTheCaller.withLock { $0 } == 0, "never on the caller's executor")
        let (answers, _) = await collect(stream)
        #expect(answers.map(\.source) == [.disk])
    }

    @Test func validatorsTooLongForAHeaderAreLeftOutNotTheItems() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let huge = String(repeating: "e", count: ArchiveHeader.maximumNameLength + 1)
        let server = FakeServer(answer: .items(notes, etag: huge))
        _ = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(try cache.getCachedItems(Note.self) == notes)
        fixture.clock.advance(by: .seconds(3601))
        _ = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(server.receivedValidators.last == .some(nil), "the next fetch is unconditional")
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    @Test func aRefreshKeepsThePin() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems(notes, pinned: true)
        fixture.clock.advance(by: .seconds(3601))
        _ = await collect(cache.load(Note.self, fetch: FakeServer(answer: .items(fresher, etag: nil)).fetch))
        #expect(try await cache.entries().first { $0.cacheName == "Notes" }?.isPinned == true)
    }
}
