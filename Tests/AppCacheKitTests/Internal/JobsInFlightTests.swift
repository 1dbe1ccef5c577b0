import Foundation
import Testing
@testable import AppCacheKit

/// The count a `deinit` waits on instead of a `sync` on the jobs' queue.
struct JobsInFlightTests {
    @Test func waitingWithNothingInFlightReturnsAtOnce() {
        let jobs = JobsInFlight()
        jobs.waitUntilNone()
        jobs.begin()
        jobs.end()
        jobs.waitUntilNone()
        #expect(jobs.inFlight == 0)
    }

    @Test func aWaitLastsUntilEveryJobBegunHasEnded() async {
        let jobs = JobsInFlight()
        let queue = DispatchQueue(label: "AppCache.test.jobs")
        let gate = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
            jobs.begin()
            queue.async {
                gate.wait()
                jobs.end()
            }
        }
        let waited = Locked(false)
        let waiting = Locked(false)
        Thread.detachNewThread {
            waiting.withLock { $0 = true }
            jobs.waitUntilNone()
            waited.withLock { $0 = true }
        }
        #expect(await eventually { waiting.withLock { $0 } })
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!waited.withLock { $0 }, "three jobs in flight: the wait goes on")
        #expect(jobs.inFlight == 3)
        gate.signal()
        gate.signal()
        #expect(await eventually { jobs.inFlight == 1 })
        #expect(!waited.withLock { $0 }, "one job left: the wait goes on")
        gate.signal()
        #expect(await eventually { waited.withLock { $0 } }, "the last job ended: the wait returned")
        #expect(jobs.inFlight == 0)
    }
}
