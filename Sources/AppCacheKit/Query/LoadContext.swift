/// What a watch's fetch starts from: the cached items of the user the fetch is for, and the
/// validators stored with them.
///
/// An incremental refresh (a `since_id` query) merges into `cachedItems`: they are always those
/// of the user the result will be stored for, even if another user signs in while the fetch
/// runs, so a merge never reads another user's items.
///
/// Thread safety: a value.
public struct LoadContext<Model: CacheableModel>: Sendable {
    /// The cached items the fetch starts from; `nil` when nothing is cached.
    public var cachedItems: [Model]?
    /// The HTTP validators stored with them; `nil` when none.
    public var validators: CacheValidators?
    /// The key of the collection the fetch is for; `nil` for the type's default collection.
    /// A fetch registered for a whole type (``AppCache/registerFetch(for:_:)``) tells its
    /// collections apart by it.
    public var key: String?

    /// Makes a context; for tests and previews of fetch closures.
    ///
    /// - Parameters:
    ///   - cachedItems: the cached items the fetch starts from.
    ///   - validators: the validators stored with them.
    ///   - key: the key of the collection the fetch is for.
    public init(cachedItems: [Model]?, validators: CacheValidators?, key: String? = nil) {
        self.cachedItems = cachedItems
        self.validators = validators
        self.key = key
    }
}
