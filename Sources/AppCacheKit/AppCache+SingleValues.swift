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
        // With no session, the user current when the call begins; never dropped but by a wipe
        // that lands between the read and the write.
        try update(Model.self, forKey: key, session: nil, transform) ?? []
    }

    /// Reads, changes and caches the collection of `Model` under `key` of `session`'s user, as
    /// ``updateItems(_:forKey:_:)`` does, or does nothing when that user is no longer current
    /// or their data was removed since the session was taken.
    ///
    /// For work that began for a user and ends later: a page fetched for alice is appended to
    /// alice's feed, never to bob's after a login, and not at all after a logout.
    ///
    /// ```swift
    /// let session = cache.session
    /// let page = try await api.posts()
    /// try cache.updateItems(Post.self, forKey: "top", for: session) { $0.append(contentsOf: page) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - session: the user the update belongs to, taken from ``session`` when the work began.
    ///   - transform: changes the items; not called when the update is dropped.
    /// - Returns: the items as cached; `nil` when the update was dropped.
    /// - Throws: what ``updateItems(_:forKey:_:)`` throws.
    @discardableResult
    public func updateItems<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil, for session: CacheSession, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model]? {
        try update(Model.self, forKey: key, session: session, transform)
    }

    /// The read-modify-write of both `updateItems`, serialised per collection.
    private func update<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, session given: CacheSession?, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model]? {
        let info = typeInfo(Model.self)
        return try updateLocks.withLock(for: UpdateKey(cacheName: info.cacheName, key: key)) {
            // Read and write for one user: a switch during the read means reading again (or,
            // for a given session, dropping the update).
            var attempt = 0
            while true {
                attempt += 1
                let (current, switches) = state.withLock { ($0.session, $0.switches) }
                if let given, given != current { return nil }
                let cached = try readForLoad(Model.self, key: key, switches: switches)
                if cached == nil, state.withLock({ $0.switches }) != switches {
                    if given != nil || attempt >= 3 { return nil }
                    continue
                }
                var items = cached?.loaded.items ?? []
                try transform(&items)
                let stored = try store(
                    items, forKey: key, expiresAfter: nil, pinned: cached?.isPinned ?? false, validators: nil, session: current)
                return stored == nil ? nil : items
            }
        }
    }

    /// What ``updateItems(_:forKey:_:)`` serialises on.
    private struct UpdateKey: Hashable {
        var cacheName: String
        var key: String?
    }
}
