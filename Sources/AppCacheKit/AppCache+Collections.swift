public import Foundation

extension AppCache {
    /// Caches `items` as the collection of `Model` under `key`, replacing what was there.
    ///
    /// The items are encoded once and kept in memory with the moment of the call, which
    /// becomes the collection's cached date and, once written, its archive's modification
    /// date. When this pushes memory over a limit, the least recently used collections leave
    /// it; dirty ones are written to disk on the cache's write-back thread (this call does not
    /// wait for the disk) and answer reads until they are. With a `writeBackDelay` of `.zero`
    /// the items are written through, on this thread.
    ///
    /// - Parameters:
    ///   - items: the collection to cache; an empty one is cached as empty, not removed.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all, from now; `nil` (the default)
    ///     for no limit. Unlike staleness this is a hard limit: once it has passed, reads miss
    ///     and the collection is removed where it is found, unless it is pinned. It is stored
    ///     in the archive header, not in a file date.
    /// - Throws: `encodingFailed` when the items cannot be encoded (their `encode(to:)` throws,
    ///   or they nest more than 512 levels deep, deeper than a read takes back); `invalidKey`
    ///   for a key longer than 64 KiB. With a `writeBackDelay` of `.zero`, also `permissionDenied`,
    ///   `noSpace`, `notADirectory` or `ioFailure` when the archive cannot be written. In every
    ///   case what was cached before stays as it was. (With write-back, a failed write is
    ///   reported to `diagnostics` and retried by the next flush; the items stay in memory.)
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil
    ) throws {
        try store.save(items, forKey: key, expiresAfter: timeToLive, pinned: false, validators: nil, session: nil)
    }

    /// Caches `items` as the collection of `Model` under `key`, pinned or not, in one write.
    ///
    /// The same as ``cacheItems(_:forKey:expiresAfter:)`` followed by ``pin(_:forKey:)``, without
    /// writing the archive twice: a pinned collection ignores its time to live and is the last
    /// to leave a full disk.
    ///
    /// - Parameters:
    ///   - items: the collection to cache.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all once unpinned; `nil` for no limit.
    ///   - pinned: whether the collection is pinned.
    /// - Throws: what ``cacheItems(_:forKey:expiresAfter:)`` throws.
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil, pinned: Bool
    ) throws {
        try store.save(items, forKey: key, expiresAfter: timeToLive, pinned: pinned, validators: nil, session: nil)
    }

    /// Caches `items` for the user of `session`, or drops them if that user's data was removed
    /// since the session was taken: the write of a model layer that started work for a user.
    ///
    /// A refresh that began for alice lands in alice's space even if bob signed in meanwhile,
    /// and nowhere if alice signed out with ``signOut(removingData:)``, was removed with
    /// ``removeUser(_:)`` or ``removeAllUsers()``, or had ``removeAll(includingPinned:)`` called
    /// with pinned ones (its default):
    /// a logout never comes back as cached data. For the current user the write is the same as
    /// ``cacheItems(_:forKey:expiresAfter:pinned:)``; for another user the archive is written to
    /// that user's directory at once, without entering memory.
    ///
    /// ```swift
    /// let session = cache.session               // before the work starts
    /// let posts = try await api.posts()
    /// try cache.cacheItems(posts, forKey: "top", for: session)
    /// ```
    ///
    /// - Parameters:
    ///   - items: the collection to cache.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all; `nil` for no limit.
    ///   - pinned: whether the collection is pinned.
    ///   - session: the user the write belongs to, taken from ``session`` when the work began.
    /// - Returns: `true` when the items were cached, `false` when they were dropped.
    /// - Throws: what ``cacheItems(_:forKey:expiresAfter:)`` throws.
    @discardableResult
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil, pinned: Bool = false,
        for session: CacheSession
    ) throws -> Bool {
        try store.save(items, forKey: key, expiresAfter: timeToLive, pinned: pinned, validators: nil, session: session) != nil
    }

    /// Caches one model value under `key`: a profile, an article's detail, anything that is not
    /// a list.
    ///
    /// Stored as a collection of one, so it has the same staleness, expiry, users, versioning
    /// and pinning as any collection: ``isStale(_:forKey:)``, ``cachedDate(_:forKey:)`` and
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
    ///   from inside a `transform` of the same collection; `updateContention` when other writers
    ///   kept changing the collection through 1,000 attempts; what
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

    /// The cached collection of `Model` under `key`, or `nil` when there is none.
    ///
    /// Stale items are returned too; ask ``isStale(_:forKey:)`` or use
    /// ``cachedCollection(_:forKey:)`` to get both in one read. From memory this costs a
    /// dictionary lookup; from disk, a read and a decode on the caller's thread, after which the
    /// collection is in memory too. When another process (or instance) sharing the root has
    /// written the collection since, the read returns what it wrote.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    ///   A missing, damaged or outdated archive is not an error but a miss.
    @inlinable
    public func getCachedItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws -> [Model]? {
        // The hit path is inlined into the caller and specialised for `Model`: a lock, a hash
        // lookup and an unchecked cast, with no generic metadata lookups.
        if let hit = store.shownHit(ObjectIdentifier(Model.self), key), !hit.expires || store.isLive(hit) {
            return hit.items.items(as: Model.self)
        }
        return try itemsAfterMiss(Model.self, key: key)
    }

    /// The cached collection of `Model` under `key` with its cached date, age and staleness,
    /// all from one read; `nil` when there is none.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    public func cachedCollection<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil
    ) throws -> CachedCollection<Model>? {
        let items: [Model]
        let cachedDate: Date
        if let hit = store.shownHit(ObjectIdentifier(Model.self), key), !hit.expires || store.isLive(hit) {
            items = hit.items.items(as: Model.self)
            cachedDate = hit.cachedDate
        } else {
            guard let read = try readAfterMiss(Model.self, key: key) else { return nil }
            (items, cachedDate) = (read.items, read.found.cachedDate)
        }
        let age = Duration.age(of: cachedDate, now: configuration.now())
        return CachedCollection(items: items, cachedDate: cachedDate, age: age, isStale: store.isStale(Model.self, key: key, cachedAt: cachedDate))
    }

    /// Whether the collection of `Model` under `key` is missing or older than the type's
    /// staleness threshold.
    ///
    /// A collection dated further in the future than the threshold (the clock was moved back)
    /// counts as stale too. Reads the cached date only (from memory, or the archive's
    /// modification date), never the items.
    public func isStale<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Bool {
        store.datedStaleness(type, forKey: key)?.isStale ?? true
    }

    /// When the collection of `Model` under `key` was cached; `nil` when there is none (or it
    /// has expired, or was written by a model version `Model` cannot read).
    ///
    /// Reads the date only (from memory, or the archive's header and modification date), never
    /// the items.
    public func cachedDate<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Date? {
        store.cachedDate(of: type, forKey: key)
    }

    /// When the collection of `Model` under `key` was cached: ``cachedDate(_:forKey:)``, by its
    /// earlier spelling.
    @available(*, deprecated, renamed: "cachedDate(_:forKey:)")
    public func cachedDate<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> Date? {
        cachedDate(type, forKey: key)
    }

    // MARK: - Internal

    /// The items a read shows when memory did not answer at once: the collection
    /// (``CollectionStore/loadAfterMiss(_:key:)``) with its pending changes applied.
    @usableFromInline
    func itemsAfterMiss<Model: CacheableModel>(_ type: Model.Type, key: String?) throws -> [Model]? {
        try outbox.readingWithPending(Model.self, key: key) { try store.loadAfterMiss(Model.self, key: key)?.items }?.items
    }

    /// The collection and the items a read shows when memory did not answer at once
    /// (``itemsAfterMiss(_:key:)``).
    private func readAfterMiss<Model: CacheableModel>(
        _ type: Model.Type, key: String?
    ) throws -> (found: CollectionStore.StoredCollection<Model>, items: [Model], applied: [UUID])? {
        var found: CollectionStore.StoredCollection<Model>?
        let shown = try outbox.readingWithPending(Model.self, key: key) { () throws -> [Model]? in
            found = try store.loadAfterMiss(Model.self, key: key)
            return found?.items
        }
        guard let shown, let found else { return nil }
        return (found, shown.items, shown.applied)
    }
}
