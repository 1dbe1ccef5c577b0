/// What ``AppCache/refreshInBackground(until:usedWithin:maxConcurrentFetches:)`` did before it
/// returned.
///
/// ```swift
/// let report = await cache.refreshInBackground(until: .now + .seconds(25))
/// print("refreshed \(report.refreshed.count), \(report.skipped.count) left for next time")
/// print(report.finishedInTime ? "done in time" : "cut short")  // what a BGAppRefreshTask completes with
/// ```
///
/// Collections are listed most recently used first, the order the refresh took them in.
///
/// Thread safety: a `Sendable` value.
public struct BackgroundRefreshReport: Sendable {
    /// A collection of the current user: its type's cache name and its key.
    public struct Collection: Sendable, Hashable, CustomStringConvertible {
        /// The cache name of its model type (``CacheableModel/cacheName``).
        public var cacheName: String
        /// Its key; `nil` for the type's default collection.
        public var key: String?

        /// `cacheName/key`, or the cache name alone for the default collection.
        public var description: String { key.map { "\(cacheName)/\($0)" } ?? cacheName }
    }

    /// A collection whose fetch failed, with the error: its cached items are untouched.
    public struct Failure: Sendable {
        /// The collection.
        public var collection: Collection
        /// What the fetch threw, or why what it brought could not be stored.
        public var error: any Error
    }

    /// Collections fetched and stored (fresh now).
    public internal(set) var refreshed: [Collection] = []
    /// Collections the server said were current (`304`): re-dated as cached now.
    public internal(set) var notModified: [Collection] = []
    /// Collections whose fetch failed; tried once, without retries.
    public internal(set) var failed: [Failure] = []
    /// Collections whose fetch was still running when time was up (or the refresh was
    /// cancelled, or the system closed the cache's disk for suspension): cancelled, nothing of
    /// it stored, the cached items untouched.
    public internal(set) var cancelled: [Collection] = []
    /// Collections that qualified but whose fetch did not start: the deadline was near.
    public internal(set) var skipped: [Collection] = []
    /// Queued changes (``AppCache/enqueue(_:)``) the server accepted during the refresh.
    public internal(set) var sentMutations = 0
    /// Queued changes of the current user still waiting when the refresh returned.
    public internal(set) var pendingMutations = 0
    /// Whether every dirty collection was written to disk before the refresh returned.
    public internal(set) var isFlushed = false
    /// How many collections left memory when it was trimmed at the end.
    public internal(set) var trimmedEntries = 0
    /// Whether everything was done in time: every qualifying collection answered (refreshed,
    /// not modified or failed: none cancelled or skipped), the sender of queued changes had
    /// nothing more it could send, and memory was flushed.
    public internal(set) var finishedInTime = false
    /// How long the refresh took, from the call to its return.
    public internal(set) var elapsed: Duration = .zero

    init() {}
}
