public import Foundation

/// One answer of ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)``: items, how old they are and where
/// they came from.
public struct LoadedItems<Model: CacheableModel>: Sendable {
    /// Where a load's items came from.
    public enum Source: Sendable, Hashable {
        /// The memory layer: no disk read, no decoding.
        case memory
        /// An archive on disk, read and decoded off the caller's thread.
        case disk
        /// The fetch, just now; the items were stored as ``AppCache/cacheItems(_:forKey:expiresAfter:)``
        /// would.
        case fetch
        /// The cached items, which the server said are current (`304`); re-dated as cached now.
        case notModified
    }

    /// The items.
    public var items: [Model]
    /// When the items were cached (for fetched items, now).
    public var cachedDate: Date
    /// Whether the items are older than their type's staleness threshold.
    public var isStale: Bool
    /// Where the items came from.
    public var source: Source
    /// The error of a fetch that failed, when cached items stand in for its result; `nil`
    /// otherwise.
    public var refreshError: (any Error)?
    /// Whether mutations still waiting for the server (``AppCache/enqueue(_:)``) are applied to
    /// ``items``: the items are the last confirmed ones with those mutations on top.
    public var hasPendingMutations: Bool

    /// Whether pending mutations are applied: ``hasPendingMutations``, by its earlier name.
    @available(*, deprecated, renamed: "hasPendingMutations")
    public var hasPendingChanges: Bool {
        get { hasPendingMutations }
        set { hasPendingMutations = newValue }
    }

    /// Makes an answer; for tests and previews of code that consumes loads.
    public init(
        items: [Model], cachedDate: Date, isStale: Bool, source: Source, refreshError: (any Error)? = nil, hasPendingMutations: Bool = false
    ) {
        self.items = items
        self.cachedDate = cachedDate
        self.isStale = isStale
        self.source = source
        self.refreshError = refreshError
        self.hasPendingMutations = hasPendingMutations
    }

    /// Makes an answer, by the earlier name of its last argument.
    @available(*, deprecated, renamed: "init(items:cachedDate:isStale:source:refreshError:hasPendingMutations:)")
    public init(
        items: [Model], cachedDate: Date, isStale: Bool, source: Source, refreshError: (any Error)? = nil, hasPendingChanges: Bool
    ) {
        self.init(
            items: items, cachedDate: cachedDate, isStale: isStale, source: source, refreshError: refreshError,
            hasPendingMutations: hasPendingChanges)
    }
}
