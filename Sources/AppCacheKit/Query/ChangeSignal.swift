import Foundation

/// A wake-up call that coalesces: fired any number of times while nobody waits, it wakes the
/// next ``wait(timeout:)`` once.
final class ChangeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Numbers the waits, so that a wait's timer cannot wake a later one.
        var waits: UInt64 = 0
        /// How often ``fire()`` was called.
        var fires: UInt64 = 0
    }

    private let state = Locked(State())

    /// Wakes the waiter, or the next one to wait.
    func fire() {
        state.withLock { $0.fires += 1 }
        fire(onlyWait: nil)
    }

    /// How often the signal was fired so far: a waiter that compares it before and after a
    /// wait knows whether anything happened or the wait timed out.
    var fireCount: UInt64 { state.withLock { $0.fires } }

    /// Wakes the waiter; with `onlyWait`, only if it is that wait, and nobody else otherwise.
    private func fire(onlyWait: UInt64?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let onlyWait, onlyWait != state.waits || state.waiter == nil { return nil }
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once fired (at once if fired since the last wait), after `timeout` (`nil`: no
    /// timer at all; counted on `timers`), or when the task is cancelled, whichever comes
    /// first. One task waits at a time.
    func wait(timeout: Duration?, timers: CacheTimers = .system) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let wait = state.withLock { state -> UInt64? in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return nil
                    }
                    state.waits += 1
                    state.waiter = continuation
                    return state.waits
                }
                if let wait {
                    if let timeout {
                        timers.after(timeout) { [weak self] in
                            self?.fire(onlyWait: wait)
                        }
                    }
                } else {
                    continuation.resume()
                }
            }
        } onCancel: {
            fire()
        }
    }
}
