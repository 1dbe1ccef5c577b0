import Foundation

/// The one staleness rule, for reads, loads, watches and listings alike: items are stale when
/// they are older than their type's threshold (or dated further in the future than it: the
/// clock was moved back), or when an invalidation came at or after the moment they were cached.
enum Staleness {
    /// Whether items cached at `date` are stale at `now`.
    ///
    /// - Parameters:
    ///   - threshold: the staleness threshold of the items' type.
    ///   - latestInvalidation: the latest invalidation covering the items, in milliseconds
    ///     since 1970 (``InvalidationLog``); `nil` when none was recorded.
    static func isStale(cachedAt date: Date, now: Date, threshold: Duration, latestInvalidation: Int64?) -> Bool {
        Duration.age(of: date, now: now).isStale(threshold: threshold) || invalidates(latestInvalidation, cachedAt: date)
    }

    /// Whether an invalidation recorded at `latest` (milliseconds since 1970; `nil`: none) covers
    /// items cached at `date`: it came at or after the moment they were cached.
    static func invalidates(_ latest: Int64?, cachedAt date: Date) -> Bool {
        latest.map { Milliseconds.moment(date) <= $0 } ?? false
    }
}
