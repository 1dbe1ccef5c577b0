import Foundation
import Testing
@testable import AppCacheKit

/// The bounded pool the library's blocking work runs on: never more threads than its width,
/// however many jobs wait; idle threads end; work that waits on other work does not deadlock it.
struct ThreadPoolTests {
    /// Jobs that block until the test lets them go.
    final class Gate: @unchecked Sendable {
        private let condition = NSCondition()
        private var open = false
        private var running = 0
        private var mostRunning = 0
        private var finished = 0

        func pass() {
            condition.lock()
            running += 1
            mostRunning = max(mostRunning, running)
            while !open { condition.wait() }
            running -= 1
            finished += 1
            condition.unlock()
        }

        func release() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }

        var counts: (running: Int, mostRunning: Int, finished: Int) {
            condition.lock()
            defer { condition.unlock() }
            return (running, mostRunning, finished)
        }
    }

    @Test func twoHundredBlockedJobsRunOnWidthThreadsWhichEndWhenIdle() async {
        let pool = ThreadPool(name: "AppCache.test", width: 3, idleTimeout: .milliseconds(50))
        let gate = Gate()
        for _ in 0..<200 { pool.submit { gate.pass() } }
        #expect(await eventually { gate.counts.running == 3 })
        #expect(pool.census.threads == 3)
        #expect(pool.census.queued == 197, "the rest wait for a thread rather than get one each")
        gate.release()
        #expect(await eventually { gate.counts.finished == 200 })
        #expect(gate.counts.mostRunning == 3)
        #expect(pool.census.peak == 3)
        #expect(await eventually { pool.census.threads == 0 }, "idle threads end")
        // And start again for new work.
        let done = Locked(false)
        pool.submit { done.withLock { $0 = true } }
        #expect(await eventually { done.withLock { $0 } })
    }

    /// Many loads at once whose fetches write to the disk and load other collections (whose
    /// blocking work queues on the same threads): all of them finish.
    /// Submits a job of its own from its `deinit`: what a cache's services do when a job held
    /// their last reference (``LibraryThreads/handOff(_:)``).
    final class SubmitsWhenReleased: Sendable {
        let pool: ThreadPool
        let ran: Locked<Bool>

        init(pool: ThreadPool, ran: Locked<Bool>) {
            self.pool = pool
            self.ran = ran
        }

        deinit {
            let ran = ran
            pool.submit { ran.withLock { $0 = true } }
        }
    }

    /// A job is let go before its thread takes the pool's lock again: had the last reference
    /// to what it captured gone with the lock held, the `submit` from that `deinit` would wait
    /// for itself (the thread-exit torture mode hung so).
    @Test func aJobWhoseCaptureSubmitsWhenReleasedLetsThatJobRun() async {
        let pool = ThreadPool(name: "AppCache.test", width: 1, idleTimeout: .seconds(1))
        let first = Locked(false)
        let second = Locked(false)
        do {
            let captured = SubmitsWhenReleased(pool: pool, ran: second)
            pool.submit { [captured] in
                _ = captured
                first.withLock { $0 = true }
            }
        }
        #expect(await eventually { first.withLock { $0 } }, "the job ran")
        #expect(await eventually(within: 30) { second.withLock { $0 } }, "the job its capture's deinit submitted ran")
    }

    @Test func manyLoadsWhoseFetchesWriteAndLoadFinish() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let (answers, error) = await collect(cache.load(Note.self, forKey: "load-\(index)", retry: .none) { [weak cache] _ in
                        // Weakly, as the documentation says: the cache keeps a load's fetch.
                        guard let cache else { return .items([]) }
                        try cache.cacheItems([Note.make(index)], forKey: "written-\(index)")
                        let (inner, _) = await collect(cache.load(Note.self, forKey: "inner-\(index)", retry: .none) { _ in
                            .items([Note.make(1000 + index)])
                        })
                        return .items(inner.last?.items ?? [])
                    })
                    return error == nil && answers.last?.items == [Note.make(1000 + index)]
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 100 && results.allSatisfy { $0 })
        #expect(try cache.getCachedItems(Note.self, forKey: "written-99") == [Note.make(99)])
        #expect(LibraryThreads.pool.census.peak <= LibraryThreads.width)
    }
}
