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
    /// (a lease in the lock file, renewed while a send runs; no lock is held across it), and a
    /// process with a sender hears at once of changes the others enqueue. A queue whose first
    /// change has no sender here waits, and everything after it: order is kept. A queued change
    /// that reads as no version of its kind (see ``CacheMutation/upgrades``) is passed over and
    /// holds back only the later changes of its kind. A process that should show pending changes
    /// without sending them (a widget) registers their kinds with ``registerMutationKind(_:)``.
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
        // A sender hears at once of what other processes (a widget) enqueue; it asks no one for
        // prompt write-backs (its outbox is written through).
        queries.watcher.start(announcingPresence: false)
    }

    /// Lets this process read queued changes of one kind, so that its reads show them, without
    /// sending any: what a widget or another extension registers for the kinds the app sends.
    ///
    /// A process shows the pending changes of the kinds it knows (registered here or with
    /// ``registerSender(for:send:)``, or enqueued by it) on top of the confirmed collections,
    /// whoever enqueued them; changes of kinds it does not know are listed by
    /// ``pendingMutations`` but not applied. Only ``registerSender(for:send:)`` makes a process
    /// a sender: one without a sender never sends and never takes the sender's lease, so the
    /// app's own sender sends what the extension enqueued.
    ///
    /// ```swift
    /// // In the widget:
    /// cache.registerMutationKind(Like.self)
    /// cache.registerMutationKind(Bookmark.self)
    /// ```
    ///
    /// - Parameter type: the kind of change.
    ///
    /// Thread safety: any thread; a sender registered before for the kind stays registered.
    public func registerMutationKind<M: CacheMutation>(_ type: M.Type) {
        outbox.register(M.self, send: nil)
    }

    /// Takes a queued change out of the current user's queue without sending it: its local
    /// change disappears from every collection, and the changes it held back go ahead.
    ///
    /// For a change the app can no longer send or read (one that reads as no version of its
    /// type after an update, reported as ``AppCacheError/Code/modelMismatch``), or one the user
    /// cancelled. A send of it under way is not stopped; if it succeeds, the change is not
    /// folded into the collections.
    ///
    /// ```swift
    /// for pending in cache.pendingMutations where pending.lastError?.hasPrefix("It does not decode") == true {
    ///     try cache.dropPendingMutation(pending.id)
    /// }
    /// ```
    ///
    /// - Parameter id: the change's id (``PendingMutation/id``).
    /// - Returns: whether the queue held it.
    /// - Throws: the write errors of ``enqueue(_:)`` (`permissionDenied`, `busy`, `noSpace`,
    ///   `ioFailure`); the queue is unchanged then.
    ///
    /// Thread safety: any thread.
    @discardableResult
    public func dropPendingMutation(_ id: UUID) throws -> Bool {
        try outbox.drop(id)
    }

    /// Applies `mutation` now (readers and observers see it at once), stores it durably for the
    /// current user, and sends it when possible, in order.
    ///
    /// The change is appended to the current user's outbox (`<user directory>/.outbox`) and
    /// synced to the device before this returns: a crash or kill right after loses none. From
    /// now until the server accepts or rejects it, every read of its collection
    /// (``getCachedItems(_:forKey:)``, ``cachedCollection(_:forKey:)``, ``updates(_:forKey:)``,
    /// loads and watches) shows the last confirmed items with the pending changes applied in
    /// enqueue order, in every process sharing the root that knows its kind; a fetch that lands
    /// meanwhile becomes the new confirmed items, and the pending changes are applied on top of
    /// it. An ``ItemMutation`` shows so in every collection of its type that holds one of its
    /// items (collections first cached later included) and in the one its key names, and is
    /// still queued and sent once when no cached collection holds them.
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
    /// consuming task ends or the cache goes away (the stream does not keep it alive).
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
