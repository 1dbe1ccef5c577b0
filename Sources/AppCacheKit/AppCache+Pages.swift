import Foundation

extension AppCache {
    /// Appends the page after the stored cursor to the collection of `Model` under `key`, and
    /// returns the whole collection.
    ///
    /// The first page comes from a fetch that answers ``FetchResult/page(_:next:validators:)``
    /// (through ``load(_:forKey:policy:retry:fetch:)`` or ``watch(_:forKey:policy:refresh:retry:fetch:)``):
    /// it replaces the collection and stores the cursor of the page after it, with the
    /// validators, in the archive (a relaunch goes on from there). Each call fetches the page at
    /// the stored cursor, appends its items (an item whose `id` is already present is replaced
    /// in place, not repeated), keeps the first `maxCount` items, and stores the new cursor. The
    /// collection keeps its cached date: staleness is the first page's. A refresh of the first
    /// page drops the later pages and stores its own cursor; a page fetched from a cursor that a
    /// refresh replaced meanwhile is dropped, and the collection is returned as the refresh left
    /// it. Two calls at once fetch once. Like every write it is bound to the user who started
    /// it: if another user signs in before the page arrives, the page is dropped (as
    /// ``updateItems(_:forKey:for:_:)`` drops an update), never appended to anyone else's
    /// collection, and the call throws `notCached`.
    ///
    /// ```swift
    /// func showMore() async throws {
    ///     guard cache.hasNextPage(Post.self, forKey: "timeline") else { return }
    ///     let all = try await cache.loadNextPage(Post.self, forKey: "timeline", maxCount: 800) { cursor in
    ///         let posts = try await api.timeline(maxID: cursor)
    ///         return Page(items: posts, next: posts.last.map { String($0.id) })
    ///     }
    ///     show(all.items)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type; its `id` says which items are the same.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - maxCount: the most items the collection keeps (the first ones); `nil` for no limit.
    ///   - retry: how a failed page fetch is tried again.
    ///   - fetch: brings the page at a cursor.
    /// - Returns: the whole collection after the page, source ``LoadedItems/Source/fetch``.
    /// - Throws: ``AppCacheError/Code/noNextPage`` when no cursor is stored (no first page yet,
    ///   or the last page reached), without fetching; what `fetch` throws, after the retries;
    ///   the write errors of ``updateItems(_:forKey:_:)``.
    public func loadNextPage<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, forKey key: String? = nil, maxCount: Int? = nil,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>
    ) async throws -> LoadedItems<Model> {
        try await queries.loadNextPage(Model.self, forKey: key, maxCount: maxCount, retry: retry, fetch: fetch)
    }

    /// Whether the collection of `Model` under `key` of the current user has a next page to
    /// load (a cursor stored by its last page); `false` when it has none, or is not cached.
    ///
    /// Reads the collection's record (memory, or the archive) on the caller's thread.
    public func hasNextPage<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Bool {
        queries.hasNextPage(Model.self, forKey: key)
    }
}
