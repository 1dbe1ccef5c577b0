import AppCacheKit
import Foundation

/// A story of the feed: what the server sends, cached as the list shows it.
struct Story: CacheableModel, Identifiable, Hashable {
    var id: Int
    var title: String
    var author: String
    var likes: Int
    var isLiked: Bool

    static var cacheName: String { "Stories" }
    /// Older than five minutes, the feed is refetched when shown (and shown meanwhile).
    static var stalenessThreshold: Duration? { .seconds(300) }
}
