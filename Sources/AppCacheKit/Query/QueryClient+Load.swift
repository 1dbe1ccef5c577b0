import Foundation

extension QueryClient {
    /// ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` whose fetch gets a ``LoadContext``: the cached
    /// items of the user the fetch is for, with their validators.
    ///
    /// - Parameter given: the session the load is bound to (``AppCache/load(_:forKey:policy:retry:for:fetch:)``);
    ///   `nil` for the user current when it begins, whose items it shows only while they stay current.
    func load<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, policy: LoadPolicy, retry: RetryPolicy, for given: CacheSession? = nil,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        // Called from inside a fetch: not from inside this collection's own (it would wait for
        // itself). The fetches this load starts carry what the caller's fetch carries.
        let scope = FetchScope.current.get()
        if !scope.isEmpty, let refusal = nestedLoadRefusal(Model.self, key: key, session: given, in: scope, operation: "load") {
            return AsyncThrowingStream { throw refusal }
        }
        noteUse(Model.self, key: key, for: given, fetch: fetch)
        // A fresh memory hit (or any, for cacheFirst) is the whole answer: no disk, no decoding
        // and no fetch. It is given without a task, from a stream that hands it over without
        // suspending its consumer.
        if given == nil, policy != .fetchFirst, let hit = store.memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || store.isLive(hit) {
            let stale = store.isStale(Model.self, key: key, cachedAt: hit.cachedDate)
            if !stale || policy == .cacheFirst {
                let answer = Locked<LoadedItems<Model>?>(LoadedItems(
                    items: hit.items.items(as: Model.self), cachedDate: hit.cachedDate, isStale: stale,
                    source: .memory))
                return AsyncThrowingStream(unfolding: { answer.withLock { answer in defer { answer = nil }; return answer } })
            }
        }
        let (stream, continuation) = StreamPair.throwing(of: LoadedItems<Model>.self)
        let (current, switches) = store.sessionAndSwitches
        let task = Task.detached { [self] in
            do {
                try await runLoad(
                    Model.self, key: key, policy: policy, retry: retry, session: given ?? current, bound: given != nil,
                    switches: switches, scope: scope, fetch: fetch, yield: { continuation.yield($0) })
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// What a load found cached: the answer it shows (`loaded`, pending mutations applied) and
    /// what the store holds (`stored`: validators, pin, expiry, next page), which a refresh keeps.
    typealias CachedForLoad<Model: CacheableModel> = (loaded: LoadedItems<Model>, stored: CollectionStore.StoredCollection<Model>)

    /// The steps of a load, on the load's own task.
    ///
    /// - Parameters:
    ///   - bound: whether the load is bound to `session` (read and stored in its user's space,
    ///     current or not) rather than to the user current at `switches`.
    ///   - scope: the collections whose fetches the load was started from (``FetchScope``).
    func runLoad<Model: CacheableModel>(
        _ type: Model.Type, key: String?, policy: LoadPolicy, retry: RetryPolicy = .none, session: CacheSession, bound: Bool = false,
        switches: UInt64, scope: Set<FetchScope.Collection> = [], fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>,
        yield: (LoadedItems<Model>) -> Void
    ) async throws {
        let target = bound ? session : nil
        var cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches, for: target) }
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
        let validators = cached?.stored.validators
        let isPinned = cached?.stored.isPinned ?? false
        let cachedItems = cached?.loaded.items
        let outcome = await flights.join(
            FlightTable.Key(session: session, type: ObjectIdentifier(Model.self), key: key), as: Model.self
        ) { [self] in
            await performFetch(Model.self, key: key, session: session, validators: validators, isPinned: isPinned, retry: retry, scope: scope) {
                validators in try await fetch(LoadContext(cachedItems: cachedItems, validators: validators, key: key))
            }
        }
        switch outcome {
        case .items(let items, let cachedDate):
            // The fetched items are the confirmed base; the changes still pending go on top.
            let shown = store.user == session.user
                ? outbox.applyingPending(items, of: Model.self, key: key) : (items: items, applied: [])
            yield(LoadedItems(
                items: shown.items, cachedDate: cachedDate, isStale: false, source: .fetch, hasPendingMutations: !shown.applied.isEmpty))
        case .notModified(let cachedDate):
            if cached == nil {
                cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches, for: target) }
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

    /// The collection as cached for the load's user: the current user's, if the user has not
    /// changed since the load began (`switches`), a load never showing another user's items;
    /// or, for a load bound to a session (`target`), that session's user's, current or not,
    /// unless their data was removed since. The pending changes (``AppCache/enqueue(_:)``) of
    /// the current user are applied.
    func readForLoad<Model: CacheableModel>(
        _ type: Model.Type, key: String?, switches: UInt64, for target: CacheSession? = nil
    ) throws -> CachedForLoad<Model>? {
        var switches = switches
        if let target {
            let standing = store.standing(of: target)
            guard standing.mayWrite else { return nil }
            // Only the current user's queue is known: another user's items are their confirmed ones.
            guard standing.isCurrent else {
                guard let found = try store.readCollection(Model.self, key: key, ofOtherUser: target.user) else { return nil }
                return (loaded(found, key: key, items: found.items, applied: []), found)
            }
            switches = standing.switches
        }
        var found: CollectionStore.StoredCollection<Model>?
        let read = try outbox.readingWithPending(Model.self, key: key) { () throws -> [Model]? in
            found = try store.readCollection(Model.self, key: key, switches: switches)
            return found?.items
        }
        guard let read, let found else { return nil }
        return (loaded(found, key: key, items: read.items, applied: read.applied), found)
    }

    /// What a load shows of `found`, the collection under `key`: `items`, with the pending
    /// changes `applied`.
    private func loaded<Model: CacheableModel>(
        _ found: CollectionStore.StoredCollection<Model>, key: String?, items: [Model], applied: [UUID]
    ) -> LoadedItems<Model> {
        LoadedItems(
            items: items, cachedDate: found.cachedDate, isStale: store.isStale(Model.self, key: key, cachedAt: found.cachedDate),
            source: found.fromDisk ? .disk : .memory, hasPendingMutations: !applied.isEmpty)
    }

    /// Runs `fetch` for a flight, tried again as `retry` says, and stores what it brings for
    /// `session`'s user.
    ///
    /// `fetch` runs with `scope` and this collection as the task's ``FetchScope``: a load or
    /// watch of this collection from inside it throws `nestedLoad`.
    func performFetch<Model: CacheableModel>(
        _ type: Model.Type, key: String?, session: CacheSession, validators: CacheValidators?, isPinned: Bool,
        retry: RetryPolicy = .none, scope: Set<FetchScope.Collection> = [], fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) async -> Flight<Model>.Outcome {
        let result: FetchResult<Model>
        let inside = scope.union([FetchScope.Collection(
            flights: ObjectIdentifier(flights), user: session.user, type: ObjectIdentifier(Model.self), key: key)])
        switch await runFetch(Model.self, key: key, user: session.user, retry: retry, finished: \.eventKind, {
            try await FetchScope.current.withValue(inside) { try await fetch(validators) }
        }) {
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
            switch result.answer {
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

    /// The error for a load or watch of `Model` under `key` from inside that collection's own
    /// fetch (``FetchScope``), `nil` when it is not.
    ///
    /// - Parameter given: the session the call is bound to; `nil` for the current user's.
    func nestedLoadRefusal<Model: CacheableModel>(
        _ type: Model.Type, key: String?, session given: CacheSession?, in scope: Set<FetchScope.Collection>, operation: String
    ) -> AppCacheError? {
        let user = given?.user ?? store.sessionAndSwitches.session.user
        return FetchScope.refusal(
            of: FetchScope.Collection(flights: ObjectIdentifier(flights), user: user, type: ObjectIdentifier(Model.self), key: key), in: scope,
            cacheName: store.typeInfo(Model.self).cacheName, operation: operation)
    }
}
