public import Foundation

extension AppCache {
    /// How queued changes of one kind reach the server; `id` is the same on every attempt of one
    /// change (an idempotency key). Register every kind at launch; changes enqueued before their
    /// kind has a sender wait for it (`enqueue` does not throw for that).
    ///
    /// The current user's queue is sent in the order it was enqueued, one change at a time:
    /// at once, when the app becomes active (``applicationDidBecomeActive()``), when the network
    /// comes back (``networkDidBecomeAvailable()``), and after a failure as
    /// ``Configuration/mutationRetry`` says. `send` returning means the server accepted the
    /// change; throwing ``MutationRejected`` means it refused it for good (the change is dropped
    /// and its local change disappears); any other error is tried again later, with the same
    /// `id`. A change whose send a crash or a kill cut off is sent again after the relaunch, with
    /// the same `id`: let the server make a change once per id.
    ///
    /// Of all the processes sharing the root (an app and its extensions), one sends at a time
    /// (a lease in the lock file, renewed while a send runs; no lock is held across it). A queue
    /// whose first change has no sender here waits, and everything after it: order is kept.
    ///
    /// ```swift
    /// cache.registerSender(for: Bookmark.self) { bookmark, id in
    ///     try await api.setBookmark(bookmark.articleID, bookmark.isBookmarked, idempotencyKey: id)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the kind of change.
    ///   - send: sends one change; runs on a task of the cache's own, never two at a time. The
    ///     cache keeps it until another sender replaces it: one that uses the cache should
    ///     capture it `weak`, or the two keep each other alive.
    ///
    /// Thread safety: any thread; registering a kind again replaces its sender.
    public func registerSender<M: CacheMutation>(
        for type: M.Type, send: @escaping @Sendable (M, _ id: UUID) async throws -> Void
    ) {
        outbox.register(M.self, send: send)
    }

    /// Applies `mutation` now (readers and observers see it at once), stores it durably for the
    /// current user, and sends it when possible, in order.
    ///
    /// The change is appended to the current user's outbox (`<user directory>/.outbox`) and
    /// synced to the device before this returns: a crash or kill right after loses none. From
    /// now until the server accepts or rejects it, every read of its collection
    /// (``getCachedItems(_:forKey:)``, ``cachedCollection(_:forKey:)``, ``updates(_:forKey:)``,
    /// loads and watches) shows the last confirmed items with the pending changes applied in
    /// enqueue order, in every process sharing the root; a fetch that lands meanwhile becomes
    /// the new confirmed items, and the pending changes are applied on top of it.
    ///
    /// ```swift
    /// try cache.enqueue(Bookmark(articleID: article.id, isBookmarked: true))
    /// ```
    ///
    /// - Returns: the change's id, which every send of it carries.
    /// - Throws: `encodingFailed` when the change cannot be encoded or encodes to more than
    ///   1 MiB; `invalidKey` for a key no archive can hold; `invalidConfiguration` for an empty
    ///   or over-long ``CacheMutation/mutationName``; the write errors of
    ///   ``cacheItems(_:forKey:expiresAfter:)`` written through (`permissionDenied` on a
    ///   read-only cache, `busy` while the system suspends the app, `noSpace`, `ioFailure`).
    ///   Nothing is queued or applied then.
    @discardableResult
    public func enqueue<M: CacheMutation>(_ mutation: M) throws -> UUID {
        try outbox.enqueue(mutation)
    }

    /// The current user's changes not yet accepted by the server, oldest first.
    ///
    /// Read from the user's outbox when another process (or instance) may have changed it:
    /// a change a widget enqueued is listed here. Changes of kinds this app does not know are
    /// listed too (they wait).
    ///
    /// Thread safety: any thread; may read a small file (call it off the main thread in a hot
    /// loop).
    public var pendingMutations: [PendingMutation] {
        outbox.pendingMutations
    }

    /// Follows ``pendingMutations``: yields the list at once, then after every change to it (a
    /// change enqueued, tried, accepted or rejected, here or in another process), until the
    /// consuming task ends.
    ///
    /// ```swift
    /// for await pending in cache.pendingMutationUpdates() {
    ///     syncBadge.count = pending.count
    /// }
    /// ```
    public func pendingMutationUpdates() -> AsyncStream<[PendingMutation]> {
        queries.pendingMutationUpdates()
    }
}
