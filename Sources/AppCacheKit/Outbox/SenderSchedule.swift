import Foundation

/// What a cache's sender of queued changes knows between its steps: whether it runs, the
/// backoff after failed sends, and what was reported already.
///
/// Thread safety: a value inside the ``Outbox``'s lock.
struct SenderSchedule {
    /// The sender's task, once started (by the first registration or enqueue).
    var task: Task<Void, Never>?
    /// Failed sends in a row (the backoff's count); reset by a success, a rejection, the
    /// network coming back, the app becoming active, a user switch.
    var failures = 0
    /// No send starts before this moment (``CacheTimers/uptime``): the backoff after a failure.
    var retryAt: Duration?
    /// How many times the sender was asked to try at once (``OutboxSender/sendNow(_:)``): a send
    /// that fails after such a request started before it (the network may have come back while
    /// it was out) is tried again at once, not after a backoff.
    var wakes: UInt64 = 0
    /// When a sender was last registered: a kind still unknown a while after it is reported.
    var lastRegistration: Duration?
    /// Whether a send is out (from the attempt noted to its outcome recorded).
    var isSending = false
    /// What was reported once already (damage of a file, a change that does not decode, an
    /// unknown kind).
    var reported: Set<String> = []
    /// How many drains have asked the sender to go through the queue (``Outbox/beginDrain()``).
    var drainRequests: UInt64 = 0
    /// The latest drain request a step had seen when it found nothing it could send now (the
    /// queue empty, or waiting for a backoff, a sender, the lease): the sender is idle after it.
    var idleAfterRequest: UInt64 = 0
    /// Changes the server accepted, since the process began.
    var accepted = 0
    /// By model type: moves on when an accepted change to the type's collections begins to be
    /// folded into them, and again when it has been (before it leaves the queue). A read of a
    /// collection of the type that saw it stay was not torn by a fold
    /// (``Outbox/readingWithPending(_:key:read:)``); folds of other types do not concern it.
    var folds: [ObjectIdentifier: UInt64] = [:]

    /// How long after the last registration a queue's first change may wait for its kind
    /// before it is reported: registrations at launch come one after another.
    static let registrationGrace: Duration = .seconds(1)

    /// Forgets the backoff: the next send starts at once.
    mutating func retryNow() {
        failures = 0
        retryAt = nil
    }
}
