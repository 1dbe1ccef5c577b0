import Foundation

/// What the store knows of the outbox's pending changes, pushed by the ``Outbox`` whenever its
/// queue changes: enough for a memory hit to tell, inside the store's one lock, whether the
/// outbox may hold changes for the type it reads (then the read takes the slow path, which
/// applies them).
///
/// Thread safety: a value, kept in ``StoreState``.
struct PendingDigest: Sendable {
    /// Whether any kind of change is known (registered or enqueued): until then, no read
    /// ever looks at the outbox.
    var hasKinds = false
    /// Whether the queue must be read again before it can be trusted.
    var isStale = true
    /// The disk's change count the queue was read at.
    var checkedChange: UInt64?
    /// The model types the queue holds changes for.
    var types: Set<ObjectIdentifier> = []
    /// The memory slot of the user whose queue it is (``UserTable/slot(of:)``); `nil` when
    /// unknown. After a switch of user the queue must be read again before it is trusted.
    var userSlot: Int?
    /// The queue's epoch (``OutboxQueue/epoch``): moves with every change this process makes
    /// to the queue or to the kinds it knows.
    var epoch: UInt64 = 0

    /// Whether the queue of the user in memory slot `slot` may hold changes for `type` at the
    /// disk's change count `change`.
    ///
    /// - Complexity: O(1); no hashing while the queue holds no change.
    @inline(__always)
    func touches(_ type: ObjectIdentifier, change: UInt64, slot: Int) -> Bool {
        hasKinds && (isStale || checkedChange != change || userSlot != slot || (!types.isEmpty && types.contains(type)))
    }

    /// Whether it is the whole truth for the user in slot `slot` at the change count `change`.
    func isCurrent(change: UInt64, slot: Int) -> Bool {
        !isStale && checkedChange == change && userSlot == slot
    }
}
