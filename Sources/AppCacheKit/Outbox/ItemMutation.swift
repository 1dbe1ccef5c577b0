/// A change to items by id, wherever they are cached: every collection of ``CacheMutation/Model``
/// that holds one of ``itemIDs`` shows it, whatever its key, including collections fetched,
/// paged or first cached after it was queued, until the server accepts or rejects it.
///
/// A like on a post that the home timeline, its author's profile, the bookmarks list and its
/// detail screen all hold is one change, queued and sent once:
///
/// ```swift
/// struct Like: ItemMutation {
///     static let mutationName = "like"
///     var postID: Post.ID
///     var isLiked: Bool
///     var itemIDs: [Post.ID] { [postID] }
///     func apply(to post: inout Post) { post.isLiked = isLiked }
/// }
///
/// try cache.enqueue(Like(postID: post.id, isLiked: true))
/// ```
///
/// A change may also name a collection by ``CacheMutation/key``, which it changes even when
/// that collection does not hold its items yet (a bookmark adds its post to the bookmarks
/// list): ``apply(to:key:)`` runs there too, and tells which collection it is changing.
///
/// ```swift
/// struct Bookmark: ItemMutation {
///     static let mutationName = "bookmark"
///     var post: Post
///     var isBookmarked: Bool
///     var itemIDs: [Post.ID] { [post.id] }
///     var key: String? { "bookmarks" }
///     func apply(to post: inout Post) { post.isBookmarked = isBookmarked }
///     func apply(to items: inout [Post], key: String?) {
///         guard key == "bookmarks" else { return applyToItems(&items) }
///         items.removeAll { $0.id == post.id }
///         if isBookmarked {
///             var saved = post
///             saved.isBookmarked = true
///             items.insert(saved, at: 0)
///         }
///     }
/// }
/// ```
///
/// As for every ``CacheMutation``, write the change to *set* state, not to toggle it: it is
/// applied again to every newly confirmed collection.
///
/// When the server accepts the change, it is folded into every cached collection of the user
/// that holds one of its items (and the one its key names, if cached): what ``AppCache/updateItem(_:id:for:_:)``
/// does.
public protocol ItemMutation: CacheMutation where Model: Identifiable {
    /// The model of the items it changes, told by ``apply(to:)-(Model)``'s parameter (stated
    /// again here so that it is inferred from it).
    associatedtype Model
    /// The ids of the items the change touches.
    var itemIDs: [Model.ID] { get }

    /// The change to one item the collection holds; runs for every item whose id is in
    /// ``itemIDs``, in every collection that shows the change.
    ///
    /// Runs on the thread of the read that shows the items, with no lock of the cache held;
    /// keep it quick and free of side effects other than changing `item`.
    func apply(to item: inout Model)

    /// The change to one collection: `items` is a collection of the user's that holds one of
    /// ``itemIDs``, or the one under ``CacheMutation/key``, and `key` says which.
    ///
    /// The default runs ``apply(to:)-(Model)`` on each item whose id is in ``itemIDs``
    /// (``applyToItems(_:)``); implement it to add or drop items in the collection the key
    /// names.
    func apply(to items: inout [Model], key: String?)
}

extension ItemMutation {
    /// No collection beyond those holding ``itemIDs``.
    ///
    /// `nil` here means *no* collection, not the type's default collection: a change by id
    /// reaches the default collection when it holds one of the items.
    public var key: String? { nil }

    /// Runs ``apply(to:)-(Model)`` on each item of `items` whose id is in ``itemIDs``.
    ///
    /// - Complexity: O(n + k) for n items and k ids.
    public func applyToItems(_ items: inout [Model]) {
        let ids = itemIDs
        if ids.count == 1, let only = ids.first {
            for index in items.indices where items[index].id == only { apply(to: &items[index]) }
        } else {
            let wanted = Set(ids)
            for index in items.indices where wanted.contains(items[index].id) { apply(to: &items[index]) }
        }
    }

    /// ``applyToItems(_:)``.
    public func apply(to items: inout [Model], key: String?) {
        applyToItems(&items)
    }

    /// ``apply(to:key:)`` with the change's own ``CacheMutation/key``.
    public func apply(to items: inout [Model]) {
        apply(to: &items, key: key)
    }
}
