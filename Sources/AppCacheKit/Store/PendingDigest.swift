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

    /// Whether the queue may hold changes for `type` at the disk's change count `change`.
    ///
    /// - Complexity: O(1); no hashing while the queue holds no change.
    @inline(__always)
    func touches(_ type: ObjectIdentifier, change: UInt64) -> Bool {
        hasKinds && (isStale || checkedChange != change || (!types.isEmpty && types.contains(type)))
    }
}
