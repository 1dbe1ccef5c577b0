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
        queries.load(Model.self, forKey: key, policy: policy, retry: retry) { context in try await fetch(context.validators) }
    }
}
