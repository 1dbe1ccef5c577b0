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
/// A queued change is stored encoded as JSON with its ``mutationName`` and ``schemaVersion``,
/// and decoded by that name after a relaunch: keep the name. When an app update changes what
/// the type stores (a model it carries gained a property), bump ``schemaVersion`` and declare
/// an ``upgrades`` entry that reads the older payload, as ``CacheableModel`` does for archives.
///
/// A change to items wherever they are cached (a like on a post that the timeline, the
/// author's profile and the bookmarks list all hold) is an ``ItemMutation``: it names item
/// ids instead of one collection.
public protocol CacheMutation: Codable, Sendable {
    /// The model of the collection the change applies to.
    associatedtype Model: CacheableModel
    /// A stable name for the kind of change, stored with queued changes (decoding them after
    /// a relaunch); must not change between app versions.
    static var mutationName: String { get }
    /// The collection it changes: a key of ``Model``; `nil` for the type's default collection.
    ///
    /// For an ``ItemMutation``, one collection it changes beside those holding its items (the
    /// bookmarks list a bookmark adds its post to); `nil` there means none.
    var key: String? { get }
    /// The local change, applied at once and again whenever the collection is replaced.
    ///
    /// Runs on the thread of the read that shows the items, with no lock of the cache held;
    /// keep it quick and free of side effects other than changing `items`.
    func apply(to items: inout [Model])

    /// The version of the change's stored form, written with every queued change.
    ///
    /// Defaults to its model's ``CacheableModel/schemaVersion``: a change usually carries model
    /// values, and changes with its model. A queued change of another version is read through
    /// the ``upgrades`` entry for that version when there is one, else as the current type.
    static var schemaVersion: Int { get }

    /// How to read changes queued by older versions of this type. Default: none.
    ///
    /// See ``MutationUpgrade``. A queued change that neither decodes as the current type nor
    /// through an upgrade is reported (``AppCacheError/Code/modelMismatch``, and in
    /// ``PendingMutation/lastError``); it stays queued, holding back the later changes of its
    /// kind only, until a version of the app reads it or the app drops it with
    /// ``AppCache/dropPendingMutation(_:)``.
    static var upgrades: [MutationUpgrade<Self>] { get }
}

extension CacheMutation {
    /// Its model's ``CacheableModel/schemaVersion``.
    public static var schemaVersion: Int { Model.schemaVersion }

    /// None.
    public static var upgrades: [MutationUpgrade<Self>] { [] }
}

extension CacheMutation {
    /// Applies the change to `items`, the collection under `key`, when they are of its model
    /// type (they always are for the changes the cache picks for a collection).
    func apply<Element>(toItemsOf type: Element.Type, _ items: inout [Element], key: String?) {
        guard Element.self == Model.self else { return }
        var typed = unsafeBitCast(items, to: [Model].self)
        items = []
        applyAnywhere(to: &typed, key: key)
        items = unsafeBitCast(typed, to: [Element].self)
    }

    /// What the cache runs on a collection the change applies to: ``apply(to:)``, or for a
    /// change by id ``ItemMutation/apply(to:key:)``.
    func applyAnywhere(to items: inout [Model], key: String?) {
        if let byID = self as? any ItemMutation {
            func open<M: ItemMutation>(_ change: M) {
                guard M.Model.self == Model.self else { return }
                var typed = unsafeBitCast(items, to: [M.Model].self)
                items = []
                change.apply(to: &typed, key: key)
                items = unsafeBitCast(typed, to: [Model].self)
            }
            open(byID)
        } else {
            apply(to: &items)
        }
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
