import Dispatch
import Foundation

/// When the store's dirty collections are written: the write-back thread, the timer that
/// fires `writeBackDelay` after the first dirty collection (or within ``sharedDelay`` while
/// another live process uses the root), and the one spill queued at a time.
///
/// It decides when; the store (``CollectionStore/performScheduledWriteBack(due:)``,
/// ``CollectionStore/spillInBackground(_:)``) writes.
///
/// Thread safety: `Sendable`; its schedule sits behind a lock of its own, never held while
/// anything is written or a closure runs.
final class WriteBack: Sendable {
    /// The store's thread for disk work no caller waits for.
    let queue = DispatchQueue(label: "AppCache.writeBack", qos: .utility)

    private struct Schedule {
        /// When the timer fires next, in uptime nanoseconds (`nil`: not scheduled).
        var due: UInt64?
        /// Whether a write of detached (spilled) entries is queued.
        var spillQueued = false
    }

    private let schedule = Locked(Schedule())

    /// How soon dirty collections are written while another live process uses the root
    /// (``PeerPresence``): what this one caches reaches the other's reads and `updates`
    /// streams within a few milliseconds, a burst of writes still coalesced into one batch.
    static let sharedDelay = Duration.milliseconds(2)

    /// Arranges for `fire` to run on ``queue`` `delay` from now, or within ``sharedDelay`` when
    /// `othersArePresent` says so (asked only while a later write-back is all that is
    /// arranged); nothing when an earlier one is arranged already.
    ///
    /// - Parameters:
    ///   - timers: what the delay counts on (the system's uptime, or a test's clock).
    ///   - fire: given the deadline it was arranged for, to pass to ``fire(due:)``.
    func schedule(after delay: Duration, timers: CacheTimers, othersArePresent: () -> Bool, fire: @escaping @Sendable (UInt64) -> Void) {
        // Uptime nanoseconds: `DispatchTime` is not `Sendable` in every SDK.
        let now = timers.clock.map { Self.nanoseconds($0.elapsed) } ?? DispatchTime.now().uptimeNanoseconds
        let prompt = now + Self.nanoseconds(Self.sharedDelay)
        if let due = schedule.withLock({ $0.due }), due <= prompt { return }
        let deadline = delay > Self.sharedDelay && othersArePresent() ? prompt : now + Self.nanoseconds(delay)
        let arranged = schedule.withLock { schedule -> Bool in
            if let due = schedule.due, due <= deadline { return false }
            schedule.due = deadline
            return true
        }
        guard arranged else { return }
        if timers.clock != nil {
            timers.after(.nanoseconds(Int64(clamping: deadline - now)), on: queue) { fire(deadline) }
        } else {
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) { fire(deadline) }
        }
    }

    /// `duration` in whole nanoseconds (none for a negative one).
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// Takes the timer that fired at `due` off the schedule.
    ///
    /// - Parameter due: `nil` for a write-back asked for now, which always goes ahead.
    /// - Returns: whether the write-back should go ahead: `false` for a timer an earlier one
    ///   made needless.
    func fire(due: UInt64?) -> Bool {
        schedule.withLock { schedule in
            guard due == nil || schedule.due == due else { return false }
            schedule.due = nil
            return true
        }
    }

    /// Claims the one queued spill: `true` when none was queued, and the caller queues it.
    func claimSpill() -> Bool {
        schedule.withLock { schedule in
            guard !schedule.spillQueued else { return false }
            schedule.spillQueued = true
            return true
        }
    }

    /// The queued spill has started: entries detached from now on need a new one.
    func spillStarted() {
        schedule.withLock { $0.spillQueued = false }
    }
}
