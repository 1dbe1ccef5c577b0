#if canImport(Observation)
public import Foundation
public import Observation

/// A collection for a SwiftUI view: the cached items at once, refreshed as a
/// ``AppCache/load(_:forKey:policy:fetch:)`` would, and kept current with every change made
/// anywhere in the app.
///
/// ```swift
/// let feed = CachedQuery(cache: cache, Post.self, forKey: "top") { validators in
///     try await api.topPosts(ifNoneMatch: validators?.etag)
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
/// While it lives, the query follows ``AppCache/updates(of:forKey:)``: a write to its collection
/// elsewhere (another screen's load, ``AppCache/cacheItems(_:forKey:expiresAfter:)``, a user
/// switch, another process) shows in its ``items``. Everything it reads from disk is read off
/// the main actor.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class CachedQuery<Model: CacheableModel> {
    /// The items: cached or fetched, the newest known; `nil` while none are known.
    public private(set) var items: [Model]?
    /// When ``items`` were cached; `nil` while none are known.
    public private(set) var cachedDate: Date?
    /// Whether ``items`` are older than their type's staleness threshold, as of the last load.
    public private(set) var isStale = false
    /// Whether a ``refresh()`` is under way (any of several started at once).
    public private(set) var isLoading = false
    /// Why the last ``refresh()`` could not fetch: set while cached items stand in for its
    /// result, or when it had nothing to show; `nil` after a successful one.
    public private(set) var error: (any Error)?

    @ObservationIgnored private let cache: AppCache
    @ObservationIgnored private let key: String?
    @ObservationIgnored private let policy: LoadPolicy
    @ObservationIgnored private let fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    /// The task following the collection's updates; cancelled when the query goes.
    @ObservationIgnored private var following: CancelledOnDeinit?
    /// How many refreshes run now: loading lasts until the last of them ends.
    @ObservationIgnored private var refreshesUnderWay = 0

    /// Makes a query and starts following its collection's changes; call ``refresh()`` to load.
    ///
    /// - Parameters:
    ///   - cache: the cache to read and store through.
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - policy: when a refresh fetches.
    ///   - fetch: brings the current items, as for ``AppCache/load(_:forKey:policy:fetch:)``.
    public init(
        cache: AppCache, _ type: Model.Type, forKey key: String? = nil, policy: LoadPolicy = .staleWhileRevalidate,
        fetch: @escaping @Sendable (CacheValidators?) async throws -> FetchResult<Model>
    ) {
        self.cache = cache
        self.key = key
        self.policy = policy
        self.fetch = fetch
        let updates = cache.updates(of: Model.self, forKey: key)
        following = CancelledOnDeinit(Task { [weak self] in
            for await items in updates {
                guard let self else { return }
                await self.show(items)
            }
        })
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
            for try await loaded in cache.load(Model.self, forKey: key, policy: policy, fetch: fetch) {
                items = loaded.items
                cachedDate = loaded.cachedDate
                isStale = loaded.isStale
                error = loaded.refreshError
            }
        } catch {
            self.error = error
        }
    }

    /// Shows items another writer cached, with their date, read off the main actor.
    private func show(_ newItems: [Model]?) async {
        guard let newItems else {
            (items, cachedDate) = (nil, nil)
            return
        }
        let cache = cache
        let key = key
        let dated = await LibraryThreads.run { cache.dating(Model.self, forKey: key) }
        items = newItems
        if let dated {
            cachedDate = dated.cachedDate
            isStale = dated.isStale
        }
    }
}
/// Holds a task and cancels it when released: what ends a query's following of updates.
private final class CancelledOnDeinit: Sendable {
    let task: Task<Void, Never>

    init(_ task: Task<Void, Never>) {
        self.task = task
    }

    deinit {
        task.cancel()
    }
}
#endif
