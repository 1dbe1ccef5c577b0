import Foundation

extension Outbox {
    /// A drain of the queue under way: what ``drainProgress(_:)`` compares with.
    struct Drain: Sendable {
        /// The drain's request: the sender is idle once a step after it found nothing to send.
        let request: UInt64
        /// Changes accepted before the drain began.
        let acceptedBefore: Int
    }

    /// Asks the sender to go through the current user's queue at once (its backoff forgotten),
    /// as ``sendNow()`` does, and returns the drain to follow with ``drainProgress(_:)``.
    ///
    /// - Returns: `nil` when no sender runs in this process (no ``AppCache/registerSender(for:send:)``
    ///   and no ``AppCache/enqueue(_:)`` yet): nothing would be sent.
    func beginDrain() -> Drain? {
        let drain = state.withLock { state -> Drain? in
            guard state.sending.task != nil else { return nil }
            state.sending.drainRequests += 1
            return Drain(request: state.sending.drainRequests, acceptedBefore: state.sending.accepted)
        }
        if drain != nil { sendNow() }
        return drain
    }

    /// How a drain stands: whether the sender has gone idle since it began (the queue sent, or
    /// what is left waits: a failed send's backoff, a kind with no sender, another process's
    /// lease), and how many changes the server accepted since.
    ///
    /// Thread safety: any thread; takes the outbox's lock once.
    func drainProgress(_ drain: Drain) -> (isIdle: Bool, accepted: Int) {
        state.withLock { state in
            (state.sending.idleAfterRequest >= drain.request && !state.sending.isSending, state.sending.accepted - drain.acceptedBefore)
        }
    }
}
