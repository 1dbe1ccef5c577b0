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
    /// `fetch` runs once and every one of them gets its result. `fetch` receives a
    /// ``LoadContext``: the cached items of the user the fetch is for and the validators stored
    /// with them (`nil` when none); answering ``FetchResult/notModified``
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
    /// let feed = cache.load(Post.self, forKey: "top", fetch: { context in
    ///     try await api.topPosts(ifNoneMatch: context.validators?.etag)
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
    /// `fetch` may load or watch other collections (another key, type or user), but not its own:
    /// a `load` or `watch` of the same collection from inside `fetch` (or from the fetch of a
    /// collection that `fetch` loads) would wait for the very fetch it is called from, so its
    /// stream throws ``AppCacheError/Code/nestedLoad`` at once instead. The cached items are in
    /// the fetch's ``LoadContext``.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: when to fetch.
    ///   - retry: how a failed fetch is tried again; ``RetryPolicy/none`` for one attempt.
    ///   - fetch: brings the current items, given the cached ones and their validators. Runs on
    ///     a task of its own, once per flight (and again per retry). It must not load or watch
    ///     its own collection (that throws `nestedLoad`). Unless the type has a registered
    ///     fetch (``registerFetch(for:_:)``), the cache keeps it after the load for background
    ///     refreshes (see <doc:Queries>): capture the cache, and objects that own it, weakly.
    /// - Returns: a stream of one or two answers; it throws `nestedLoad` when called from
    ///   inside the fetch of the same collection.
    public func load<Model: CacheableModel>(
        _ type: Model.Type,
        forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        queries.load(Model.self, forKey: key, policy: policy, retry: retry, fetch: fetch)
    }

    /// Loads as ``load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` does, with a fetch that takes the stored
    /// validators only: a convenience that forwards to it.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: when to fetch.
    ///   - retry: how a failed fetch is tried again.
    ///   - fetch: brings the current items, given the stored validators.
    /// - Returns: a stream of one or two answers.
    @_disfavoredOverload
    public func load<Model: CacheableModel>(
        _ type: Model.Type,
        forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        queries.load(Model.self, forKey: key, policy: policy, retry: retry) { context in try await fetch(context.validators) }
    }

    /// Loads the collection of `Model` under `key` as ``load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)``
    /// does, then follows it: yields every later change (any writer, any process) and
    /// refetches on its own while the stream is consumed.
    ///
    /// It refetches:
    /// - when the collection is invalidated (``invalidate(_:forKey:)``, here or in another
    ///   process), at once;
    /// - when the app becomes active (``RefreshTriggers/onForeground``) or the network comes
    ///   back (``RefreshTriggers/onReconnect``), if the collection is stale (a fresh one is not
    ///   refetched);
    /// - every ``RefreshTriggers/every`` while watched, whatever the staleness, paused while
    ///   the app is in the background.
    ///
    /// Every fetch joins the collection's one flight (a `load` or another watch of it share
    /// it) and is retried as `retry` says. While a fetch fails, the cached items stay what the
    /// stream last yielded; a failure is yielded as those items with
    /// ``LoadedItems/refreshError`` set. The stream throws only when a fetch fails with nothing
    /// cached to show. An invalidation that comes while a flight is under way does not stop it
    /// (what it brings is stored: offline, better than nothing); the watch fetches again once it
    /// ends, as TanStack Query refetches.
    ///
    /// `fetch` receives a ``LoadContext``: the cached items of the user the fetch is for, with
    /// their validators, so an incremental refresh merges into that user's items even if another
    /// signs in meanwhile.
    ///
    /// ```swift
    /// let live = cache.watch(Post.self, forKey: "live", refresh: .init(every: .seconds(30))) { context in
    ///     let newer = try await api.posts(since: context.cachedItems?.first?.id)
    ///     return .items(newer + (context.cachedItems ?? []))
    /// }
    /// for try await feed in live {
    ///     show(feed.items)
    /// }
    /// ```
    ///
    /// Values are yielded in order: never an older one after a newer one. Nothing runs while
    /// nothing happens (no timer without polling or an expiry), and no thread is held per
    /// stream: any number of watches share the library's few threads. The stream does not keep
    /// the cache alive; ending the consuming task ends it, its polling and its flight (unless
    /// another waits for it).
    ///
    /// As for `load`, a watch started from inside the fetch of the same collection throws
    /// ``AppCacheError/Code/nestedLoad`` at once, and `fetch` must not load or watch its own
    /// collection.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: whether the first look fetches, as for `load`.
    ///   - refresh: the events that refetch besides invalidations.
    ///   - retry: how a failed fetch is tried again.
    ///   - fetch: brings the current items, given the cached ones and their validators. As a
    ///     load's, it is kept for background refreshes after the watch ends unless the type has
    ///     a registered fetch: capture the cache, and objects that own it, weakly.
    /// - Returns: a stream of the collection's items, newest last, until cancelled.
    public func watch<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        refresh: RefreshTriggers = .default,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        queries.watch(Model.self, forKey: key, policy: policy, refresh: refresh, retry: retry, for: nil, fetch: fetch)
    }

    /// Watches the collection of `Model` under `key` of `session`'s user, as
    /// ``watch(_:forKey:policy:refresh:retry:fetch:)`` does for the current user.
    ///
    /// The watch follows that user's collection whether or not they are current (for a user
    /// who is not, the confirmed items: pending mutations are the current user's), and what
    /// its fetches bring lands in that user's space. Once that user's data is removed
    /// (``CacheSession``), its fetches are dropped and it shows nothing more.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: what the first look fetches.
    ///   - refresh: the events that refetch.
    ///   - retry: how a failed fetch is tried again.
    ///   - session: the user the watch is for, taken from ``session``.
    ///   - fetch: brings the current items, given the cached ones of that user.
    /// - Returns: a stream that lasts until its consumer ends it.
    public func watch<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        refresh: RefreshTriggers = .default,
        retry: RetryPolicy = .default,
        for session: CacheSession,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        queries.watch(Model.self, forKey: key, policy: policy, refresh: refresh, retry: retry, for: session, fetch: fetch)
    }

    /// Loads the collection of `Model` under `key` of `session`'s user, as
    /// ``load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` does for the current user.
    ///
    /// The load reads that user's cached items whether or not they are current (for a user
    /// who is not, the confirmed items), and what its fetch brings lands in that user's space;
    /// it is dropped (the stream finishes without it) only when that user's data was removed
    /// since the session was taken (``CacheSession``).
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: when to fetch.
    ///   - retry: how a failed fetch is tried again.
    ///   - session: the user the load is for, taken from ``session`` when the work began.
    ///   - fetch: brings the current items, given the cached ones of that user.
    /// - Returns: a stream of one or two answers.
    public func load<Model: CacheableModel>(
        _ type: Model.Type,
        forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        retry: RetryPolicy = .default,
        for session: CacheSession,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        queries.load(Model.self, forKey: key, policy: policy, retry: retry, for: session, fetch: fetch)
    }

    /// Appends the page after the stored cursor to the collection of `Model` under `key`, and
    /// returns the whole collection.
    ///
    /// The first page comes from a fetch that answers ``FetchResult/page(_:next:validators:)``
    /// (through ``load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` or ``watch(_:forKey:policy:refresh:retry:fetch:)``):
    /// it replaces the collection and stores the cursor of the page after it, with the
    /// validators, in the archive (a relaunch goes on from there). Each call fetches the page at
    /// the stored cursor, appends its items (an item whose `id` is already present is replaced
    /// in place, not repeated), keeps the first `maxCount` items, and stores the new cursor. The
    /// collection keeps its cached date: staleness is the first page's. A refresh of the first
    /// page drops the later pages and stores its own cursor; a page fetched from a cursor that a
    /// refresh replaced meanwhile is dropped, and the collection is returned as the refresh left
    /// it. Two calls at once fetch once. Like every write it is bound to the user who started
    /// it: if another user signs in before the page arrives, the page is dropped (as
    /// ``updateItems(_:forKey:for:_:)`` drops an update), never appended to anyone else's
    /// collection, and the call throws `notCached`.
    ///
    /// ```swift
    /// func showMore() async throws {
    ///     guard cache.hasNextPage(Post.self, forKey: "timeline") else { return }
    ///     let all = try await cache.loadNextPage(Post.self, forKey: "timeline", maxCount: 800) { cursor in
    ///         let posts = try await api.timeline(maxID: cursor)
    ///         return Page(items: posts, next: posts.last.map { String($0.id) })
    ///     }
    ///     show(all.items)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type; its `id` says which items are the same.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - maxCount: the most items the collection keeps (the first ones); `nil` for no limit.
    ///   - retry: how a failed page fetch is tried again.
    ///   - fetch: brings the page at a cursor.
    /// - Returns: the whole collection after the page, source ``LoadedItems/Source/fetch``.
    /// - Throws: ``AppCacheError/Code/noNextPage`` when no cursor is stored (no first page yet,
    ///   or the last page reached), without fetching; what `fetch` throws, after the retries;
    ///   the write errors of ``updateItems(_:forKey:_:)``.
    public func loadNextPage<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, forKey key: String? = nil, maxCount: Int? = nil,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>
    ) async throws -> LoadedItems<Model> {
        guard let loaded = try await queries.loadNextPage(Model.self, forKey: key, maxCount: maxCount, retry: retry, fetch: fetch) else {
            // Bound to no session, a page is never dropped in silence.
            throw AppCacheError(code: .notCached, message: "The page was dropped.", cacheName: Model.cacheName, key: key)
        }
        return loaded
    }

    /// Appends the next page to the collection of `Model` under `key` of `session`'s user, as
    /// ``loadNextPage(_:forKey:maxCount:retry:fetch:)`` does for the current user.
    ///
    /// The page lands in that user's space whether or not they are current; it is dropped
    /// only when that user's data was removed since the session was taken (``CacheSession``).
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - maxCount: the most items the collection keeps; `nil` for no limit.
    ///   - retry: how a failed fetch is tried again.
    ///   - session: the user the page is for, taken from ``session`` when the work began.
    ///   - fetch: fetches the page after `cursor`.
    /// - Returns: the whole collection with the page appended; `nil` when it was dropped.
    /// - Throws: what ``loadNextPage(_:forKey:maxCount:retry:fetch:)`` throws.
    public func loadNextPage<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, forKey key: String? = nil, maxCount: Int? = nil,
        retry: RetryPolicy = .default, for session: CacheSession,
        fetch: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>
    ) async throws -> LoadedItems<Model>? {
        try await queries.loadNextPage(Model.self, forKey: key, maxCount: maxCount, retry: retry, for: session, fetch: fetch)
    }

    /// Whether the collection of `Model` under `key` of the current user has a next page to
    /// load (a cursor stored by its last page); `false` when it has none, or is not cached.
    ///
    /// Reads the collection's record (memory, or the archive) on the caller's thread.
    public func hasNextPage<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Bool {
        queries.hasNextPage(Model.self, forKey: key)
    }

    /// The collection of `Model` under `key` of the current user, now and after every change.
    ///
    /// The stream yields the current items at once (`nil` when none), then the items after every
    /// change to that collection: ``cacheItems(_:forKey:expiresAfter:)`` (and loads, updates and
    /// single-item writes), removals, expiry (when the time to live passes, with no call needed),
    /// wipes, and user switches (then the new user's items, or `nil`). Rapid changes may
    /// coalesce into one value, but a value never follows a newer one. Changes written by
    /// another process or instance sharing the root are yielded as soon as they reach its disk:
    /// the writer wakes this process (a futex on the lock file's shared counter on Linux, a
    /// Darwin notification on Apple platforms), and no timer runs while nothing changes.
    ///
    /// ```swift
    /// for await posts in cache.updates(Post.self, forKey: "top") {
    ///     render(posts ?? [])
    /// }
    /// ```
    ///
    /// Reads run on a task of the stream's own, off the caller's executor. Ending the
    /// consuming task ends the stream and frees what it held. The stream does not keep the
    /// cache alive: keep a reference to the cache for as long as you follow it (an app's cache
    /// lives as long as the app); the stream finishes when the cache goes away.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    /// - Returns: a stream of the collection's items, newest last.
    public func updates<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> AsyncStream<[Model]?> {
        queries.updates(Model.self, forKey: key)
    }

    /// The items of `Model` under `key` now and after every change: ``updates(_:forKey:)``, by
    /// its earlier spelling.
    @available(*, deprecated, renamed: "updates(_:forKey:)")
    public func updates<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> AsyncStream<[Model]?> {
        updates(type, forKey: key)
    }

    /// Marks the collection of `Model` under `key` stale now, without removing its items: the
    /// next ``load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` fetches, and a watched collection refetches.
    ///
    /// Recorded in the root (`.invalidations`), so a relaunch and every other process sharing
    /// it judge the collection stale too; their `updates` and watches hear of it through the
    /// change signal. The collection is stale until it is written again (a fetch, a
    /// `cacheItems`): a write after the invalidation is fresh. Only the current user's
    /// collection is marked. `isStale`, `cachedCollection`, `entries()` and `load` all say so.
    ///
    /// ```swift
    /// try cache.invalidate(Post.self, forKey: "top")      // after the user changed a filter
    /// try cache.invalidate(Post.self, keyPrefix: "feed/") // every feed
    /// try cache.invalidateAll()                           // after a settings change
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection; `nil` for the type's default collection only (use
    ///     ``invalidate(_:keyPrefix:)`` with `""` for every collection of the type).
    /// - Throws: `permissionDenied` on a read-only cache, `busy` when the lock file stayed
    ///   held past the lock timeout, `ioFailure` or `noSpace` when the record cannot be written;
    ///   nothing is marked then.
    /// - Complexity: one small file rewritten, whatever the number of collections it covers.
    public func invalidate<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try store.invalidate(cacheName: store.typeInfo(Model.self).cacheName, keys: key.map(InvalidationLog.KeyMatch.exactly) ?? .defaultCollection)
    }

    /// Marks every collection of `Model` whose key starts with `keyPrefix` stale now, without
    /// removing items (see ``invalidate(_:forKey:)``); `""` marks every collection of the type,
    /// its default collection included.
    ///
    /// - Throws: what ``invalidate(_:forKey:)`` throws.
    public func invalidate<Model: CacheableModel>(_ type: Model.Type, keyPrefix: String) throws {
        try store.invalidate(cacheName: store.typeInfo(Model.self).cacheName, keys: keyPrefix.isEmpty ? .any : .prefix(keyPrefix))
    }

    /// Marks every collection of the current user stale now, of every type, without removing
    /// items (see ``invalidate(_:forKey:)``).
    ///
    /// - Throws: what ``invalidate(_:forKey:)`` throws.
    public func invalidateAll() throws {
        try store.invalidate(cacheName: nil, keys: .any)
    }
}
