import Foundation

extension AppCache {
    /// The collection of `Model` under `key` of the current user, now and after every change.
    ///
    /// The stream yields the current items at once (`nil` when none), then the items after every
    /// change to that collection: ``cacheItems(_:forKey:expiresAfter:)`` (and loads, updates and
    /// single-item writes), removals, expiry (when the time to live passes, with no call needed),
    /// wipes, and user switches (then the new user's items, or `nil`). Rapid changes may
    /// coalesce into one value, but a value never follows a newer one. Changes written by
    /// another process or instance sharing the root are yielded as soon as they reach its disk:
    /// the writer wakes this process (a futex on the lock file's shared counter on Linux, a
    /// Darwin notification on Apple platforms), and no timer runs while nothing changes.
    ///
    /// ```swift
    /// for await posts in cache.updates(of: Post.self, forKey: "top") {
    ///     render(posts ?? [])
    /// }
    /// ```
    ///
    /// Reads run on a task of the stream's own, off the caller's executor. Ending the
    /// consuming task ends the stream and frees what it held. The stream does not keep the
    /// cache alive: keep a reference to the cache for as long as you follow it (an app's cache
    /// lives as long as the app); the stream finishes when the cache goes away.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    /// - Returns: a stream of the collection's items, newest last.
    public func updates<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> AsyncStream<[Model]?> {
        queries.updates(Model.self, forKey: key)
    }
}
