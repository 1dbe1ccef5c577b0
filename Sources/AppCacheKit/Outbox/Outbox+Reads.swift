import Foundation

extension Outbox {
    /// The most times ``readingWithPending(_:key:read:)`` reads a collection whose read a
    /// fold tore.
    static let readAttempts = 4

    /// Reads the current user's confirmed collection of `Model` under `key` with `read` and
    /// applies the pending changes to it, such that a change the server accepts while it is
    /// read is never missing from both.
    ///
    /// An accepted change is folded into the confirmed collections, then leaves the queue. A
    /// read that took the confirmed items before the fold and the queue after the change left
    /// it would show neither (a bookmark made offline would vanish from the list for as long as
    /// it stays cached). So the queue is looked at before the read too: when a fold of a change
    /// to `Model` by this process began or ended meanwhile (it may have been enqueued after that
    /// look), or a change applicable before is gone after (another process's sender), the
    /// collection is read again, at most ``readAttempts`` times; a read made again is counted
    /// again in the cache's events. A change seen pending by a read whose items already hold it
    /// is applied again: changes are applied to confirmed items that may hold them anyway, as
    /// after a kill between the two steps.
    ///
    /// - Parameters:
    ///   - read: reads the confirmed items (a caller that wants more of the collection keeps
    ///     it from the last call); `nil` when there is none.
    /// - Returns: the items shown and the ids of the changes applied; `nil` when `read` found
    ///   nothing. (Only items are passed through: a result generic over what the caller reads
    ///   made each call instantiate tuple metadata, about 1,500 instructions of a first read.)
    /// - Throws: what `read` throws.
    /// - Complexity: one read, and a lock and one queue look-up more than applying alone; when
    ///   no kind of change is known, one read only.
    func readingWithPending<Model: CacheableModel>(
        _ type: Model.Type, key: String?, read: () throws -> [Model]?
    ) rethrows -> (items: [Model], applied: [UUID])? {
        var attempt = 1
        while true {
            let before = pendingMark(of: Model.self, key: key)
            guard let items = try read() else { return nil }
            let shown = applyingPending(items, of: Model.self, key: key)
            guard let before, attempt < Self.readAttempts else { return shown }
            let folds = state.withLock { $0.sending.folds[ObjectIdentifier(Model.self)] ?? 0 }
            if folds == before.folds, before.applicable.isSubset(of: shown.applied) { return shown }
            attempt += 1
        }
    }

    /// What a read of a collection compares after it: the count of folds of changes to `Model`
    /// begun and ended, and the ids of the pending changes applicable to the collection; `nil`
    /// when no kind of change is known (nothing is ever applied).
    private func pendingMark<Model: CacheableModel>(of type: Model.Type, key: String?) -> (folds: UInt64, applicable: Set<UUID>)? {
        // The count first: a fold that ends after it moves it, whatever the queue shows.
        let type = ObjectIdentifier(Model.self)
        guard let folds = state.withLock({ $0.queue.hasKinds ? $0.sending.folds[type] ?? 0 : nil }) else { return nil }
        let changes = OutboxQueue.applicable(current().changes, to: type, key: key)
        return (folds, Set(changes.map(\.id)))
    }
}
