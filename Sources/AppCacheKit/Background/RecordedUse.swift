import Foundation

/// When a collection of a type with a registered fetch was last used, kept in the cache itself
/// (a small collection of each user's, under a cache name of the library's own) so that a
/// process the system launches in the background knows what the app used before.
///
/// Left out of ``AppCache/entries()-15aed``; removed with the user's data like any collection.
struct RecordedUse: CacheableModel, Hashable {
    static let cacheName = "AppCache.RecentUses"
    /// Never stale: it has no fetch.
    static let stalenessThreshold: Duration? = .seconds(100 * 365 * 86_400)

    /// The cache name of the used collection's type.
    var cacheName: String
    /// Its key; `nil` for the type's default collection.
    var key: String?
    /// When it was last used (the configuration's clock).
    var date: Date
}
