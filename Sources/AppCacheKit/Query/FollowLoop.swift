import Foundation

/// The one loop that follows changes, under every stream and the outbox's sender: a detached
/// task that runs a step, then waits on a ``ChangeSignal`` (a change, a trigger, a wake-up) for
/// at most as long as the step says, until it is cancelled or its owner has gone.
///
/// The loop holds its owner (the query client, the outbox) only while a step runs, so it never
/// keeps a cache alive: a cache nobody holds goes away, and its loops end at their next wake-up.
/// It never blocks the cooperative pool: it waits by suspending on the signal, and steps run
/// what blocks (disk, decoding) on the library's threads (``LibraryThreads``).
enum FollowLoop {
    /// What a step asks for next.
    enum Next: Sendable {
        /// Wait for the signal, or at most this long (`nil`: no timer).
        case wait(Duration?)
        /// Run the next step at once.
        case again
    }

    /// Starts the loop.
    ///
    /// - Parameters:
    ///   - owner: held weakly, and strongly only while a step runs; the loop ends once it has gone.
    ///   - signal: what wakes the loop between steps.
    ///   - timers: what a step's timeout counts on.
    ///   - state: makes what the steps share, inside the loop's task.
    ///   - step: one step; what it throws ends the loop.
    ///   - finish: told once, when the loop ends: with the error that ended it, or `nil`.
    /// - Returns: the loop's task; cancel it to stop the loop.
    static func start<Owner: AnyObject & Sendable, State>(
        holding owner: Owner, signal: ChangeSignal, timers: CacheTimers, state: @escaping @Sendable () -> State,
        step: @escaping @Sendable (Owner, inout State) async throws -> Next,
        finish: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) -> Task<Void, Never> {
        Task.detached { [weak owner] in
            var shared = state()
            do {
                while !Task.isCancelled {
                    let next: Next
                    do {
                        guard let owner else { break }
                        next = try await step(owner, &shared)
                    }
                    if Task.isCancelled { break }
                    if case .wait(let timeout) = next { await signal.wait(timeout: timeout, timers: timers) }
                }
                finish(nil)
            } catch {
                finish(error)
            }
        }
    }
}
