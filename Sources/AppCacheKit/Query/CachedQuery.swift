#if canImport(Observation)
public import Foundation
public import Observation

/// A collection for a SwiftUI view: the cached items at once, refreshed as a
/// ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` would, kept current with every change made
/// anywhere in the app, and refetched as a ``AppCache/watch(_:forKey:policy:refresh:retry:fetch:)``
/// refetches: on invalidation, when the app comes back or the network does (if stale), and on a
/// polling interval.
///
/// ```swift
/// let feed = CachedQuery(cache: cache, Post.self, forKey: "top", refresh: .default) { context in
///     try await api.topPosts(ifNoneMatch: context.validators?.etag)
/// }
/// await feed.refresh()                      // what a view's .task or .refreshable calls
/// show(feed.items ?? [])
/// ```
///
/// In a SwiftUI view, keep it in `@State` (`@State private var feed = CachedQuery(...)`), list
/// `feed.items`, show a progress view while `feed.isLoading` and nothing is shown yet, and call
/// `await feed.refresh()` from `.task` and `.refreshable`: the view redraws when any of its
/// properties changes.
///
/// While it lives, the query watches its collection: a write to it elsewhere (another screen's
/// load, ``AppCache/cacheItems(_:forKey:expiresAfter:)``, a user switch, another process) shows
/// in its ``items``, and the refetches its triggers make show as they land. Making it fetches
/// nothing: ``refresh()`` does, as `policy` says. Everything it reads from disk is read off the
/// main actor.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class CachedQuery<Model: CacheableModel> {
    /// The items: cached or fetched, the newest known; `nil` while none are known.
    public private(set) var items: [Model]?
    /// When ``items`` were cached; `nil` while none are known.
    public private(set) var cachedDate: Date?
    /// Whether ``items`` are older than their type's staleness threshold (or invalidated), as of
    /// the last look.
    public private(set) var isStale = false
    /// Whether a ``refresh()`` is under way (any of several started at once).
    public private(set) var isLoading = false
    /// Why the last fetch could not bring items: set while cached items stand in for its
    /// result, or when it had nothing to show; `nil` after a successful one.
    public private(set) var error: (any Error)?

    @ObservationIgnored private let cache: AppCache
    @ObservationIgnored private let key: String?
    @ObservationIgnored private let policy: LoadPolicy
    @ObservationIgnored private let retry: RetryPolicy
    @ObservationIgnored private let fetch: @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    /// Stops the watch that follows the collection; called when the query goes.
    @ObservationIgnored private var following: StopOnRelease?
    /// How many refreshes run now: loading lasts until the last of them ends.
    @ObservationIgnored private var refreshesUnderWay = 0

    /// Makes a query and starts watching its collection; call ``refresh()`` to load.
    ///
    /// - Parameters:
    ///   - cache: the cache to read and store through.
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: when a refresh fetches.
    ///   - refresh: the events that refetch while the query lives, besides invalidations.
    ///   - retry: how a failed fetch is tried again.
    ///   - fetch: brings the current items, given the cached ones (of the user the fetch is
    ///     for) and their validators.
    public init(
        cache: AppCache, _ type: Model.Type, forKey key: String? = nil, policy: LoadPolicy = .staleWhileRevalidate,
        refresh: RefreshTriggers = .default, retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) {
        self.cache = cache
        self.key = key
        self.policy = policy
        self.retry = retry
        self.fetch = fetch
        let (stream, continuation) = StreamPair.nonThrowing(of: Change.self)
        let stop = cache.queries.startWatch(
            Model.self, key: key, policy: policy, fetchesFirst: false, refresh: refresh, retry: retry, fetch: fetch,
            yield: { continuation.yield(.loaded($0)) }, finish: { _ in continuation.finish() })
        let task = Task { [weak self] in
            for await change in stream {
                guard let self else { return }
                if case .loaded(let loaded) = change { self.show(loaded) }
            }
        }
        following = StopOnRelease {
            stop()
            task.cancel()
        }
    }

    /// Makes a query whose fetch takes the stored validators only, refetching on the default
    /// triggers: a convenience that forwards to ``init(cache:_:forKey:policy:refresh:retry:fetch:)``.
    @_disfavoredOverload
    public convenience init(
        cache: AppCache, _ type: Model.Type, forKey key: String? = nil, policy: LoadPolicy = .staleWhileRevalidate,
        retry: RetryPolicy = .default, fetch: @escaping @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) {
        self.init(cache: cache, type, forKey: key, policy: policy, refresh: .default, retry: retry) { context in
            try await fetch(context.validators)
        }
    }

    /// What the watch says.
    private enum Change: Sendable {
        case loaded(LoadedItems<Model>?)
    }

    /// Runs a load with the query's policy, showing each answer as it comes; returns when the
    /// load has finished.
    ///
    /// On failure ``error`` is set: with the cached items still shown when there are any.
    public func refresh() async {
        refreshesUnderWay += 1
        isLoading = true
        defer {
            refreshesUnderWay -= 1
            isLoading = refreshesUnderWay > 0
        }
        do {
            for try await loaded in cache.queries.load(Model.self, forKey: key, policy: policy, retry: retry, fetch: fetch) {
                show(loaded)
            }
        } catch {
            self.error = error
        }
    }

    /// Shows what a load or the watch brought; `nil`: the collection went.
    private func show(_ loaded: LoadedItems<Model>?) {
        guard let loaded else {
            (items, cachedDate) = (nil, nil)
            return
        }
        items = loaded.items
        cachedDate = loaded.cachedDate
        isStale = loaded.isStale
        error = loaded.refreshError
    }
}
#endif
