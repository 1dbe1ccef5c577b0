/// Lets loads that failed for want of a network wait for it to come back, rather than burn
/// their retry attempts: ``AppCache/networkDidBecomeAvailable()`` (and, on Apple platforms,
/// the system's path monitor) wakes every waiter.
///
/// Thread safety: `Sendable`; waiters are resumed outside the lock, and a waiting task that is
/// cancelled stops waiting at once.
final class NetworkSignal: Sendable {
    private let state = Locked(State())

    private struct State {
        var next = 0
        var slots: [Int: Slot] = [:]
    }

    /// Where a waiter is: registered but not yet suspended, suspended, or to be resumed as soon
    /// as it suspends (cancelled, or signalled, in between).
    private enum Slot {
        case registered
        case waiting(CheckedContinuation<Void, Never>)
        case resumeAtOnce
    }

    /// Suspends until the next ``signal()``, or until the task is cancelled.
    func waitForAvailability() async {
        let id = state.withLock { state -> Int in
            defer { state.next += 1 }
            state.slots[state.next] = .registered
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if case .resumeAtOnce = state.slots[id] {
                        state.slots[id] = nil
                        return true
                    }
                    state.slots[id] = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                switch state.slots[id] {
                case .waiting(let continuation):
                    state.slots[id] = nil
                    return continuation
                case .registered:
                    state.slots[id] = .resumeAtOnce
                    return nil
                case .resumeAtOnce, nil:
                    return nil
                }
            }
            continuation?.resume()
        }
    }

    /// Wakes every waiter: the network is available.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            var waiters: [CheckedContinuation<Void, Never>] = []
            for (id, slot) in state.slots {
                switch slot {
                case .waiting(let continuation):
                    waiters.append(continuation)
                    state.slots[id] = nil
                case .registered:
                    state.slots[id] = .resumeAtOnce
                case .resumeAtOnce:
                    break
                }
            }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many loads wait (tests).
    var waiterCount: Int {
        state.withLock { state in state.slots.values.filter { if case .waiting = $0 { true } else { false } }.count }
    }
}
