public import Foundation

/// What the cache did for each collection since it opened: hits, misses, fetches, bytes and
/// decode time, per model type and key. ``AppCache/statistics()`` makes one.
///
/// ```swift
/// let statistics = cache.statistics()
/// print("hit rate \(statistics.total.hitRate)")
/// for collection in statistics.collections where collection.counts.misses > 0 {
///     print(collection.cacheName, collection.key ?? "-", collection.counts)
/// }
/// ```
///
/// Thread safety: a value; `Sendable`.
public struct CacheStatistics: Sendable, Equatable {
    /// The counters of one collection, or a sum of them.
    public struct Counts: Sendable, Equatable {
        /// Reads answered from memory.
        public var memoryHits = 0
        /// Reads answered from disk (read and decoded).
        public var diskHits = 0
        /// Reads that found nothing usable.
        public var misses = 0
        /// Fetches begun.
        public var fetches = 0
        /// Conditional fetches answered "not modified".
        public var notModified = 0
        /// Fetches that failed after their last attempt.
        public var fetchFailures = 0
        /// Payload bytes read from disk.
        public var bytesRead = 0
        /// Payload bytes written to disk.
        public var bytesWritten = 0
        /// Collections decoded (each disk hit decodes one).
        public var decodes = 0
        /// The time the decodes took, on the reading threads.
        public var decodeTime: Duration = .zero

        /// Creates zero counts.
        public init() {}

        /// Reads answered from memory or disk, out of all reads; 0 with no read.
        public var hitRate: Double {
            let reads = memoryHits + diskHits + misses
            return reads == 0 ? 0 : Double(memoryHits + diskHits) / Double(reads)
        }

        /// Adds `other`'s counts to these.
        public mutating func add(_ other: Counts) {
            memoryHits += other.memoryHits
            diskHits += other.diskHits
            misses += other.misses
            fetches += other.fetches
            notModified += other.notModified
            fetchFailures += other.fetchFailures
            bytesRead += other.bytesRead
            bytesWritten += other.bytesWritten
            decodes += other.decodes
            decodeTime += other.decodeTime
        }
    }

    /// One collection's counts.
    public struct Collection: Sendable, Equatable {
        /// Its model type's cache name.
        public var cacheName: String
        /// Its key; `nil` for the unkeyed collection.
        public var key: String?
        /// Its user; `nil` for the shared space.
        public var user: String?
        /// What the cache did for it.
        public var counts: Counts
    }

    /// When counting began: when the cache (its store, shared by the instances of one
    /// configuration) opened.
    public var since: Date
    /// Every collection with a count, sorted by cache name, user and key.
    public var collections: [Collection]

    /// The sum of every collection's counts.
    public var total: Counts {
        collections.reduce(into: Counts()) { $0.add($1.counts) }
    }

    /// The sum of the counts of the collections of the model type named `cacheName`.
    ///
    /// - Complexity: O(n) in the collections counted.
    public func counts(forCacheName cacheName: String) -> Counts {
        collections.filter { $0.cacheName == cacheName }.reduce(into: Counts()) { $0.add($1.counts) }
    }

    /// The counts of one collection; zero when it has none.
    public func counts<Model: CacheableModel>(for type: Model.Type, key: String? = nil, user: String?) -> Counts {
        collections.first { $0.cacheName == Model.cacheName && $0.key == key && $0.user == user }?.counts ?? Counts()
    }
}
