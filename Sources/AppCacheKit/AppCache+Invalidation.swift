import Foundation

extension AppCache {
    /// Marks the collection of `Model` under `key` stale now, without removing its items: the
    /// next ``load(_:forKey:policy:retry:fetch:)`` fetches, and a watched collection refetches.
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
