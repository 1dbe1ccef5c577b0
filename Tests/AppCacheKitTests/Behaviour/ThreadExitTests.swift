import Foundation
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache (or a query) whose last reference a `Thread`'s closure holds goes while that thread
/// exits: in a destructor of the thread's specific data, after libdispatch freed its own (on
/// Linux without forgetting it, so that a dispatch call from `deinit`, a task cancelled or
/// resumed among them, frees its continuations a second time). AddressSanitizer (CI's quick run
/// holds this suite) reports some such second frees at once; glibc's own checks in a plain
/// build abort on the others (`tcache_thread_shutdown(): unaligned tcache chunk detected`).
struct ThreadExitTests {
    /// Runs `body(object, worker)` from two `concurrentPerform` workers on a new thread whose
    /// closure takes the last reference to the object, a cache or a query (the caller's becomes
    /// `nil`). The calling thread finishes last, so that it keeps the apply's continuation in
    /// libdispatch's cache of the thread: what a second free at its exit would free again.
    private func releaseAtThreadExit<Object: AnyObject & Sendable>(_ held: inout Object?, _ body: @escaping @Sendable (Object, Int) -> Void) {
        let go = DispatchSemaphore(value: 0)
        var object = held.moveOut()
        Thread.detachNewThread { [object] in
            go.wait()
            guard let object else { return }
            let caller = pthread_self()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                body(object, worker)
                if pthread_equal(pthread_self(), caller) != 0 { usleep(2_000) }
            }
        }
        object = nil
        go.signal()
    }

    @Test func aCacheReleasedAsItsThreadExitsWritesWhatIsDirty() async throws {
        let fixture = try Fixture()
        for round in 0..<8 {
            var cache: AppCache? = try fixture.openCache(memory: .layer(writeBackDelay: nil))
            releaseAtThreadExit(&cache) { cache, worker in
                _ = try? cache.updateItems(Plain.self, forKey: "r\(round)-w\(worker)") { $0.append(Plain(value: round)) }
            }
        }
        for round in 0..<8 {
            for worker in 0..<2 {
                #expect(await eventually { fixture.hasArchive(Plain.self, key: "r\(round)-w\(worker)") }, "round \(round) worker \(worker)")
            }
        }
        let reader = try fixture.openCache()
        #expect(try reader.getCachedItems(Plain.self, forKey: "r7-w1") == [Plain(value: 7)])
    }

    /// A queued change for the items of ``Plain``.
    struct Nudge: CacheMutation {
        static let mutationName = "nudge"
        var value: Int
        var key: String? { "nudged" }
        func apply(to items: inout [Plain]) { items.append(Plain(value: value)) }
    }

    /// A cache whose sender waits on its server when the cache goes: the sender is stopped (its
    /// task cancelled) without a dispatch call at the thread's exit, and the change stays queued
    /// for the next launch.
    @Test func aCacheReleasedAsItsThreadExitsStopsItsSenderAndKeepsTheChange() async throws {
        let fixture = try Fixture()
        for round in 0..<8 {
            var cache: AppCache? = try fixture.openCache(memory: .layer(writeBackDelay: nil))
            let sending = Locked(false)
            cache?.registerSender(for: Nudge.self) { _, _ in
                sending.withLock { $0 = true }
                try await Task.sleep(for: .seconds(600))
            }
            _ = try #require(cache).enqueue(Nudge(value: round))
            #expect(await eventually { sending.withLock { $0 } }, "round \(round): the send began")
            weak let released = cache
            releaseAtThreadExit(&cache) { cache, worker in
                _ = try? cache.updateItems(Plain.self, forKey: "s\(round)-w\(worker)") { $0.append(Plain(value: round)) }
            }
            #expect(await eventually { released == nil }, "round \(round): the cache went with its thread")
        }
        let relaunched = try fixture.openCache()
        relaunched.registerMutationKind(Nudge.self)
        #expect(relaunched.pendingMutations.count == 8)
    }

    /// A cache whose events a task follows, released with a thread's exit: its event stream ends
    /// (the waiting consumer resumed) without a dispatch call in the exit.
    @Test func aCacheReleasedAsItsThreadExitsEndsItsEventStreams() async throws {
        let fixture = try Fixture()
        for round in 0..<8 {
            var cache: AppCache? = try fixture.openCache(memory: .layer(writeBackDelay: nil))
            let events = StreamRecorder(try #require(cache).events)
            releaseAtThreadExit(&cache) { cache, worker in
                _ = try? cache.updateItems(Plain.self, forKey: "e\(round)-w\(worker)") { $0.append(Plain(value: round)) }
            }
            #expect(await eventually { events.hasFinished }, "round \(round): the stream ended when the cache went")
            #expect(events.seen.count >= 2, "round \(round): the updates' events arrived before the end")
        }
    }

    /// A cache whose collection and queued changes tasks follow, released with a thread's exit:
    /// both streams end (their consumers resumed) without a dispatch call in the exit.
    @Test func aCacheReleasedAsItsThreadExitsEndsItsUpdateStreams() async throws {
        let fixture = try Fixture()
        for round in 0..<8 {
            var cache: AppCache? = try fixture.openCache(memory: .layer(writeBackDelay: nil))
            let updates = StreamRecorder(try #require(cache).updates(Plain.self, forKey: "u\(round)-w0"))
            let pending = StreamRecorder(try #require(cache).pendingMutationUpdates())
            #expect(await eventually { !updates.seen.isEmpty }, "round \(round): the stream gave the collection as it is")
            weak let released = cache
            releaseAtThreadExit(&cache) { cache, worker in
                _ = try? cache.updateItems(Plain.self, forKey: "u\(round)-w\(worker)") { $0.append(Plain(value: round)) }
            }
            #expect(await eventually { released == nil }, "round \(round): the cache went with its thread")
            #expect(await eventually { updates.hasFinished && pending.hasFinished }, "round \(round): both streams ended")
        }
    }

    #if canImport(Observation)
    /// A query whose last reference goes with a thread's exit: its watch is stopped (tasks
    /// cancelled) on a library thread, without a dispatch call in the exit.
    @MainActor @Test func aQueryReleasedAsItsThreadExitsStopsFollowing() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        for round in 0..<8 {
            try cache.cacheItems([Plain(value: round)], forKey: "q\(round)")
            var query: CachedQuery<Plain>? = CachedQuery(cache: cache, Plain.self, forKey: "q\(round)") { _ in .items([Plain(value: round)]) }
            #expect(await eventually { query?.items == [Plain(value: round)] }, "round \(round): the query follows its collection")
            weak let released = query
            releaseAtThreadExit(&query) { _, worker in
                _ = try? cache.updateItems(Plain.self, forKey: "q\(round)-w\(worker)") { $0.append(Plain(value: round)) }
            }
            #expect(await eventually { released == nil }, "round \(round): the query went with its thread")
        }
        #expect(await eventually { cache.queries.observers.isEmpty }, "every watch stopped")
    }
    #endif

    /// Uses recorded for a background refresh are queued on a queue of their own: the cache
    /// released at the thread's exit waits for them without a dispatch call, and writes them.
    @Test func aCacheReleasedAsItsThreadExitsWritesTheUsesItWasRecording() async throws {
        let fixture = try Fixture()
        var cache: AppCache? = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        cache?.registerFetch(for: Plain.self) { _ in .items([Plain(value: 1)]) }
        for try await _ in try #require(cache).load(Plain.self, forKey: "used", fetch: { _ in .items([Plain(value: 1)]) }) {}
        weak let released = cache
        releaseAtThreadExit(&cache) { cache, _ in _ = cache.memoryStatistics }
        #expect(await eventually { released == nil }, "the cache went with its thread")
        #expect(await eventually { fixture.hasArchive(RecordedUse.self) }, "the recorded use reached the disk")
    }
}
