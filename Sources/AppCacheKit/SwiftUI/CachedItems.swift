// SwiftUI 5 and later: the SDKs of Xcode 15 and later (iOS 17, macOS 14), the only SwiftUI a
// Swift 6 compiler reads (the iOS 16.5 SDK's interface, built by Swift 5.8, is refused by Swift
// 6); apps still deploy to iOS 16. Scripts/typecheck-swiftui-standin type-checks this file for
// iOS against the SDK's declarations of what it uses.
#if canImport(SwiftUI, _version: 5.0)
public import SwiftUI

/// A collection of the cache for a SwiftUI view (iOS 16 and later): declared on the view,
/// shown at once, kept current, and fetched as ``AppCache/watch(_:forKey:policy:refresh:retry:fetch:)``
/// fetches, with no `.task` to write.
///
/// ```swift
/// import SwiftUI
///
/// struct FeedView: View {
///     @CachedItems(Post.self, forKey: "top", in: cache, fetch: { context in
///         try await api.topPosts(ifNoneMatch: context.validators?.etag)
///     })
///     var posts
///
///     var body: some View {
///         List(posts) { Text($0.title) }
///             .refreshable { await $posts.refresh() }
///             .overlay { if $posts.isLoading && posts.isEmpty { ProgressView() } }
///     }
/// }
/// ```
///
/// The fetch is the closure `load` and `watch` take: it gets a ``LoadContext`` (the cached items
/// and their validators) and answers a ``FetchResult``. Swift takes no trailing closure in an
/// attribute: pass it as `fetch:`, or make the property in the view's `init` when the fetch
/// needs the view's own values (`_posts = CachedItems(Post.self, forKey: key, in: cache) { ... }`).
///
/// - What it shows: a collection memory holds shows in the first body; one that must be read
///   from disk is read on the library's own threads, never on the main thread, and shows when
///   it arrives (empty meanwhile, with `$posts.isLoading`).
/// - When it fetches: its watch starts in the first update SwiftUI makes before the body, and
///   fetches as `policy` says (by default when nothing is cached or the items are stale), then
///   on invalidation, when the app comes back or the network does (if stale), and on the
///   `refresh` polling interval. It stops when the view leaves the hierarchy.
/// - What survives: its state lives in a `StateObject`, so SwiftUI re-creating the view value
///   (which it does at every parent update) starts no second watch and fetches nothing. A new
///   `key` re-keys it: the old items stay shown until the new key's arrive.
/// - What it changes: each change is applied inside `withAnimation(animation)` when an
///   animation is given.
///
/// The projected value (`$posts`) is the ``CachedItemsState``: `isLoading`, `refreshError`,
/// `hasPendingMutations`, `refresh()` for `.refreshable`, `loadNextPage()` for the declaration
/// with a page fetch.
///
/// Thread safety: main actor; SwiftUI reads and updates it there. It is made anywhere (its
/// initialisers are nonisolated, as a view's are before iOS 18).
@MainActor @propertyWrapper
public struct CachedItems<Model: CacheableModel>: @preconcurrency DynamicProperty {
    /// What lives as long as the view: the items and the watch.
    @StateObject private var state = CachedItemsState<Model>()
    /// What this view value declares.
    private var request: CachedItemsRequest<Model>
    /// How changes are animated; `nil`: not animated.
    private let animation: Animation?

    /// Declares the collection of `Model` under `key` of `cache`, fetched by `fetch`.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection. A view value
    ///     with another key re-keys the property.
    ///   - cache: the cache to read and store through.
    ///   - policy: whether the first look fetches (as for `watch`).
    ///   - refresh: the events that refetch while the view is shown, besides invalidations.
    ///   - retry: how a failed fetch is tried again.
    ///   - animation: the animation of each change; `nil` for none.
    ///   - fetch: brings the current items, given the cached ones and their validators.
    nonisolated public init(
        _ type: Model.Type, forKey key: String? = nil, in cache: AppCache, policy: LoadPolicy = .staleWhileRevalidate,
        refresh: RefreshTriggers = .default, retry: RetryPolicy = .default, animation: Animation? = nil,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) {
        request = CachedItemsRequest(cache: cache, key: key, policy: policy, refresh: refresh, retry: retry, fetch: fetch)
        self.animation = animation
    }

    /// The items, newest known; empty while none are known (see `$items.items` to tell "none
    /// yet" from "an empty collection").
    public var wrappedValue: [Model] {
        state.items ?? []
    }

    /// The state behind the items: loading, errors, pending changes, refresh and paging.
    public var projectedValue: CachedItemsState<Model> {
        state
    }

    /// Called by SwiftUI before each body: starts the watch the first time, re-keys when the
    /// key changed, and otherwise only hands the newest fetch closure to the running watch.
    public func update() {
        if let animation {
            state.transaction = { body in withAnimation(animation) { body() } }
        } else {
            state.transaction = nil
        }
        state.update(request)
    }
}

extension CachedItems where Model: Identifiable {
    /// Declares a paged collection: `fetch` brings the first page
    /// (``FetchResult/page(_:next:validators:)``), and `$items.loadNextPage()` the next, with
    /// `nextPage` (``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)``).
    ///
    /// ```swift
    /// import SwiftUI
    ///
    /// struct TimelineView: View {
    ///     @CachedItems(Post.self, forKey: "timeline", in: cache, maxCount: 500, nextPage: { cursor in
    ///         let posts = try await api.timeline(maxID: cursor)
    ///         return Page(items: posts, next: posts.last.map { String($0.id) })
    ///     }, fetch: { _ in
    ///         let posts = try await api.timeline()
    ///         return .page(posts, next: posts.last.map { String($0.id) })
    ///     })
    ///     var posts
    ///
    ///     var body: some View {
    ///         List(posts) { Text($0.title) }
    ///         if $posts.hasNextPage {
    ///             ProgressView().task { try? await $posts.loadNextPage() }
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type; its `id` says which items of two pages are the same.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - cache: the cache to read and store through.
    ///   - policy: whether the first look fetches (as for `watch`).
    ///   - refresh: the events that refetch the first page while the view is shown.
    ///   - retry: how a failed fetch is tried again.
    ///   - animation: the animation of each change; `nil` for none.
    ///   - maxCount: the most items the collection keeps; `nil` for no limit.
    ///   - nextPage: fetches the page at a cursor.
    ///   - fetch: brings the first page, given the cached items and their validators.
    nonisolated public init(
        _ type: Model.Type, forKey key: String? = nil, in cache: AppCache, policy: LoadPolicy = .staleWhileRevalidate,
        refresh: RefreshTriggers = .default, retry: RetryPolicy = .default, animation: Animation? = nil, maxCount: Int? = nil,
        nextPage: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) {
        self.init(type, forKey: key, in: cache, policy: policy, refresh: refresh, retry: retry, animation: animation, fetch: fetch)
        request.nextPage = CachedItemsRequest<Model>.pager(maxCount: maxCount, retry: retry, nextPage: nextPage)
    }
}
#endif
