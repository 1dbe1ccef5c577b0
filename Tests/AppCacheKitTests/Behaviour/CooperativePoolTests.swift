import Dispatch
import Foundation
import Testing

@testable import AppCacheKit

/// Async calls wait for the disk on the library's threads, never on the cooperative pool's.
@Suite struct CooperativePoolTests {
    /// Many loads whose stores wait for the disk (a batch holds the writer) leave Swift
    /// concurrency's threads free: other tasks of the app go on running meanwhile. Were the
    /// loads waiting on pool threads, the probe task could not run until the batch ended.
    @Test func loadsWaitingForTheDiskLeaveThePoolFree() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()  // write-through: a fetch's store waits for the writer
        let release = DispatchSemaphore(value: 0)
        let holding = Locked(false)
        let timedOut = Locked(false)
        let holder = Thread {
            try? cache.store.withDiskWrites { _ in
                holding.withLock { $0 = true }
                release.wait()
            }
        }
        holder.start()
        // The fallback: a failing run ends (rather than hangs) once the batch lets go. Generous:
        // other tests (and sanitizers) keep the machine's two cores busy.
        DispatchQueue.global().asyncAfter(deadline: .now() + 90 * sanitizerSlowdown) {
            timedOut.withLock { $0 = true }
            release.signal()
        }
        #expect(await eventually { holding.withLock { $0 } })

        let fetched = Locked(0)
        let loads = (0..<8).map { index in
            Task {
                await collect(cache.load(Note.self, forKey: "k\(index)") { _ in
                    fetched.withLock { $0 += 1 }
                    return .items([Note.make(index)])
                })
            }
        }
        #expect(await eventually(within: 120) { fetched.withLock { $0 } == 8 }, "every fetch ran; its store now waits for the batch")
        let probe = await Task { 42 }.value
        let ranWhileHeld = !timedOut.withLock { $0 }
        release.signal()
        #expect(probe == 42)
        #expect(ranWhileHeld, "a task ran while eight loads waited for the disk")
        for (index, load) in loads.enumerated() {
            #expect(await load.value.answers.last?.items == [Note.make(index)])
        }
    }
}
