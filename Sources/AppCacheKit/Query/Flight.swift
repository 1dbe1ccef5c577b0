import Foundation

/// One fetch under way for ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)``, shared by every load of
/// the same user, model type and key that needs it: the fetch runs once, each waiting load gets
/// its outcome.
///
/// The fetch runs in a task of its own. When every waiting load has gone (their consumers were
/// cancelled), that task is cancelled, and a fetch that returns after cancellation stores
/// nothing. A flight that lost its last waiter takes no new ones: a later load starts afresh.
final class Flight<Model: CacheableModel>: Sendable {
    /// How a flight ended, for each of its waiters.
    enum Outcome: Sendable {
        /// Fetched and stored, dated `cachedDate`.
        case items([Model], cachedDate: Date)
        /// The server said the cached items are current; they were re-dated `cachedDate`.
        case notModified(cachedDate: Date)
        /// The user's data was removed while the fetch ran: nothing was stored.
        case dropped
        /// The fetch, or storing its result, failed.
        case failed(any Error)
        /// The waiter itself was cancelled.
        case cancelled
    }

    private struct State {
        var waiters: [UInt64: CheckedContinuation<Outcome?, Never>] = [:]
        var lastWaiter: UInt64 = 0
        var outcome: Outcome?
        var task: Task<Void, Never>?
        var isAbandoned = false
        var hasEnded = false
    }

    private let state = Locked(State())

    /// Starts the flight's task: `work` fetches and stores, and its answer goes to every waiter.
    func start(_ work: @escaping @Sendable () async -> Outcome) {
        state.withLock { state in
            // Every waiter may have gone before the start: then nothing runs.
            guard !state.isAbandoned else { return }
            state.task = Task.detached { [self] in
                let outcome = await work()
                finish(outcome)
            }
        }
    }

    /// Waits for the flight's outcome; `.cancelled` at once when the calling task is cancelled
    /// (and the flight's task is cancelled too once no waiter is left).
    ///
    /// - Returns: `nil` when the flight has been abandoned and takes no new waiters.
    func join() async -> Outcome? {
        let identifier = state.withLock { state -> UInt64 in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome?, Never>) in
                // Decided and registered in one step, so that no waiter is missed by `leave`.
                let ready = state.withLock { state -> Outcome?? in
                    if let outcome = state.outcome { return .some(outcome) }
                    if state.isAbandoned { return .some(nil) }
                    if Task.isCancelled { return .some(.cancelled) }
                    state.waiters[identifier] = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            leave(identifier)
        }
    }

    /// How many loads wait for the flight now.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Whether the flight's fetch has returned and its waiters have been told.
    var hasEnded: Bool { state.withLock { $0.hasEnded } }

    /// A waiter goes: its continuation (if waiting) gets `.cancelled`, and a flight with no
    /// waiter left is abandoned and its task cancelled.
    private func leave(_ identifier: UInt64) {
        let (continuation, task) = state.withLock { state -> (CheckedContinuation<Outcome?, Never>?, Task<Void, Never>?) in
            let continuation = state.waiters.removeValue(forKey: identifier)
            guard state.outcome == nil, state.waiters.isEmpty else { return (continuation, nil) }
            state.isAbandoned = true
            return (continuation, state.task)
        }
        continuation?.resume(returning: .cancelled)
        task?.cancel()
    }

    private func finish(_ outcome: Outcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome?, Never>] in
            // An abandoned flight's outcome (its cancellation, mostly) is nobody's: a load that
            // finds the flight now gets `nil` from `join` and starts afresh.
            if !state.isAbandoned { state.outcome = outcome }
            state.isAbandoned = true
            state.hasEnded = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
