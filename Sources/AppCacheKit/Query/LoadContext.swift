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

    /// Makes a context; for tests and previews of fetch closures.
    public init(cachedItems: [Model]?, validators: CacheValidators?) {
        self.cachedItems = cachedItems
        self.validators = validators
    }
}
