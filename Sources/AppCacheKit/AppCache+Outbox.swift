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
        var kind = MutationKind(M.self, cacheName: typeInfo(M.Model.self).cacheName)
        kind.send = { change, id in
            guard let change = change as? M else { return }
            try await send(change, id)
        }
        state.withLock { state in
            state.mutationKinds[kind.name] = kind
            state.outbox.hasKinds = true
            state.outbox.markStale()
            state.sending.lastRegistration = .now
        }
        startSendingIfNeeded()
        outboxSignal.fire()
    }

    /// Applies `mutation` now (readers and observers see it at once), stores it durably for the
    /// current user, and sends it when possible, in order.
    ///
    /// The change is appended to the current user's outbox (`<user directory>/.outbox`) and
    /// synced to the device before this returns: a crash or kill right after loses none. From
    /// now until the server accepts or rejects it, every read of its collection
    /// (``getCachedItems(_:forKey:)``, ``cachedCollection(_:forKey:)``, ``updates(of:forKey:)``,
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
        let info = typeInfo(M.Model.self)
        let name = M.mutationName
        guard !name.isEmpty, name.utf8.count <= OutboxLog.maximumNameLength else {
            throw AppCacheError(
                code: .invalidConfiguration,
                message: "The mutationName of \(M.self) must be 1 to \(OutboxLog.maximumNameLength) bytes long; nothing was queued.",
                cacheName: info.cacheName, key: mutation.key)
        }
        try Self.checkKey(mutation.key, cacheName: info.cacheName)
        let value: Data
        do {
            value = try MutationKind.encode(mutation)
        } catch {
            throw AppCacheError(
                code: .encodingFailed, message: "The change could not be encoded; nothing was queued.", cacheName: info.cacheName,
                key: mutation.key, underlyingError: error)
        }
        guard value.count <= OutboxLog.maximumValueLength else {
            throw AppCacheError(
                code: .encodingFailed,
                message: "The change encodes to \(value.count) bytes; a queued change holds at most \(OutboxLog.maximumValueLength). Nothing was queued.",
                cacheName: info.cacheName, key: mutation.key)
        }
        state.withLock { state in
            if state.mutationKinds[name] == nil {
                state.mutationKinds[name] = MutationKind(M.self, cacheName: info.cacheName)
                state.outbox.markStale()
            }
            state.outbox.hasKinds = true
        }
        let entry = OutboxLog.Entry(
            id: UUID(), enqueuedMilliseconds: Milliseconds.moment(configuration.now()), name: name, key: mutation.key,
            value: value)
        try withDiskWrites { batch in
            // The user is decided under the lock: a switch that came first has been recorded.
            let user = state.withLock { $0.user }
            _ = try OutboxFile.change(for: user, in: &batch) { _ in OutboxLog.enqueued(entry) }
            state.withLock { state in
                if state.outbox.user == .some(user) {
                    state.outbox.append(OutboxQueue.Change(entry: entry, mutation: mutation, modelType: ObjectIdentifier(M.Model.self)))
                }
                // Under the lock: a read of the file that began before the append is not kept.
                state.outbox.markStale()
            }
        }
        outboxDidChange(cacheName: info.cacheName, key: mutation.key)
        startSendingIfNeeded()
        outboxSignal.fire()
        return entry.id
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
        currentOutbox().changes.map(\.pendingMutation)
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
        let (stream, continuation) = StreamPair.nonThrowing(of: [PendingMutation].self, bufferingPolicy: .bufferingNewest(1))
        let signal = ChangeSignal()
        let identifier = observers.add(cacheName: Self.outboxObserverName, key: nil, signal: signal)
        watcher.start()
        let task = Task.detached { [weak self] in
            var last: [PendingMutation]?
            while !Task.isCancelled {
                do {
                    guard let self else { break }
                    let value = await LibraryThreads.run { [self] in pendingMutations }
                    if value != last { continuation.yield(value) }
                    last = value
                }
                await signal.wait(timeout: nil)
            }
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            task.cancel()
            self?.observers.remove(identifier)
        }
        return stream
    }

    // MARK: - Internal

    /// The observers' name for the outbox itself (no model type has an empty cache name).
    static let outboxObserverName = ""

    /// The current user and their queue, read again from disk when it may have changed (another
    /// process's batch moved the change count and the file is not the one read, the user
    /// switched, a kind was registered). Decodes changes outside the state lock.
    func currentOutbox() -> (user: String?, changes: [OutboxQueue.Change]) {
        let change = disk.changeCount
        let (user, loaded, kinds) = state.withLock { ($0.user, $0.outbox, $0.mutationKinds) }
        if loaded.isCurrent(user: user, change: change) { return (user, loaded.changes) }
        let read: OutboxFile.Read
        do {
            // A user whose removal is still due has no queue any more.
            read = readsMayReach(OutboxFile.path(for: user)) ? try OutboxFile.read(user, from: disk.store) : OutboxFile.Read()
        } catch {
            reportAll([AppCacheError(
                code: error.code, message: "The outbox of queued changes could not be read; it is left as it is.", path: error.path,
                underlyingError: error)])
            return (user, loaded.user == .some(user) ? loaded.changes : [])
        }
        let sameFile = loaded.user == .some(user) && loaded.identity == read.identity
        let entries = sameFile ? loaded.changes.map(\.entry) : read.log.entries
        let previous = Dictionary(loaded.changes.map { ($0.entry.id, $0) }, uniquingKeysWith: { first, _ in first })
        var problems: [(String, AppCacheError)] = []
        let path = disk.store.fileSystem.displayPath(OutboxFile.path(for: user))
        if !sameFile, read.log.damagedRecords > 0 || read.isTooLarge, let identity = read.identity {
            problems.append(("damage \(identity.value)", AppCacheError(
                code: .corruptArchive,
                message: read.isTooLarge
                    ? "The outbox is larger than any queue of changes can be; it is not read, and the next change queued replaces it."
                    : "\(read.log.damagedRecords) damaged record(s) of the outbox were skipped; the changes they held are lost.",
                path: path)))
        }
        let changes = entries.map { entry -> OutboxQueue.Change in
            if let known = previous[entry.id], known.mutation != nil {
                var change = known
                change.entry = entry
                return change
            }
            guard let kind = kinds[entry.name] else {
                return OutboxQueue.Change(entry: entry, problem: "no kind named \"\(entry.name)\" is known")
            }
            do {
                return OutboxQueue.Change(entry: entry, mutation: try kind.decode(entry.value), modelType: kind.modelType)
            } catch {
                problems.append(("decode \(entry.id)", AppCacheError(
                    code: .modelMismatch,
                    message: "A queued change of kind \"\(entry.name)\" does not decode; it waits, and the changes after it, until a version of the app decodes it.",
                    path: path, underlyingError: error)))
                return OutboxQueue.Change(entry: entry, modelType: kind.modelType, problem: "it does not decode: \(error)")
            }
        }
        let fresh = state.withLock { state -> [AppCacheError] in
            state.outbox.store(changes, user: user, identity: read.identity, change: change, epoch: loaded.epoch)
            return problems.compactMap { state.sending.reported.insert($0.0).inserted ? $0.1 : nil }
        }
        if !fresh.isEmpty { reportAll(fresh) }
        return (user, changes)
    }

    /// `items`, the current user's confirmed collection of `Model` under `key`, with the
    /// pending changes to it applied in enqueue order.
    ///
    /// - Returns: the items shown, and whether any change was applied.
    func applyingPending<Model: CacheableModel>(_ items: [Model], of type: Model.Type, key: String?) -> (items: [Model], applied: [UUID]) {
        guard state.withLock({ $0.outbox.hasKinds }) else { return (items, []) }
        let type = ObjectIdentifier(Model.self)
        let changes = OutboxQueue.applicable(currentOutbox().changes, to: type, key: key)
        guard !changes.isEmpty else { return (items, []) }
        var shown = items
        for change in changes { change.mutation.apply(toItemsOf: Model.self, &shown) }
        return (shown, changes.map(\.id))
    }

    /// Applies an accepted change to the confirmed collection it changes, if one is cached for
    /// the session's user: it stays visible once it leaves the queue, until the next confirmed
    /// write replaces the collection.
    func fold<M: CacheMutation>(_ change: M, for session: CacheSession) throws {
        _ = try update(M.Model.self, forKey: change.key, session: session, onlyIfCached: true) { items, _ in
            change.apply(to: &items)
        }
    }
}
