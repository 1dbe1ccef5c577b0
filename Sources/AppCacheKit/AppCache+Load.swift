import Foundation

extension AppCache {
    /// Loads the collection of `Model` under `key` the way a screen wants it: what is cached at
    /// once, then, when it is stale or missing, what `fetch` brings, stored for the next time.
    ///
    /// The stream yields one or two ``LoadedItems`` and finishes:
    ///
    /// - ``LoadPolicy/staleWhileRevalidate`` (the default) yields the cached items (from memory
    ///   or disk) first; when they are fresh it finishes without fetching; when they are stale or
    ///   missing it fetches, stores the result as ``cacheItems(_:forKey:expiresAfter:)`` would,
    ///   and yields it.
    /// - ``LoadPolicy/cacheFirst`` yields any cached items, even stale, and finishes; it fetches
    ///   only when nothing is cached.
    /// - ``LoadPolicy/fetchFirst`` fetches first and yields the result; cached items are the
    ///   fallback when the fetch fails.
    ///
    /// When `fetch` throws and cached items exist, they are yielded (again) with
    /// ``LoadedItems/refreshError`` set and the stream finishes normally: offline, the screen
    /// keeps what it had. The stream throws `fetch`'s error, as thrown, only when it has no
    /// items to give.
    ///
    /// Loads of the same user, type and key that need a fetch while one is under way share it:
    /// `fetch` runs once and every one of them gets its result. `fetch` receives the validators
    /// stored with the collection (`nil` when none); answering ``FetchResult/notModified``
    /// re-dates the cached collection as cached now without rewriting it, and yields it with
    /// source ``LoadedItems/Source/notModified``; with nothing cached that is an error
    /// (``AppCacheError/Code/notCached``).
    ///
    /// The result is stored for the user who was current when the load began, even if another
    /// signed in meanwhile; if that user's data was removed meanwhile (``signOut(removingData:)``,
    /// ``removeUser(_:)``, ``removeAll(includingPinned:)`` with pinned ones), it is dropped and the stream
    /// finishes without yielding it. A refresh keeps the collection's pin; it has no expiry.
    ///
    /// ```swift
    /// let feed = cache.load(Post.self, forKey: "top", fetch: { validators in
    ///     try await api.topPosts(ifNoneMatch: validators?.etag)
    /// })
    /// for try await loaded in feed {
    ///     show(loaded.items)                  // cached first, then fresh
    /// }
    /// ```
    ///
    /// Disk reads and decoding run off the caller's executor: a load started on the main actor
    /// never blocks it on file I/O. Ending the consuming task ends the stream; a fetch that no
    /// stream waits for any more is cancelled, and a cancelled fetch stores nothing.
    ///
    /// A failed fetch is tried again as `retry` says (by default three attempts, exponential
    /// backoff with full jitter; see ``RetryPolicy``), inside the one flight every waiting load
    /// shares; one that failed for want of a network waits for ``networkDidBecomeAvailable()``
    /// instead of counting the attempt. The cached items, yielded first, stay what the screen
    /// shows meanwhile; the last error is the fallback's ``LoadedItems/refreshError``.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: when to fetch.
    ///   - retry: how a failed fetch is tried again; ``RetryPolicy/none`` for one attempt.
    ///   - fetch: brings the current items, given the stored validators. Runs on a task of its
    ///     own, once per flight (and again per retry).
    /// - Returns: a stream of one or two answers.
    public func load<Model: CacheableModel>(
        _ type: Model.Type,
        forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        loadWithContext(Model.self, forKey: key, policy: policy, retry: retry) { context in try await fetch(context.validators) }
    }

    // MARK: - Internal

