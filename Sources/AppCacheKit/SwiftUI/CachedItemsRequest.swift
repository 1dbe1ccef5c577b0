import Foundation

/// What a ``CachedItemsState`` follows: the cache, the collection and how to fetch it, as a
/// `CachedItems` declaration states it (made anew each time SwiftUI re-creates the view).
///
/// Two requests name the same collection when they have the same cache and key
/// (``collection``); the rest (the fetch closures, the policies) may change from one view
/// value to the next without restarting the watch: the watch always calls the newest fetch.
struct CachedItemsRequest<Model: CacheableModel>: Sendable {
    /// The cache to read and store through.
    var cache: AppCache
    /// Which collection of the type; `nil` for its default collection.
    var key: String?
    /// Whether the watch's first look fetches, as for ``AppCache/watch(_:forKey:policy:refresh:retry:fetch:)``.
    var policy: LoadPolicy = .staleWhileRevalidate
    /// The events that refetch while the state lives, besides invalidations.
    var refresh: RefreshTriggers = .default
    /// How a failed fetch is tried again.
    var retry: RetryPolicy = .default
    /// Brings the current items, given the cached ones and their validators.
    var fetch: @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    /// Appends the next page (``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)``) to the
    /// collection under a key; `nil` when the declaration has no page fetch.
    var nextPage: (@Sendable (AppCache, String?) async throws -> LoadedItems<Model>)?

    /// What identifies the collection: a change of it re-keys the state.
    var collection: Collection {
        Collection(cache: ObjectIdentifier(cache), key: key)
    }

    /// A cache instance and a key.
    struct Collection: Hashable, Sendable {
        var cache: ObjectIdentifier
        var key: String?
    }
}

extension CachedItemsRequest where Model: Identifiable {
    /// The page loader of a paged declaration: ``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)``
    /// with its page fetch.
    static func pager(
        maxCount: Int?, retry: RetryPolicy, nextPage: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>
    ) -> @Sendable (AppCache, String?) async throws -> LoadedItems<Model> {
        { cache, key in
            try await cache.loadNextPage(Model.self, forKey: key, maxCount: maxCount, retry: retry, fetch: nextPage)
        }
    }
}
