import Foundation
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache whose last reference a `Thread`'s closure holds goes while that thread exits: in a
/// destructor of the thread's specific data, after libdispatch freed its own (on Linux without
/// forgetting it, so that a dispatch call from `deinit` frees its continuations a second time).
/// AddressSanitizer (CI's quick run holds this suite) reports such a second free at once.
struct ThreadExitTests {
    /// Runs `body(cache, worker)` from two `concurrentPerform` workers on a new thread whose
    /// closure takes the last reference to the cache (the caller's becomes `nil`). The calling
    /// thread finishes last, so that it keeps the apply's continuation in libdispatch's cache
    /// of the thread: what a second free at its exit would free again.
    private func releaseAtThreadExit(_ held: inout AppCache?, _ body: @escaping @Sendable (AppCache, Int) -> Void) {
        let go = DispatchSemaphore(value: 0)
        var cache = held.moveOut()
        Thread.detachNewThread { [cache] in
            go.wait()
            guard let cache else { return }
            let caller = pthread_self()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                body(cache, worker)
                if pthread_equal(pthread_self(), caller) != 0 { usleep(2_000) }
            }
        }
        cache = nil
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
