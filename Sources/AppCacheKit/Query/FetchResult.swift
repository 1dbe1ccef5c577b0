/// What a load's `fetch` closure answers: new items, a first page, or the server's word that the
/// cached ones are current.
///
/// ```swift
/// let fetch: @Sendable (LoadContext<Post>) async throws -> FetchResult<Post> = { context in
///     let response = try await api.feed(ifNoneMatch: context.validators?.etag)
///     return response.status == 304
///         ? .notModified
///         : .items(response.posts, validators: CacheValidators(etag: response.etag))
/// }
/// for try await loaded in cache.load(Post.self, forKey: "top", fetch: fetch) { show(loaded.items) }
/// ```
///
/// A struct with static constructors, not an enum: answers may be added (as `page` was) without
/// breaking code, since an app makes these values and never has to switch over them.
///
/// Thread safety: a `Sendable` value.
public struct FetchResult<Model: CacheableModel>: Sendable {
    /// What the answer says, for the cache.
    enum Answer: Sendable {
        case items([Model], validators: CacheValidators?)
        case notModified
        case page([Model], next: String?, validators: CacheValidators?)
    }

    let answer: Answer

    /// New items, with the validators the server sent for them (stored with the collection and
    /// passed to the next fetch); `nil` when it sent none.
    public static func items(_ items: [Model], validators: CacheValidators? = nil) -> FetchResult {
        FetchResult(answer: .items(items, validators: validators))
    }

    /// The server said `304 Not Modified`: what is cached is current. The cached collection is
    /// re-dated as cached now, without rewriting its items.
    public static var notModified: FetchResult {
        FetchResult(answer: .notModified)
    }

    /// The first page of a paged collection, with the cursor of the page after it (`nil`: the
    /// end) and the validators the server sent: it replaces the collection (later pages go),
    /// and ``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)`` appends from the cursor,
    /// stored with the collection across relaunches.
    public static func page(_ items: [Model], next: String?, validators: CacheValidators? = nil) -> FetchResult {
        FetchResult(answer: .page(items, next: next, validators: validators))
    }
}
