import Dispatch
import Foundation
#if canImport(Darwin)
import Darwin
#if canImport(notify)
import notify
#endif
#endif

/// Learns, without polling, that another process (or instance) sharing the root changed the
/// disk, and says so through `onChange`: the mapped change count stays the truth, this only
/// says when to look at it again.
///
/// - Linux: one thread sleeps in a futex on the mapped change count (shared between every
///   process mapping the lock file); a writer's ``ProcessCoordinator/announceChange()`` wakes it.
/// - Apple platforms: the root's Darwin notification (`notify_register_dispatch`, allowed in
///   app extensions, no entitlement), posted by every writer.
///
/// Nothing runs while nothing changes but, on Linux, one futex time-out a minute (so that a
/// ``stop()`` racing the start of a wait parks no thread for good). A notification merged or
/// missed (a suspended process) costs nothing but latency: observers compare the change count
/// whenever they look. Started on first use (an `updates` stream); stopped by ``stop()``.
///
/// Thread safety: `Sendable`; `onChange` runs on the watcher's thread or queue, never under a
/// lock of the cache.
final class ChangeWatcher: Sendable {
    private let coordinator: ProcessCoordinator
    private let onChange: @Sendable () -> Void
    private let state = Locked(State())

    private struct State {
        var started = false
        var stopped = false
        var announced = false
        var token: Int32?
    }

    init(coordinator: ProcessCoordinator, onChange: @escaping @Sendable () -> Void) {
        self.coordinator = coordinator
        self.onChange = onChange
    }

    /// Starts watching, once; later calls only announce presence if asked and not done yet.
    ///
    /// - Parameter announcingPresence: whether the process is present while it lives, so that
    ///   writers write back promptly for it (a stream that follows collections wants their
    ///   items at once); a queued change's sender, which needs only the outbox (written through
    ///   anyway), watches without asking the others for prompt write-backs.
    func start(announcingPresence: Bool = true) {
        let (start, announce) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            let announce = announcingPresence && !state.announced
            if announce { state.announced = true }
            defer { state.started = true }
            return (!state.started, announce)
        }
        if announce { coordinator.presence.renew(forLife: true) }
        guard start else { return }
        // Taken now, not when the thread first runs: a change in between is not missed.
        let startedAt = coordinator.changeCount
        #if canImport(Darwin)
        var token: Int32 = 0
        let onChange = onChange
        let status = notify_register_dispatch(coordinator.notificationName, &token, DispatchQueue.global(qos: .utility)) { _ in
            onChange()
        }
        if status == 0 { state.withLock { $0.token = token } }
        // A change posted before the registration took effect would be missed: look once.
        if coordinator.changeCount != startedAt { onChange() }
        #else
        let coordinator = coordinator
        let onChange = onChange
        let state = state
        let thread = Thread {
            var seen = startedAt
            while !state.withLock({ $0.stopped }) {
                if !coordinator.waitForChange(from: seen) {
                    // No futex here (or it failed): look twice a second rather than never.
                    usleep(500_000)
                }
                let now = coordinator.changeCount
                if now != seen, !state.withLock({ $0.stopped }) {
                    seen = now
                    onChange()
                }
            }
        }
        thread.name = "AppCache.changeWatcher"
        thread.start()
        #endif
    }

    /// Stops watching (the cache is going away).
    func stop() {
        let (wasStarted, token) = state.withLock { state -> (Bool, Int32?) in
            defer { state.stopped = true }
            return (state.started && !state.stopped, state.token)
        }
        guard wasStarted else { return }
        coordinator.presence.endLeaseForLife()
        #if canImport(Darwin)
        if let token { notify_cancel(token) }
        #else
        _ = token
        // Wakes the thread (and, once, every other waiter on this root: they look and sleep again).
        coordinator.announceChange()
        #endif
    }
}
