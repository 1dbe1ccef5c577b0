import Foundation

extension QueryClient {
    /// ``AppCache/load(_:forKey:policy:retry:fetch:)`` whose fetch gets a ``LoadContext``: the cached
    /// items of the user the fetch is for, with their validators.
    func load<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, policy: LoadPolicy, retry: RetryPolicy,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        // A fresh memory hit (or any, for cacheFirst) is the whole answer: no disk, no decoding
        // and no fetch. It is given without a task, from a stream that hands it over without
        // suspending its consumer.
        if policy != .fetchFirst, let hit = store.memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || store.isLive(hit) {
            let stale = store.isStale(Model.self, key: key, cachedAt: hit.cachedDate)
            if !stale || policy == .cacheFirst {
                let answer = Locked<LoadedItems<Model>?>(LoadedItems(
                    items: hit.items.items(as: Model.self), cachedDate: hit.cachedDate, isStale: stale,
                    source: .memory))
                return AsyncThrowingStream(unfolding: { answer.withLock { answer in defer { answer = nil }; return answer } })
            }
        }
        let (stream, continuation) = StreamPair.throwing(of: LoadedItems<Model>.self)
        let (session, switches) = store.sessionAndSwitches
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
            let shown = store.user == session.user
                ? outbox.applyingPending(items, of: Model.self, key: key) : (items: items, applied: [])
            yield(LoadedItems(
                items: shown.items, cachedDate: cachedDate, isStale: false, source: .fetch, hasPendingChanges: !shown.applied.isEmpty))
        case .notModified(let cachedDate):
            if cached == nil {
                cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches) }
            }
            guard var current = cached?.loaded else {
                throw AppCacheError(
                    code: .notCached, message: "The fetch answered notModified, but the collection is no longer cached.",
                    cacheName: store.typeInfo(Model.self).cacheName, key: key)
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
    /// load began (`switches`): a load never shows another user's items. The pending changes
    /// (``AppCache/enqueue(_:)``) are applied.
    func readForLoad<Model: CacheableModel>(
        _ type: Model.Type, key: String?, switches: UInt64
    ) throws -> CachedForLoad<Model>? {
        guard let found = try store.readCollection(Model.self, key: key, switches: switches) else { return nil }
        let shown = outbox.applyingPending(found.items, of: Model.self, key: key)
        return CachedForLoad(
            loaded: LoadedItems(
                items: shown.items, cachedDate: found.cachedDate, isStale: store.isStale(Model.self, key: key, cachedAt: found.cachedDate),
                source: found.fromDisk ? .disk : .memory, hasPendingChanges: !shown.applied.isEmpty),
            validators: found.validators, isPinned: found.isPinned, expiry: found.expiry, nextPageCursor: found.nextPageCursor)
    }

    /// Runs `fetch` for a flight, tried again as `retry` says, and stores what it brings for
    /// `session`'s user.
    func performFetch<Model: CacheableModel>(
        _ type: Model.Type, key: String?, session: CacheSession, validators: CacheValidators?, isPinned: Bool,
        retry: RetryPolicy = .none, fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) async -> Flight<Model>.Outcome {
        let result: FetchResult<Model>
        switch await retry.run(network: network, { try await fetch(validators) }) {
        case .success(let fetched): result = fetched
        case .failure(let error): return .failed(error)
        case nil: return .cancelled
        }
        // Nobody waits for a cancelled fetch: what it brought is not stored.
        if Task.isCancelled { return .cancelled }
        // Stored on a library thread: a write may wait for the disk and the lock file.
        return await LibraryThreads.run { [self] in storeFetched(result, of: Model.self, key: key, session: session, isPinned: isPinned) }
    }

    /// Stores what a fetch brought (or re-dates what is cached, for `notModified`) for
    /// `session`'s user. Blocks on the disk: call on a library thread.
    private func storeFetched<Model: CacheableModel>(
        _ result: FetchResult<Model>, of type: Model.Type, key: String?, session: CacheSession, isPinned: Bool
    ) -> Flight<Model>.Outcome {
        do {
            switch result {
            case .items(let items, let validators):
                guard let cachedDate = try store.save(
                    items, forKey: key, expiresAfter: nil, pinned: isPinned, validators: validators, session: session)
                else { return .dropped }
                return .items(items, cachedDate: cachedDate)
            case .page(let items, let next, let validators):
                // A first page replaces the collection (later pages go) and brings its cursor.
                guard let cachedDate = try store.save(
                    items, forKey: key, expiresAfter: nil, pinned: isPinned, validators: validators, nextPageCursor: next, session: session)
                else { return .dropped }
                return .items(items, cachedDate: cachedDate)
            case .notModified:
                switch try store.redate(Model.self, key: key, session: session) {
                case .redated(let date): return .notModified(cachedDate: date)
                case .dropped: return .dropped
                case .nothingCached:
                    return .failed(AppCacheError(
                        code: .notCached, message: "The fetch answered notModified, but nothing is cached to stand for it.",
                        cacheName: store.typeInfo(Model.self).cacheName, key: key))
                }
            }
        } catch {
            return .failed(error)
        }
    }
}
