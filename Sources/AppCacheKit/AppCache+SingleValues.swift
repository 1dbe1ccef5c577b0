import Foundation

extension AppCache {
    /// Caches one model value under `key`: a profile, an article's detail, anything that is not
    /// a list.
    ///
    /// Stored as a collection of one, so it has the same staleness, expiry, users, versioning
    /// and pinning as any collection: ``isStale(_:forKey:)``, ``cachedDate(of:forKey:)`` and
    /// ``removeItems(_:forKey:)`` work on it as they are.
    ///
    /// ```swift
    /// try cache.cacheItem(profile, forKey: "me")
    /// if let me = try cache.cachedItem(Profile.self, forKey: "me") { show(me) }
    /// ```
    ///
    /// - Parameters:
    ///   - item: the value to cache.
    ///   - key: which value of the type; `nil` for its default one.
    ///   - timeToLive: how long it may be returned at all; `nil` for no limit.
    /// - Throws: what ``cacheItems(_:forKey:expiresAfter:)`` throws.
    public func cacheItem<Model: CacheableModel>(_ item: Model, forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil) throws {
        try cacheItems([item], forKey: key, expiresAfter: timeToLive)
    }

    /// The value ``cacheItem(_:forKey:expiresAfter:)`` cached under `key`; `nil` when there is
    /// none, or when the collection under `key` holds other than exactly one item (it was
    /// cached as a list).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    public func cachedItem<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws -> Model? {
        guard let items = try getCachedItems(Model.self, forKey: key), items.count == 1 else { return nil }
        return items[0]
    }

    /// Reads, changes and caches the collection of `Model` under `key` in one step that other
    /// `updateItems` calls on the same collection cannot interleave with: appending a page,
    /// editing one item.
    ///
    /// `transform` gets the cached items (`[]` when none, expired or unreadable as `Model`) and
    /// changes them in place; the result is cached as ``cacheItems(_:forKey:expiresAfter:)``
    /// would, for the user who was current when the call began (dropped if that user's data
    /// was removed meanwhile). The collection's pin is kept; it has no expiry afterwards.
    ///
    /// ```swift
    /// try cache.updateItems(Post.self, forKey: "top") { posts in
    ///     posts.append(contentsOf: nextPage)
    /// }
    /// ```
    ///
    /// Only `updateItems` calls are serialised (per collection, in this process): a plain
    /// `cacheItems` of the same collection still replaces it whenever it runs.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - transform: changes the items; runs on the caller's thread, once.
    /// - Returns: the items as cached.
    /// - Throws: what `transform` throws (nothing is cached then); what
    ///   ``getCachedItems(_:forKey:)`` and ``cacheItems(_:forKey:expiresAfter:)`` throw.
    @discardableResult
    public func updateItems<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model] {
        let info = typeInfo(Model.self)
        return try updateLocks.withLock(for: UpdateKey(cacheName: info.cacheName, key: key)) {
            // Read and write for one user: a switch during the read means reading again.
            var attempt = 0
            while true {
                attempt += 1
                let (session, switches) = state.withLock { ($0.session, $0.switches) }
                let cached = try readForLoad(Model.self, key: key, switches: switches)
                guard cached != nil || state.withLock({ $0.switches }) == switches || attempt >= 3 else { continue }
                var items = cached?.loaded.items ?? []
                try transform(&items)
                try store(items, forKey: key, expiresAfter: nil, pinned: cached?.isPinned ?? false, validators: nil, session: session)
                return items
            }
        }
    }

    /// What ``updateItems(_:forKey:_:)`` serialises on.
    private struct UpdateKey: Hashable {
        var cacheName: String
        var key: String?
    }
}
