import Foundation

#if canImport(Network)
import Network
#endif

extension AppCache {
    /// Loads the collection of `Model` under `key` as ``load(_:forKey:policy:retry:fetch:)``
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
    /// nothing happens (no timer without polling or an expiry). The stream does not keep the
    /// cache alive; ending the consuming task ends it, its polling and its flight (unless
    /// another waits for it).
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: whether the first look fetches, as for `load`.
    ///   - refresh: the events that refetch besides invalidations.
    ///   - retry: how a failed fetch is tried again.
    ///   - fetch: brings the current items, given the cached ones and their validators.
    /// - Returns: a stream of the collection's items, newest last, until cancelled.
    public func watch<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil,
        policy: LoadPolicy = .staleWhileRevalidate,
        refresh: RefreshTriggers = .default,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        let (stream, continuation) = StreamPair.throwing(of: LoadedItems<Model>.self)
        let stop = queries.startWatch(
            Model.self, key: key, policy: policy, fetchesFirst: true, refresh: refresh, retry: retry, fetch: fetch,
            yield: { loaded in if let loaded { continuation.yield(loaded) } },
            finish: { error in continuation.finish(throwing: error) })
        continuation.onTermination = { _ in stop() }
        return stream
    }
}
