import Foundation

extension AppCache {
    /// A new stream of everything the cache does from now on: reads answered (memory, disk) or
    /// missed, decodes with their time, fetches and how they ended, writes, spills, evictions,
    /// problems, upgrades, invalidations, queued changes' fates, users switched and removed.
    /// See <doc:SeeingInside> for what each ``CacheEvent`` means.
    ///
    /// ```swift
    /// Task {
    ///     for await event in cache.events where event.kind == .miss {
    ///         print("missed \(event.cacheName ?? "-") \(event.key ?? "")")
    ///     }
    /// }
    /// ```
    ///
    /// Each access makes a stream of its own (one reader each); it ends when its task is
    /// cancelled or the stream is dropped. Events name their collection and never carry items.
    /// A reader slower than the cache loses the oldest events beyond the newest 4,096 it has not
    /// taken. The caches of one configuration share a store, and so their events.
    ///
    /// Unobserved, events cost one atomic load on a memory hit (``statistics()`` counts
    /// whether or not anyone observes).
    ///
    /// Thread safety: any thread; events are delivered as they happen, from the thread that
    /// made them, without blocking it.
    public var events: AsyncStream<CacheEvent> {
        services.events.stream()
    }

    /// What the cache did for each collection since its store opened: memory and disk hits,
    /// misses, fetches, "not modified" answers, failed fetches, bytes read and written, decodes
    /// and their time, per model type, key and user.
    ///
    /// ```swift
    /// let statistics = cache.statistics()
    /// print("hit rate \(statistics.total.hitRate), decode time \(statistics.total.decodeTime)")
    /// ```
    ///
    /// - Returns: a snapshot; later work does not change it.
    /// - Complexity: O(n) in the collections counted.
    /// - Thread safety: any thread; takes the store's lock briefly.
    public func statistics() -> CacheStatistics {
        store.statistics()
    }
}
