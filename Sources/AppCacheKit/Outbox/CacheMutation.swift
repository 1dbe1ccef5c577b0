import Foundation

/// A change to one cached collection that must also reach the server: a bookmark, a like, a
/// "mark as read" made offline.
///
/// ``AppCache/enqueue(_:)`` applies the change to what readers see at once, stores it durably
/// for the current user, and hands it to the kind's sender (``AppCache/registerSender(for:send:)``)
/// when it can, in order. Until the server accepts it, the change is replayed on top of every
/// confirmed collection (a fetch, a `cacheItems`), so a refresh never undoes it.
///
/// ```swift
/// struct Bookmark: CacheMutation {
///     static let mutationName = "bookmark"
///     var articleID: Int
///     var isBookmarked: Bool
///     var key: String? { "top" }
///     func apply(to items: inout [Article]) {
///         for index in items.indices where items[index].id == articleID {
///             items[index].isBookmarked = isBookmarked
///         }
///     }
/// }
/// ```
///
/// Write ``apply(to:)`` to *set* state, not to toggle or count it: the change is applied again
/// on every new confirmed collection, and one fetched after the server accepted it already
/// holds it. A change whose `apply` sets a value gives the same items either way.
///
/// A queued change is stored encoded as JSON with its ``mutationName``, and decoded by that
/// name after a relaunch: keep the name, and keep the type decoding what earlier versions
/// stored (as for any `Codable` type that is persisted).
public protocol CacheMutation: Codable, Sendable {
    /// The model of the collection the change applies to.
    associatedtype Model: CacheableModel
    /// A stable name for the kind of change, stored with queued changes (decoding them after
    /// a relaunch); must not change between app versions.
    static var mutationName: String { get }
    /// The collection it changes: a key of ``Model``; `nil` for the type's default collection.
    var key: String? { get }
    /// The local change, applied at once and again whenever the collection is replaced.
    ///
    /// Runs on the thread of the read that shows the items, with no lock of the cache held;
    /// keep it quick and free of side effects other than changing `items`.
    func apply(to items: inout [Model])
}

extension CacheMutation {
    /// Applies the change to `items` when they are of its model type (they always are for the
    /// changes the cache picks for a collection).
    func apply<Element>(toItemsOf type: Element.Type, _ items: inout [Element]) {
        guard Element.self == Model.self else { return }
        var typed = unsafeBitCast(items, to: [Model].self)
        items = []
        apply(to: &typed)
        items = unsafeBitCast(typed, to: [Element].self)
    }
}

/// Thrown by a sender when the server refuses a change for good: it is dropped and its local
/// change disappears; any other error is retried.
///
/// ```swift
/// cache.registerSender(for: Bookmark.self) { bookmark, id in
///     let status = try await api.setBookmark(bookmark.articleID, bookmark.isBookmarked, idempotencyKey: id)
///     if status == 404 { throw MutationRejected(reason: "The article no longer exists.") }
/// }
/// ```
public struct MutationRejected: Error, Sendable, CustomStringConvertible {
    /// Why the server refused the change, for logs and ``PendingMutation/lastError``.
    public var reason: String

    /// A refusal for good, with the server's reason.
    public init(reason: String) {
        self.reason = reason
    }

    /// The refusal in a sentence, with its reason (what ``PendingMutation/lastError`` and logs show).
    public var description: String { "The server rejected the change: \(reason)" }
}