    /// ``load(_:forKey:policy:retry:fetch:)`` whose fetch gets a ``LoadContext``: the cached
    /// items of the user the fetch is for, with their validators.
    func loadWithContext<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, policy: LoadPolicy, retry: RetryPolicy,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        // A fresh memory hit (or any, for cacheFirst) is the whole answer: no disk, no decoding
        // and no fetch. It is given without a task, from a stream that hands it over without
        // suspending its consumer.
        if policy != .fetchFirst, let hit = memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || isLive(hit) {
            let stale = isStale(Model.self, key: key, cachedAt: hit.cachedDate)
            if !stale || policy == .cacheFirst {
                let answer = Locked<LoadedItems<Model>?>(LoadedItems(
                    items: hit.items.items(as: Model.self), cachedDate: hit.cachedDate, isStale: stale,
                    source: .memory))
                return AsyncThrowingStream(unfolding: { answer.withLock { answer in defer { answer = nil }; return answer } })
            }
        }
        let (stream, continuation) = StreamPair.throwing(of: LoadedItems<Model>.self)
        let (session, switches) = state.withLock { ($0.session, $0.sessions.switches) }
        let task = Task.detached { [self] in
            do {
                try await runLoad(
                    Model.self, key: key, policy: policy, retry: retry, session: session, switches: switches, fetch: fetch,
                    yield: { continuation.yield($0) })
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// What a load found cached, and what a refresh keeps of it.
    struct CachedForLoad<Model: CacheableModel> {
        var loaded: LoadedItems<Model>
        var validators: CacheValidators?
        var isPinned: Bool
        var expiry: Date?
        /// The cursor of the collection's next page; `nil` when it has none.
        var nextPageCursor: String?
    }

    /// The steps of a load, on the load's own task.
    func runLoad<Model: CacheableModel>(
        _ type: Model.Type, key: String?, policy: LoadPolicy, retry: RetryPolicy = .none, session: CacheSession, switches: UInt64,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>,
        yield: (LoadedItems<Model>) -> Void
    ) async throws {
        var cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches) }
        switch policy {
        case .staleWhileRevalidate:
            if let cached {
                yield(cached.loaded)
                if !cached.loaded.isStale { return }
            }
        case .cacheFirst:
            if let cached {
                yield(cached.loaded)
                return
            }
        case .fetchFirst:
            break
        }
        if Task.isCancelled { return }
        let validators = cached?.validators
        let isPinned = cached?.isPinned ?? false
        let cachedItems = cached?.loaded.items
        let outcome = await flights.join(
            FlightTable.Key(session: session, type: ObjectIdentifier(Model.self), key: key), as: Model.self
        ) { [self] in
            await performFetch(Model.self, key: key, session: session, validators: validators, isPinned: isPinned, retry: retry) {
                validators in try await fetch(LoadContext(cachedItems: cachedItems, validators: validators))
            }
        }
        switch outcome {
        case .items(let items, let cachedDate):
            // The fetched items are the confirmed base; the changes still pending go on top.
            let shown = state.withLock({ $0.user }) == session.user
                ? applyingPending(items, of: Model.self, key: key) : (items: items, applied: [])
            yield(LoadedItems(
                items: shown.items, cachedDate: cachedDate, isStale: false, source: .fetch, hasPendingChanges: !shown.applied.isEmpty))
        case .notModified(let cachedDate):
            if cached == nil {
                cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches) }
            }
            guard var current = cached?.loaded else {
                throw AppCacheError(
                    code: .notCached, message: "The fetch answered notModified, but the collection is no longer cached.",
                    cacheName: typeInfo(Model.self).cacheName, key: key)
            }
            (current.cachedDate, current.isStale, current.source) = (cachedDate, false, .notModified)
            yield(current)
        case .failed(let error):
            guard var fallback = cached?.loaded else { throw error }
            fallback.refreshError = error
            yield(fallback)
        case .dropped, .cancelled:
            return
        }
    }

    /// The collection as cached for the current user, if the user has not changed since the
    /// load began (`switches`): a load never shows another user's items.
    ///
    /// - Parameter applyingPending: whether the items are shown with the pending changes
    ///   (``enqueue(_:)``) applied; `false` reads the confirmed items (what an update changes).
    func readForLoad<Model: CacheableModel>(
        _ type: Model.Type, key: String?, switches: UInt64, applyingPending: Bool = true
    ) throws -> CachedForLoad<Model>? {
        let info = typeInfo(Model.self)
        var found: (
            items: [Model], cachedDate: Date, source: LoadedItems<Model>.Source, validators: CacheValidators?, isPinned: Bool,
            expiry: Date?, cursor: String?
        )?
        if let hit = memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || isLive(hit) {
            let facts = state.withLock { state -> (CacheValidators?, Bool, Date?, String?)? in
                guard let owner = state.memory.owner(of: ArchiveKey(info.cacheNamePart, user: state.user, key: key)),
                    let entry = state.memory.peek(owner)
                else { return nil }
                return (entry.record.validators, entry.isPinned, entry.record.expiry, entry.record.nextPageCursor)
            }
            found = (hit.items.items(as: Model.self), hit.cachedDate, .memory, facts?.0, facts?.1 ?? false, facts?.2, facts?.3)
        } else if let loaded = try loadAfterMiss(Model.self, key: key) {
            found = (
                loaded.items, loaded.cachedDate, loaded.fromDisk ? .disk : .memory, loaded.validators, loaded.isPinned, loaded.expiry,
                loaded.nextPageCursor
            )
        }
        guard let found, state.withLock({ $0.sessions.switches }) == switches else { return nil }
        let shown = applyingPending ? self.applyingPending(found.items, of: Model.self, key: key) : (items: found.items, applied: [])
        return CachedForLoad(
            loaded: LoadedItems(
                items: shown.items, cachedDate: found.cachedDate, isStale: isStale(Model.self, key: key, cachedAt: found.cachedDate),
                source: found.source, hasPendingChanges: !shown.applied.isEmpty),
            validators: found.validators, isPinned: found.isPinned, expiry: found.expiry, nextPageCursor: found.cursor)
    }

    /// Runs `fetch` for a flight, tried again as `retry` says, and stores what it brings for
    /// `session`'s user.
    func performFetch<Model: CacheableModel>(
        _ type: Model.Type, key: String?, session: CacheSession, validators: CacheValidators?, isPinned: Bool,
        retry: RetryPolicy = .none, fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) async -> Flight<Model>.Outcome {
        let result: FetchResult<Model>
        switch await attempt(retry, { try await fetch(validators) }) {
        case .success(let fetched): result = fetched
        case .failure(let error): return .failed(error)
        case nil: return .cancelled
        }
        // Nobody waits for a cancelled fetch: what it brought is not stored.
        if Task.isCancelled { return .cancelled }
        // Stored on a library thread: a write may wait for the disk and the lock file.
        return await LibraryThreads.run { [self] in storeFetched(result, of: Model.self, key: key, session: session, isPinned: isPinned) }
    }

    /// Runs `operation` until it succeeds, as `retry` says: waits of exponential backoff with
    /// full jitter between attempts, no retry of a cancellation or of what `retryIf` refuses,
    /// and, for a failure for want of a network, a wait for ``networkDidBecomeAvailable()``
    /// that does not count as an attempt (unless `retry` allows one attempt only).
    ///
    /// - Returns: the result, the last error, or `nil` when the task was cancelled.
    func attempt<Value: Sendable>(_ retry: RetryPolicy, _ operation: () async throws -> Value) async -> Swift.Result<Value, any Error>? {
        var failures = 0
        while true {
            do {
                return .success(try await operation())
            } catch {
                if Task.isCancelled { return nil }
                if RetryPolicy.isCancellation(error) { return .failure(error) }
                if retry.maxAttempts > 1, RetryPolicy.isNoNetwork(error) {
                    // Offline: wait for the network rather than burn an attempt.
                    await network.waitForAvailability()
                    if Task.isCancelled { return nil }
                    continue
                }
                failures += 1
                guard failures < retry.maxAttempts, retry.retryIf(error) else { return .failure(error) }
                try? await Task.sleep(for: retry.delay(afterFailures: failures, fraction: .random(in: 0...1)))
                if Task.isCancelled { return nil }
            }
        }
    }

    /// Stores what a fetch brought (or re-dates what is cached, for `notModified`) for
    /// `session`'s user. Blocks on the disk: call on a library thread.
    private func storeFetched<Model: CacheableModel>(
        _ result: FetchResult<Model>, of type: Model.Type, key: String?, session: CacheSession, isPinned: Bool
    ) -> Flight<Model>.Outcome {
        do {
            switch result {
            case .items(let items, let validators):
                guard let cachedDate = try save(
                    items, forKey: key, expiresAfter: nil, pinned: isPinned, validators: validators, session: session)
                else { return .dropped }
                return .items(items, cachedDate: cachedDate)
            case .page(let items, let next, let validators):
                // A first page replaces the collection (later pages go) and brings its cursor.
                guard let cachedDate = try save(
                    items, forKey: key, expiresAfter: nil, pinned: isPinned, validators: validators, nextPageCursor: next, session: session)
                else { return .dropped }
                return .items(items, cachedDate: cachedDate)
            case .notModified:
                switch try restamp(Model.self, key: key, session: session) {
                case .restamped(let date): return .notModified(cachedDate: date)
                case .dropped: return .dropped
                case .nothingCached:
                    return .failed(AppCacheError(
                        code: .notCached, message: "The fetch answered notModified, but nothing is cached to stand for it.",
                        cacheName: typeInfo(Model.self).cacheName, key: key))
                }
            }
        } catch {
            return .failed(error)
        }
    }

    /// What re-dating a collection did.
    enum Restamp {
        case restamped(Date)
        /// The session's user's data was removed: nothing changed.
        case dropped
        case nothingCached
    }

    /// Re-dates the collection of `Model` under `key` of `session`'s user as cached now, without
    /// rewriting its items: a dirty one in memory carries the new date to its write; an archive
    /// gets a new modification date, its bytes untouched.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the archive's date cannot be set.
    func restamp<Model: CacheableModel>(_ type: Model.Type, key: String?, session: CacheSession) throws -> Restamp {
        let info = typeInfo(Model.self)
        let archiveKey = ArchiveKey(info.cacheNamePart, user: session.user, key: key)
        let now = configuration.now()
        return try withDiskWrites { batch -> Restamp in
            let (holds, isCurrent, held) = state.withLock { state -> (Bool, Bool, MemoryEntry?) in
                let isCurrent = state.user == session.user
                let held = isCurrent ? state.memory.owner(of: archiveKey).flatMap { state.memory.peek($0) } : nil
                return (state.sessions.holds(session), isCurrent, held)
            }
            guard holds else { return .dropped }
            if let held, held.isDirty {
                state.withLock { state in _ = state.memory.restamp(archiveKey, at: now, identity: nil) }
                return .restamped(now)
            }
            let path = disk.store.layout.archivePath(for: archiveKey)
            guard let onDisk = batch.facts(of: path),
                let redated = try batch.redate(path, ifStill: onDisk.identity, to: now, key: archiveKey)
            else { return .nothingCached }
            if isCurrent {
                state.withLock { state in
                    // Memory's copy is this very file, re-dated; or another writer replaced the
                    // file, and the next read takes it from disk.
                    if let held, held.diskIdentity == onDisk.identity {
                        state.memory.restamp(archiveKey, at: now, identity: redated)
                    } else {
                        state.memory.remove(archiveKey)
                    }
                }
            }
            return .restamped(now)
        }
    }
}
