import Foundation

/// One send the sender decided on: the queue's first change that can be sent, for its user.
struct SendJob: Sendable {
    var session: CacheSession
    var id: UUID
    var mutation: any CacheMutation
    var kind: MutationKind
    var key: String?
    /// The changes before it in the queue that the decision passed over (they do not decode).
    var passedOver: Set<UUID> = []
    /// The sender's ``SenderSchedule/wakes`` when the send was decided: a wake after it makes a
    /// failure of this send no reason to back off.
    var wakesBefore: UInt64 = 0
}

/// What became of a send.
enum SendOutcome {
    /// The server accepted the mutation.
    case accepted
    /// The server refused it for good.
    case rejected(MutationRejected)
    /// It failed for now; it is tried again later.
    case failed(any Error)
}
