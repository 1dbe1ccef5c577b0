public import Foundation

/// A cached collection together with how old it is: what a screen needs to show cached items at
/// once and decide whether to refresh them.
///
/// ```swift
/// if let cached = try cache.cachedCollection(MenuItem.self) {
///     show(cached.items)
///     if cached.isStale { refreshInBackground() }
/// }
/// ```
public struct CachedCollection<Model: CacheableModel>: Sendable {
    /// The items, as they were cached.
    public var items: [Model]
    /// When the items were cached.
    public var cachedDate: Date
    /// How long ago that was, by the cache's clock (negative if the clock has gone back since).
    public var age: Duration
    /// Whether the items are older than their type's staleness threshold. Stale items are
    /// still returned; refreshing them is the caller's decision.
    public var isStale: Bool
}
