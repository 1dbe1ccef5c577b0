public import Foundation

/// Something the cache did: a read answered, a fetch, a write, an eviction, a queued change's
/// fate. What ``AppCache/events`` delivers, to see whether and how the cache helps.
///
/// An event names the collection it is about (its model type's cache name, its key and its
/// user) where there is one, and never carries the items.
///
/// Thread safety: a value; `Sendable`.
public struct CacheEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// A read answered from memory.
        case memoryHit
        /// A read answered from disk: the archive's payload bytes were read and decoded.
        case diskHit(bytes: Int)
        /// A read found nothing cached (or only something it could not use).
        case miss
        /// A collection's payload was decoded, taking `duration` (on the reading thread).
        case decoded(duration: Duration)
        /// A fetch of the collection began.
        case fetchStarted
        /// A fetch delivered `itemCount` items (all of them, or one page's).
        case fetchFinished(itemCount: Int)
        /// A conditional fetch answered "not modified": the cached items stay, dated now.
        case fetchNotModified
        /// A fetch failed with `message` (after its last attempt).
        case fetchFailed(message: String)
        /// A failed fetch will be tried again after `delay` (attempt `attempt` failed).
        case fetchRetried(attempt: Int, delay: Duration)
        /// A collection was written to disk, `bytes` of payload.
        case written(bytes: Int)
        /// The memory layer wrote a collection out to make room, keeping it on disk only.
        case spilled(bytes: Int)
        /// A collection left: the memory layer dropped it (`.memoryLimit`), the disk budget
        /// removed it (`.diskBudget`), or its expiry passed (`.expired`).
        case evicted(EvictionReason)
        /// A damaged, foreign or undecodable archive was found (and treated as a miss), or
        /// another problem recovered from; `code` says which.
        case problemFound(AppCacheError.Code)
        /// An archive of an older model schema version was upgraded (``ModelUpgrade``).
        case upgraded(fromSchemaVersion: String)
        /// The collection (or, without a cache name, everything) was invalidated.
        case invalidated
        /// A change was queued for the server (``AppCache/enqueue(_:)``).
        case mutationEnqueued(name: String, id: UUID)
        /// A queued change is being sent.
        case mutationSent(name: String, id: UUID)
        /// The server accepted a queued change; it left the queue.
        case mutationAccepted(name: String, id: UUID)
        /// A queued change was given up: the sender rejected it, or it was dropped.
        case mutationRejected(name: String, id: UUID, message: String)
        /// The cache switched to this event's user.
        case userSwitched
        /// This event's user's data was removed.
        case userRemoved
    }

    /// Why a collection left memory or disk.
    public enum EvictionReason: Sendable, Equatable {
        /// The memory layer was over ``AppCache/Configuration/memoryByteLimit`` or
        /// ``AppCache/Configuration/memoryEntryLimit``, or the app received a memory warning.
        case memoryLimit
        /// The disk was over ``AppCache/Configuration/diskByteLimit``.
        case diskBudget
        /// The collection's expiry passed.
        case expired
    }

    /// What happened.
    public let kind: Kind
    /// The cache name of the collection's model type; `nil` for an event about no collection.
    public let cacheName: String?
    /// The collection's key; `nil` for the unkeyed collection, or no collection.
    public let key: String?
    /// The user the collection belongs to; `nil` for the shared space.
    public let user: String?
    /// When it happened, by the cache's clock (``AppCache/Configuration/clock``).
    public let date: Date

    /// Creates an event.
    public init(_ kind: Kind, cacheName: String? = nil, key: String? = nil, user: String? = nil, date: Date) {
        self.kind = kind
        self.cacheName = cacheName
        self.key = key
        self.user = user
        self.date = date
    }

    /// One line: the kind, then the collection.
    public var description: String {
        var text = "\(kind)"
        if let cacheName { text += " \(cacheName)" + (key.map { "[\($0)]" } ?? "") }
        if let user { text += " user \(user)" }
        return text
    }
}
