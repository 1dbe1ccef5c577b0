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

    /// Reads, changes and caches the collection of `Model` under `key` in one step that no other
    /// write of the collection in this process can interleave with: appending a page, editing
    /// one item.
    ///
    /// `transform` gets the cached items (`[]` when none, expired or unreadable as `Model`) and
    /// changes them in place; the result is cached for the user who was current when the call
    /// began (dropped if that user's data was removed meanwhile).
    ///
    /// A local edit is not a refresh: the collection keeps its cached date (so a stale feed
    /// stays stale, and its next refresh is still due), its validators (so that refresh can
    /// still be answered "not modified"), its pin and its expiry. Only items from outside,
    /// ``cacheItems(_:forKey:expiresAfter:)`` or a fetch, date a collection anew. A collection
    /// that did not exist is dated now.
    ///
    /// ```swift
    /// try cache.updateItems(Post.self, forKey: "top") { posts in
    ///     posts.append(contentsOf: nextPage)
    /// }
    /// ```
    ///
    /// No lock is held while `transform` runs, so it may call any other method of the cache.
    /// If the collection changed while it ran (another thread's write or update, or another
    /// process's or instance's sharing the root), its result is not stored: `transform` runs
    /// again on the new items. The result is written to disk at once, under the lock every
    /// process sharing the root takes, whatever ``Configuration/writeBackDelay`` says: that is
    /// what makes the update atomic across processes (an app and its widget appending to one
    /// collection at the same moment keep both changes). It changes the confirmed items: changes
    /// queued with ``enqueue(_:)`` are not in what `transform` sees, and stay applied on top of
    /// what it makes. Keep it free of side effects
    /// other than changing the items. A nested `updateItems` of the same collection from inside
    /// `transform` throws `nestedUpdate` rather than wait for itself; of another collection, it
    /// works.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - transform: changes the items; runs on the caller's thread, once, or again after a
    ///     concurrent change.
    /// - Returns: the items as cached.
    /// - Throws: what `transform` throws (nothing is cached then); `nestedUpdate` when called
    ///   from inside a `transform` of the same collection, or when other writers kept changing
    ///   the collection through \(maximumUpdateAttempts) attempts; what
    ///   ``getCachedItems(_:forKey:)`` throws; the write errors of a write-through
    ///   ``cacheItems(_:forKey:expiresAfter:)`` (`permissionDenied` on a read-only cache, `busy`,
    ///   `noSpace`, ...), with the collection unchanged.
    @discardableResult
    public func updateItems<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model] {
        // With no session, the user current when the call begins; never dropped but by a wipe
        // that lands between the read and the write.
        try store.update(Model.self, forKey: key, session: nil, transform) ?? []
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
        try store.update(Model.self, forKey: key, session: session, transform)
    }
}
