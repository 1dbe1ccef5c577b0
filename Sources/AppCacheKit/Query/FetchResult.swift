/// What a load's `fetch` closure answers: new items, or the server's word that the cached ones
/// are current.
///
/// ```swift
/// let fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Post> = { validators in
///     let response = try await api.feed(ifNoneMatch: validators?.etag)
///     return response.status == 304
///         ? .notModified
///         : .items(response.posts, validators: CacheValidators(etag: response.etag))
/// }
/// for try await loaded in cache.load(Post.self, forKey: "top", fetch: fetch) { show(loaded.items) }
/// ```
public enum FetchResult<Model: CacheableModel>: Sendable {
    /// New items, with the validators the server sent for them (stored with the collection and
    /// passed to the next fetch); `nil` when it sent none.
    case items([Model], validators: CacheValidators? = nil)
    /// The server said `304 Not Modified`: what is cached is current. The cached collection is
    /// re-dated as cached now, without rewriting its items.
    case notModified
    /// The first page of a paged collection, with the cursor of the page after it (`nil`: the
    /// end) and the validators the server sent: it replaces the collection (later pages go),
    /// and ``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)`` appends from the cursor,
    /// stored with the collection across relaunches.
    case page([Model], next: String?, validators: CacheValidators? = nil)
}
