import Dispatch
import Foundation

/// Where the cache's waits and timers take their time from: the system's uptime, or a
/// ``CacheClock`` a test moves by hand.
///
/// Every wait the cache makes of its own goes through it: a failed fetch's retry backoff, a
/// watch's polling interval, a queued change's send backoff, the write-back delay. (Waits for
/// other processes, such as the lock timeout and the sender's lease, keep the system's time:
/// another process does not follow a test's clock.)
///
/// Thread safety: a `Sendable` value.
struct CacheTimers: Sendable {
    /// The hand-moved clock; `nil` for the system's time.
    let clock: CacheClock?

    /// The system's time.
    static let system = CacheTimers(clock: nil)

    /// The moment the system's uptime is counted from.
    private static let origin = ContinuousClock.now

    /// Time since an arbitrary start, on this source: compare two readings.
    var uptime: Duration {
        clock?.elapsed ?? (ContinuousClock.now - Self.origin)
    }

    /// Suspends for `delay` (until the clock was advanced by it), or until the task is
    /// cancelled.
    func sleep(for delay: Duration) async {
        guard let clock else {
            try? await Task.sleep(for: delay)
            return
        }
        let signal = ChangeSignal()
        let timer = clock.schedule(after: delay) { signal.fire() }
        await signal.wait(timeout: nil)
        clock.cancel(timer)
    }

    /// Runs `work` on `queue` after `delay`.
    func after(_ delay: Duration, on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> Void) {
        guard let clock else {
            queue.asyncAfter(deadline: .now() + delay.timeInterval, execute: work)
            return
        }
        clock.schedule(after: delay) { queue.async(execute: work) }
    }
}
