extension AppCache {
    /// Changes one item in every cached collection that holds it: the post liked on its detail
    /// screen shows liked in the timeline, on its author's profile and in the bookmarks list.
    ///
    /// Each collection of `Model` of the user that holds an item with this id changes as
    /// ``updateItems(_:forKey:_:)`` changes one: atomically (across processes too), keeping its
    /// cached date, validators, next-page cursor, pin and expiry, written through; every
    /// ``updates(_:forKey:)``, watch and ``CachedQuery`` of a changed collection yields once.
    /// Collections that do not hold the item are not written.
    ///
    /// ```swift
    /// try cache.updateItem(Post.self, id: post.id) { $0.likeCount += 1 }
    /// ```
    ///
    /// The collections holding the item are found in an index of ids kept in memory (built
    /// from the type's collections on the first write by id, then kept by every write; checked
    /// again, reading only the collections that changed, after another process wrote), never
    /// by decoding every collection of the type. The change is a confirmed one (what the server
    /// says); a change still to reach the server is an ``ItemMutation`` queued with
    /// ``enqueue(_:)``.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: the item's id.
    ///   - session: the user whose collections change, current or not (taken from ``session``
    ///     when the work began); `nil` for the current user. Nothing changes when that user's
    ///     data was removed since.
    ///   - change: changes the item; runs once per collection holding it (again for one that
    ///     changed while it ran), on the caller's thread, with no lock held.
    /// - Returns: how many collections changed.
    /// - Throws: what `change` throws (the collections changed before it stay changed);
    ///   what ``updateItems(_:forKey:_:)`` throws.
    /// - Complexity: one index look-up, then one update per collection holding the item.
    ///
    /// Thread safety: any thread.
    @discardableResult
    public func updateItem<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, id: Model.ID, for session: CacheSession? = nil, _ change: (inout Model) throws -> Void
    ) throws -> Int {
        try store.updateItems(Model.self, ids: [id], alsoKey: nil, session: session) { items, _ in
            for index in items.indices where items[index].id == id { try change(&items[index]) }
        }.count
    }

    /// Replaces the item with `item`'s id by `item` in every cached collection that holds it
    /// (an upsert where present): a post fetched on its detail screen brings every list that
    /// shows it up to date.
    ///
    /// Collections that do not hold the item are left as they are (it is not added anywhere).
    /// Otherwise as ``updateItem(_:id:for:_:)``.
    ///
    /// ```swift
    /// let post = try await api.post(id)
    /// try cache.replaceItem(post)
    /// ```
    ///
    /// - Parameters:
    ///   - item: the item as it is now.
    ///   - session: the user whose collections change; `nil` for the current user.
    /// - Returns: how many collections changed.
    /// - Throws: what ``updateItems(_:forKey:_:)`` throws.
    ///
    /// Thread safety: any thread.
    @discardableResult
    public func replaceItem<Model: CacheableModel & Identifiable>(_ item: Model, for session: CacheSession? = nil) throws -> Int {
        try updateItem(Model.self, id: item.id, for: session) { $0 = item }
    }

    /// Removes the item with this id from every cached collection that holds it: a deleted
    /// post leaves the timeline, its author's profile and the bookmarks list.
    ///
    /// Otherwise as ``updateItem(_:id:for:_:)``.
    ///
    /// ```swift
    /// try cache.removeItem(Post.self, id: post.id)
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: the item's id.
    ///   - session: the user whose collections change; `nil` for the current user.
    /// - Returns: how many collections changed.
    /// - Throws: what ``updateItems(_:forKey:_:)`` throws.
    ///
    /// Thread safety: any thread.
    @discardableResult
    public func removeItem<Model: CacheableModel & Identifiable>(_ type: Model.Type, id: Model.ID, for session: CacheSession? = nil) throws -> Int {
        try store.updateItems(Model.self, ids: [id], alsoKey: nil, session: session) { items, _ in
            items.removeAll { $0.id == id }
        }.count
    }
}
