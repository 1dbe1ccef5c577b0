public import Foundation

extension AppCache {
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
        if let hit = store.memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || store.isLive(hit) {
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
        if let hit = store.memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || store.isLive(hit) {
            items = hit.items.items(as: Model.self)
            cachedDate = hit.cachedDate
        } else {
            guard let loaded = try store.loadAfterMiss(Model.self, key: key) else { return nil }
            (items, cachedDate) = (outbox.applyingPending(loaded.items, of: Model.self, key: key).items, loaded.cachedDate)
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
        store.dating(type, forKey: key)?.isStale ?? true
    }

    /// When the collection of `Model` under `key` was cached; `nil` when there is none (or it
    /// has expired, or was written by a model version `Model` cannot read).
    ///
    /// Reads the date only (from memory, or the archive's header and modification date), never
    /// the items.
    public func cachedDate<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> Date? {
        store.cachedDate(of: type, forKey: key)
    }

    // MARK: - Internal

    /// The items a read shows when memory did not answer at once: the collection
    /// (``CollectionStore/loadAfterMiss(_:key:)``) with its pending changes applied.
    @usableFromInline
    func itemsAfterMiss<Model: CacheableModel>(_ type: Model.Type, key: String?) throws -> [Model]? {
        guard let loaded = try store.loadAfterMiss(Model.self, key: key) else { return nil }
        return outbox.applyingPending(loaded.items, of: Model.self, key: key).items
    }
}
